#!/usr/bin/python3
"""Non-private sklearn baselines for docs/results/svm.md.

Reads the splits written by TestResultsAccuracy (mechanism/svm,
results_test.go): <dir>/<set>_<run>_train.csv and <dir>/<set>_<run>_test.csv,
features then the integer class label, no header. For every split it fits,
on the training part only,

  * LinearSVC:  StandardScaler + LinearSVC() (sklearn defaults: C = 1,
    squared hinge, one-vs-rest for K > 2 classes);
  * LogisticRegression: StandardScaler + LogisticRegression(max_iter=2000)
    (defaults: C = 1, L2, multinomial for K > 2);

and prints one JSON object per (set, run, model) with the test accuracy.
The standardisation uses the training rows' means and variances: these are
non-private reference points, not something dpsql could release.
Usage: svm_baselines.py <dir> <set> <runs>
"""
import json
import sys
import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import LinearSVC

warnings.simplefilter("ignore", ConvergenceWarning)


def main():
    d, name, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])
    for run in range(runs):
        tr = np.loadtxt(f"{d}/{name}_{run}_train.csv", delimiter=",")
        te = np.loadtxt(f"{d}/{name}_{run}_test.csv", delimiter=",")
        x, y, xt, yt = tr[:, :-1], tr[:, -1], te[:, :-1], te[:, -1]
        for model, clf in [("LinearSVC", make_pipeline(StandardScaler(), LinearSVC())),
                           ("LogisticRegression", make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000)))]:
            clf.fit(x, y)
            print(json.dumps({"set": name, "run": run, "model": model,
                              "accuracy": float(np.mean(clf.predict(xt) == yt))}), flush=True)


if __name__ == "__main__":
    main()
