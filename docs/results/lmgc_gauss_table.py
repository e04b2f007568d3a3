#!/usr/bin/env python3
"""Markdown table of docs/results/lmgc_gauss_*.csv (pure δ = 0 vs Gaussian δ > 0 on the
same split), for docs/results/lmgc.md. Run from the repository root with /usr/bin/python3."""
import csv, glob, os

ref = {r["dataset"]: r for r in csv.DictReader(open("docs/results/lmgc_lda.csv"))}
ref["syn10000x10_20"] = {"lda": "0.7785", "majority": "0.061"}  # sklearn LDA on the same split (lmgc.md)
rows = {}
order = []
for f in sorted(glob.glob("docs/results/lmgc_gauss_*.csv")):
    for r in csv.DictReader(open(f)):
        k = (r["dataset"], float(r["epsilon"]))
        if k not in rows:
            rows[k] = {}
            order.append(k)
        rows[k][float(r["dp_delta"])] = r
print("| set (n_train × d, C) | ε | pure δ = 0 (before) | Gaussian δ = 10⁻⁶ (after) | noise off at Δ_after | Δ before → after | T before → after | median s before → after | LDA | majority |")
print("|---|---|---|---|---|---|---|---|---|---|")
for k in order:
    name, eps = k
    p, g = rows[k].get(0.0), rows[k].get(1e-6)
    if p is None or g is None:
        continue
    acc = lambda r: "%.3f ± %.3f" % (float(r["mean"]), float(r["sd"]))
    rf = ref.get(name, {})
    print("| %s (%s × %s, %s) | %g | %s | **%s** | %.3f | %.3g → %.3g | %s → %s | %.2f → %.2f | %s | %s |" % (
        name, g["n_train"], g["d"], g["classes"], eps, acc(p), acc(g), float(g["noise_off_same_delta"]),
        float(p["delta"]), float(g["delta"]), p["iterations"], g["iterations"],
        float(p["median_seconds"]), float(g["median_seconds"]), rf.get("lda", "—"), rf.get("majority", "—")))
