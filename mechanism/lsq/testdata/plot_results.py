"""Plots for docs/results/lsq.md from the CSVs written by results_test.go.

Usage: /usr/bin/python3 plot_results.py <docs/results directory>
"""
import csv
import math
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

out = sys.argv[1] if len(sys.argv) > 1 else "."


def rows(name):
    path = os.path.join(out, name)
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return list(csv.DictReader(f))


STYLE = {
    "np": ("non-private", "k", "-"),
    "output-laplace": ("output (Laplace, δ=0)", "tab:red", "-"),
    "output-gauss": ("output (Gaussian)", "tab:orange", "--"),
    "objective": ("objective (Obj-Gauss)", "tab:blue", "-"),
    "input": ("input", "tab:green", "--"),
}

fig1 = rows("lsq_fig1.csv")
if fig1:
    fig, axes = plt.subplots(2, 2, figsize=(11, 8), sharex=True)
    for r, ds in enumerate(["synthetic", "diabetes"]):
        for c, eps in enumerate(["0.1", "1"]):
            ax = axes[r][c]
            for m, (label, color, ls) in STYLE.items():
                key = "np" if m == "np" else f"{m}/{eps}"
                pts = [(int(x["n"]), float(x["rmse_mean"]), float(x["rmse_sd"]))
                       for x in fig1 if x["dataset"] == ds and x["method"] == key]
                pts = [p for p in pts if not math.isnan(p[1])]
                if not pts:
                    continue
                pts.sort()
                n = [p[0] for p in pts]
                mu = [p[1] for p in pts]
                sd = [p[2] for p in pts]
                ax.plot(n, mu, ls, color=color, label=label, marker="o", ms=3)
                ax.fill_between(n, [max(a - b, 1e-4) for a, b in zip(mu, sd)],
                                [a + b for a, b in zip(mu, sd)], color=color, alpha=0.12)
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.set_title(f"{ds}, ε = {eps}, δ = 0.01")
            ax.set_xlabel("training size n")
            ax.set_ylabel("test RMSE (label scaled to [−1, 1])")
            ax.grid(True, which="both", alpha=0.3)
    axes[0][0].legend(fontsize=8)
    fig.suptitle("Private linear regression: RMSE vs n (mean ± sd over 20 trials)")
    fig.tight_layout()
    fig.savefig(os.path.join(out, "lsq_fig1.png"), dpi=120)
    print("wrote lsq_fig1.png")

pred = rows("lsq_predict.csv")
if pred:
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.5))
    for c, ds in enumerate(["diabetes", "synthetic"]):
        ax = axes[c]
        lams = []
        for x in pred:
            if x["dataset"] == ds and x["lambda"] not in lams:
                lams.append(x["lambda"])
        for lam in lams:
            pts = sorted((float(x["epsilon"]), float(x["rmse_mean"]), float(x["rmse_noise_free"]))
                         for x in pred if x["dataset"] == ds and x["lambda"] == lam)
            eps = [p[0] for p in pts]
            kw = {"lw": 2.5, "color": "k"} if lam == "auto" else {"lw": 1.2}
            ax.plot(eps, [p[1] for p in pts], marker="o", ms=3,
                    label=("λ = auto (mε)^-1/2" if lam == "auto" else f"λ = {lam}"), **kw)
            if lam == "auto":
                ax.plot(eps, [p[2] for p in pts], ":", color="k", label="auto λ, noise-free")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("ε per prediction")
        ax.set_ylabel("test RMSE (label scaled to [−1, 1])")
        ax.set_title(f"DP_LSQ_PREDICT (rbf, exact), {ds}")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "lsq_predict.png"), dpi=120)
    print("wrote lsq_predict.png")
