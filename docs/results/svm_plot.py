#!/usr/bin/python3
"""Plot docs/results/svm_accuracy.csv (written by TestResultsAccuracy).

One panel per dataset and kernel; for each C the mean ± sd test accuracy of
the private model over the runs against ε (log scale), and the noise-free
accuracy of the same model class as a dashed line.
Usage: svm_plot.py svm_accuracy.csv out.png
"""
import csv
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

acc = defaultdict(list)
clean = defaultdict(dict)
with open(sys.argv[1]) as f:
    for r in csv.DictReader(f):
        key = (r["dataset"], r["kernel"], float(r["C"]))
        acc[key + (float(r["epsilon"]),)].append(float(r["accuracy"]))
        clean[key][int(r["run"])] = float(r["nonprivate"])

panels = sorted({k[:2] for k in clean}, key=lambda p: (p[1], int(p[0].split("=")[-1]) if "=" in p[0] else p[0]))
cols = 2 if len(panels) <= 4 else 4
nrows = (len(panels) + cols - 1) // cols
fig, axes = plt.subplots(nrows, cols, figsize=(4.6 * cols, 3.6 * nrows), squeeze=False)
axes = axes.ravel()
for ax in axes[len(panels):]:
    ax.axis("off")
for ax, (ds, kern) in zip(axes, panels):
    for i, c in enumerate(sorted({k[2] for k in clean if k[:2] == (ds, kern)})):
        eps = sorted({k[3] for k in acc if k[:3] == (ds, kern, c)})
        m = [np.mean(acc[(ds, kern, c, e)]) for e in eps]
        s = [np.std(acc[(ds, kern, c, e)], ddof=1) for e in eps]
        col = f"C{i}"
        ax.errorbar(eps, m, yerr=s, marker="o", ms=3, capsize=2, color=col, label=f"private, C={c:g}")
        ax.axhline(np.mean(list(clean[(ds, kern, c)].values())), color=col, ls="--", lw=1,
                   label=f"non-private, C={c:g}")
    ax.set_xscale("log")
    ax.set_xlabel("ε")
    ax.set_ylabel("test accuracy")
    ax.set_title(f"{ds}, {kern}")
    ax.set_ylim(0, 1)
    ax.grid(alpha=0.3)
axes[0].legend(fontsize=7, loc="lower right")
fig.tight_layout()
fig.savefig(sys.argv[2], dpi=120)
