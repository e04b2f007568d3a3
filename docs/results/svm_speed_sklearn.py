#!/usr/bin/python3
"""sklearn side of the SVM speed comparison in docs/results/svm.md.

Reads the synthetic rows written by TestResultsSpeed (features in [-1, 1],
last column the 0/1 label) and times, three times each, RBFSampler
(n_components=512, gamma=1/d: the same kernel as dpsql's rbf with gamma = 1
on inputs scaled by 1/sqrt(d)) followed by
  (a) LinearSVC() with sklearn's defaults (C = 1, squared hinge), and
  (b) LinearSVC(loss="hinge") (C = 1: the problem dpsql solves with C = n).
Loading the CSV is not timed. Prints medians and test accuracy.
Usage: svm_speed_sklearn.py train.csv test.csv
"""
import sys
import time
import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.kernel_approximation import RBFSampler
from sklearn.svm import LinearSVC

warnings.simplefilter("ignore", ConvergenceWarning)
tr = np.loadtxt(sys.argv[1], delimiter=",")
te = np.loadtxt(sys.argv[2], delimiter=",")
x, y, xt, yt = tr[:, :-1], tr[:, -1], te[:, :-1], te[:, -1]
d = x.shape[1]
for name, make in [("LinearSVC() defaults (C=1, squared hinge)", lambda: LinearSVC()),
                   ("LinearSVC(loss='hinge') C=1", lambda: LinearSVC(loss="hinge"))]:
    secs, accs, iters = [], [], []
    for rep in range(3):
        t0 = time.perf_counter()
        rff = RBFSampler(gamma=1.0 / d, n_components=512, random_state=rep)
        z = rff.fit_transform(x)
        clf = make().fit(z, y)
        secs.append(time.perf_counter() - t0)
        accs.append(clf.score(rff.transform(xt), yt))
        iters.append(int(clf.n_iter_))
    print(f"RBFSampler(512) + {name}: {np.median(secs):.2f} s median of "
          f"{[round(s, 2) for s in secs]}; test accuracy {np.median(accs):.4f}; "
          f"liblinear iterations {iters}")
