#!/usr/bin/python3
"""Baselines and figure for docs/results/lmgc.md.

Reads lmgc_accuracy.csv and lmgc_reference.csv written by
    go test -tags results -run Results ./mechanism/lmgc/ -v -timeout 2h
computes scikit-learn QDA and LinearSVC on the same deterministic split
(test rows: index % 3 == 0) with the same public bounds, writes
lmgc_sklearn.csv and plots lmgc_accuracy.png. Needs Debian's python3-sklearn
and python3-matplotlib (/usr/bin/python3).
"""
import csv
import os
import warnings

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from sklearn.discriminant_analysis import QuadraticDiscriminantAnalysis  # noqa: E402
from sklearn.exceptions import ConvergenceWarning  # noqa: E402
from sklearn.svm import LinearSVC  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "..", "testdata")

# The public bounds of mechanism/lmgc/data_test.go (documented domain
# ranges, never computed from the rows).
BOUNDS = {
    "iris": ([4, 2, 1, 0], [8, 4.5, 7, 2.5]),
    "wine": (
        [11, 0.5, 1, 10, 70, 0.9, 0.3, 0.1, 0.4, 1, 0.4, 1.2, 250],
        [15, 6, 3.5, 30, 165, 4, 5.1, 0.7, 3.6, 13, 1.8, 4, 1700],
    ),
    "digits": ([0] * 64, [16] * 64),
}
QDA_REG = 0.1  # QDA is singular on digits (constant pixels) without it


def load(name):
    with open(os.path.join(DATA, name + ".csv")) as f:
        rows = list(csv.reader(f))[1:]
    x = np.array([[float(v) for v in r[:-1]] for r in rows])
    y = np.array([r[-1] for r in rows])
    lo, hi = (np.array(b, dtype=float) for b in BOUNDS[name])
    z = np.clip(2 * (x - lo) / (hi - lo) - 1, -1, 1)
    test = np.arange(len(y)) % 3 == 0
    return z[~test], y[~test], z[test], y[test]


def baselines():
    out = []
    for name in ("iris", "wine", "digits"):
        xtr, ytr, xte, yte = load(name)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            warnings.simplefilter("ignore", UserWarning)
            qda = QuadraticDiscriminantAnalysis(reg_param=QDA_REG).fit(xtr, ytr)
            svc = LinearSVC(C=1.0, max_iter=20000).fit(xtr, ytr)
        out.append((name, "sklearn_qda", float(np.mean(qda.predict(xte) == yte))))
        out.append((name, "sklearn_linearsvc", float(np.mean(svc.predict(xte) == yte))))
    with open(os.path.join(HERE, "lmgc_sklearn.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["dataset", "method", "accuracy"])
        w.writerows(out)
    return out


def read(name):
    with open(os.path.join(HERE, name)) as f:
        return list(csv.DictReader(f))


def main():
    sk = baselines()
    acc = read("lmgc_accuracy.csv")
    ref = read("lmgc_reference.csv")
    lines = {(r["dataset"], r["method"]): float(r["accuracy"]) for r in ref}
    lines.update({(d, m): a for d, m, a in sk})
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.4))
    styles = {
        "lmgc_nonprivate": ("non-private LMGC (Δ=1e-4)", "k", "-"),
        "sklearn_qda": (f"sklearn QDA (reg={QDA_REG})", "tab:green", "--"),
        "sklearn_linearsvc": ("sklearn LinearSVC", "tab:purple", ":"),
    }
    for ax, name in zip(axes, ("iris", "wine", "digits")):
        rows = [r for r in acc if r["dataset"] == name]
        eps = np.array([float(r["epsilon"]) for r in rows])
        mean = np.array([float(r["mean"]) for r in rows])
        sd = np.array([float(r["sd"]) for r in rows])
        off = np.array([float(r["noise_off_same_delta"]) for r in rows])
        ax.errorbar(eps, mean, yerr=sd, marker="o", capsize=3, color="tab:red",
                    label=f"DP LMGC (mean ± sd, {rows[0]['runs']} runs)")
        ax.plot(eps, off, marker="x", color="tab:orange", linestyle="--",
                label="noise off, same Δ(ε) (bias of Δ)")
        for key, (label, color, ls) in styles.items():
            if (name, key) in lines:
                ax.axhline(lines[(name, key)], color=color, linestyle=ls, label=label)
        nclass = {"iris": 3, "wine": 3, "digits": 10}[name]
        ax.axhline(1 / nclass, color="grey", linewidth=0.8, label="chance")
        ax.set_xscale("log")
        ax.set_xlabel("ε requested (= charged)")
        ax.set_ylabel("test accuracy")
        ax.set_ylim(0, 1.02)
        ax.set_title(name)
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    fig.savefig(os.path.join(HERE, "lmgc_accuracy.png"), dpi=110)
    for d, m, a in sk:
        print(f"{d:7s} {m:18s} {a:.3f}")


if __name__ == "__main__":
    main()
