#!/usr/bin/python3
"""Independent reference for dpsql's SVM solver (mechanism/svm, noise off).

Solves the same problems as svm.Trainer.fit on testdata/breast_cancer.csv,

    min_w P(w) = ½‖w‖² + (C/n)·Σ ℓ(yᵢ⟨w, xᵢ⟩),

with two solvers that share no code with dpsql:

* loss "logistic": sklearn's LogisticRegression (lbfgs, no separate
  intercept, C_sklearn = C/n, tol 1e-12), whose objective is exactly P;
* loss "huber" (Huber-smoothed hinge, half-width h = 0.5): scipy's L-BFGS-B
  on P with its analytic gradient.

Features are built exactly as the Go code builds them: public bounds lo = 0,
hi = HI (the constants of data_test.go), map to [−1, 1] and clip, append the
constant intercept 1, divide by √F, multiply by 1 − 2⁻²² and round to
float32. Split: rows with index % 5 == 0 are the test set. Labels 0 ↦ −1,
1 ↦ +1.

Prints one JSON object per (loss, C) on stdout: {"loss", "C", "n",
"objective", "accuracy", "w"}.
Usage: svm_sklearn_reference.py [path/to/breast_cancer.csv] [C ...]
"""
import json
import sys

import numpy as np
from scipy.optimize import minimize
from sklearn.linear_model import LogisticRegression

HI = [50, 50, 200, 5000, 0.2, 0.5, 0.5, 0.25, 0.5, 0.1,
      5, 5, 25, 1000, 0.05, 0.2, 0.5, 0.1, 0.1, 0.05,
      50, 50, 500, 5000, 0.25, 2, 2, 0.5, 1, 0.25]
H = 0.5


def features(raw):
    lo = np.zeros(len(HI))
    hi = np.array(HI, dtype=np.float64)
    z = np.clip(2 * (raw - lo) / (hi - lo) - 1, -1, 1)
    f = raw.shape[1] + 1
    inv = 1 / np.sqrt(f)
    x = np.hstack([z * inv, np.full((raw.shape[0], 1), inv)])
    return (x * (1 - 2.0 ** -22)).astype(np.float32).astype(np.float64)


def huber(m):
    t = np.clip((1 + H - m) / (2 * H), 0, 1)
    val = np.where(m >= 1 + H, 0.0, np.where(m <= 1 - H, 1 - m, (1 + H - m) ** 2 / (4 * H)))
    return val, -t


def logistic(m):
    return np.logaddexp(0, -m), -1 / (1 + np.exp(m))


def objective(w, x, y, c, loss):
    m = y * (x @ w)
    val, d = loss(m)
    return 0.5 * w @ w + c * val.sum(), w + c * (x.T @ (d * y))


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else "testdata/breast_cancer.csv"
    cs = [float(c) for c in sys.argv[2:]] or [10.0, 100.0]
    data = np.loadtxt(path, delimiter=",", skiprows=1)
    x, y = features(data[:, :-1]), np.where(data[:, -1] > 0.5, 1.0, -1.0)
    test = np.arange(len(y)) % 5 == 0
    xtr, ytr, xte, yte = x[~test], y[~test], x[test], y[test]
    n = len(ytr)
    for c in cs:
        clf = LogisticRegression(C=c / n, fit_intercept=False, tol=1e-12, max_iter=100000)
        clf.fit(xtr, ytr)
        fits = {"logistic": clf.coef_.ravel()}
        res = minimize(objective, np.zeros(x.shape[1]), args=(xtr, ytr, c / n, huber),
                       jac=True, method="L-BFGS-B",
                       options={"gtol": 1e-13, "ftol": 1e-16, "maxiter": 100000, "maxcor": 50})
        fits["huber"] = res.x
        for loss, w in fits.items():
            fn = logistic if loss == "logistic" else huber
            pred = np.where(xte @ w >= 0, 1, -1)
            print(json.dumps({"loss": loss, "C": c, "n": n,
                              "objective": float(objective(w, xtr, ytr, c / n, fn)[0]),
                              "accuracy": float(np.mean(pred == yte)),
                              "w": [float(v) for v in w]}))


if __name__ == "__main__":
    main()
