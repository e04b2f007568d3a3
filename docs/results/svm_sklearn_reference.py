#!/usr/bin/python3
"""Independent reference for dpsql's SVM solver (mechanism/svm, noise off).

Solves the same problem as svm.Trainer.fit on testdata/breast_cancer.csv:

    min_w ½‖w‖² + (C/n)·Σ max(0, 1 − yᵢ⟨w, xᵢ⟩)

with sklearn's LinearSVC (LIBLINEAR dual coordinate descent, hinge loss,
no separate intercept, C_sklearn = C/n), on features built exactly as the Go
code builds them: public bounds lo = 0, hi = BOUNDS (the constants of
data_test.go), map to [−1, 1] and clip, append the constant intercept 1,
divide by √F, multiply by 1 − 2⁻²² and round to float32. Split: rows with
index % 5 == 0 are the test set. Labels 0 ↦ −1, 1 ↦ +1.

Prints one JSON object per C on stdout: {"C", "n", "accuracy", "w"}.
Usage: svm_sklearn_reference.py [path/to/breast_cancer.csv] [C ...]
"""
import json
import sys

import numpy as np
from sklearn.svm import LinearSVC

HI = [50, 50, 200, 5000, 0.2, 0.5, 0.5, 0.25, 0.5, 0.1,
      5, 5, 25, 1000, 0.05, 0.2, 0.5, 0.1, 0.1, 0.05,
      50, 50, 500, 5000, 0.25, 2, 2, 0.5, 1, 0.25]


def features(raw):
    lo = np.zeros(len(HI))
    hi = np.array(HI, dtype=np.float64)
    z = np.clip(2 * (raw - lo) / (hi - lo) - 1, -1, 1)
    f = raw.shape[1] + 1
    inv = 1 / np.sqrt(f)
    x = np.hstack([z * inv, np.full((raw.shape[0], 1), inv)])
    return (x * (1 - 2.0 ** -22)).astype(np.float32).astype(np.float64)


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else "testdata/breast_cancer.csv"
    cs = [float(c) for c in sys.argv[2:]] or [100.0, 1000.0]
    data = np.loadtxt(path, delimiter=",", skiprows=1)
    x, y = features(data[:, :-1]), np.where(data[:, -1] > 0.5, 1, -1)
    test = np.arange(len(y)) % 5 == 0
    xtr, ytr, xte, yte = x[~test], y[~test], x[test], y[test]
    n = len(ytr)
    for c in cs:
        clf = LinearSVC(C=c / n, loss="hinge", fit_intercept=False, dual=True,
                        tol=1e-12, max_iter=10_000_000)
        clf.fit(xtr, ytr)
        w = clf.coef_.ravel()
        pred = np.where(xte @ w >= 0, 1, -1)
        print(json.dumps({"C": c, "n": n, "accuracy": float(np.mean(pred == yte)),
                          "w": [float(v) for v in w]}))


if __name__ == "__main__":
    main()
