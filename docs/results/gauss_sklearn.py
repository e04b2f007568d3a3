#!/usr/bin/python3
"""Non-private baselines for docs/results/gauss.md.

Usage: /usr/bin/python3 docs/results/gauss_sklearn.py EXPORT_DIR OUT_CSV

EXPORT_DIR holds the splits written by the Go results tests
(<set>_train.csv, <set>_test.csv: raw features then the class index;
<set>_meta.json: the public bounds). Features are mapped to [-1, 1] by the
same public bounds (clipped; the exports have no NULLs) and every model is
fitted on the training split and scored on the test split:
scikit-learn LinearDiscriminantAnalysis(), QuadraticDiscriminantAnalysis
(reg_param=0.1; unregularised QDA is singular on several sets),
GaussianNB(), LogisticRegression(max_iter=5000), and the majority class of
the training split.
"""
import csv
import glob
import json
import os
import sys
import warnings

import numpy as np
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis, QuadraticDiscriminantAnalysis
from sklearn.linear_model import LogisticRegression
from sklearn.naive_bayes import GaussianNB

warnings.filterwarnings("ignore")


def load(path):
    a = np.loadtxt(path, delimiter=",", ndmin=2)
    return a[:, :-1], a[:, -1].astype(int)


def main(src, out):
    rows = [["set", "model", "accuracy"]]
    for meta_path in sorted(glob.glob(os.path.join(src, "*_meta.json"))):
        name = os.path.basename(meta_path)[: -len("_meta.json")]
        meta = json.load(open(meta_path))
        lo, hi = np.array(meta["lo"]), np.array(meta["hi"])
        xtr, ytr = load(os.path.join(src, name + "_train.csv"))
        xte, yte = load(os.path.join(src, name + "_test.csv"))
        u = lambda x: np.clip(2 * (x - lo) / (hi - lo) - 1, -1, 1)
        utr, ute = u(xtr), u(xte)
        models = {
            "sk_lda": LinearDiscriminantAnalysis(),
            "sk_qda": QuadraticDiscriminantAnalysis(reg_param=0.1),
            "sk_gnb": GaussianNB(),
            "sk_logreg": LogisticRegression(max_iter=5000),
        }
        line = [name]
        for key, m in models.items():
            try:
                acc = float(np.mean(m.fit(utr, ytr).predict(ute) == yte))
            except Exception as e:  # report, do not hide
                print(name, key, "failed:", e)
                acc = float("nan")
            rows.append([name, key, "%.5f" % acc])
            line.append("%s %.3f" % (key, acc))
        maj = np.bincount(ytr).argmax()
        acc = float(np.mean(yte == maj))
        rows.append([name, "majority", "%.5f" % acc])
        line.append("majority %.3f" % acc)
        print("  ".join(line))
    with open(out, "w", newline="") as f:
        csv.writer(f).writerows(rows)
    print("wrote", out)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
