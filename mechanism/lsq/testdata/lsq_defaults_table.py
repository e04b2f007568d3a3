#!/usr/bin/python3
"""Summarise docs/results/lsq_defaults.csv (TestResultsDefaults) as the
markdown tables of docs/results/lsq_defaults.md. Run from the repository root:

    /usr/bin/python3 mechanism/lsq/testdata/lsq_defaults_table.py
"""
import collections
import csv
import math

rows = list(csv.DictReader(open("docs/results/lsq_defaults.csv")))
S = collections.defaultdict(dict)
for r in rows:
    S[(r["dataset"], int(r["d"]), int(r["n"]), float(r["epsilon"]))][r["candidate"]] = (
        float(r["rmse_mean"]), float(r["rmse_sd"]))
REF = ("ols", "mean", "midpoint")


def best(v, prefix=""):
    c = [(x[0], k) for k, x in v.items() if k not in REF and k.startswith(prefix) and not math.isnan(x[0])]
    return min(c) if c else (float("nan"), "")


def f(x):
    return "%.3f ± %.3f" % x if x else "—"


print("| data | F | n | ε | OLS | mean | old default (δ = 0) | default δ = 0 | default δ = 10⁻⁶ | best candidate (δ = 10⁻⁶) |")
print("|---|---|---|---|---|---|---|---|---|---|")
regret = collections.defaultdict(list)
for k in sorted(S, key=lambda k: (k[0], k[1], k[2], k[3])):
    v = S[k]
    b, bn = best(v)
    bl, _ = best(v, "output-laplace")
    print("| %s | %d | %d | %g | %.3f | %.3f | %s | %s | %s | %.3f (%s) |" % (
        k[0], k[1] + 1, k[2], k[3], v["ols"][0], v["mean"][0], f(v.get("old-default/laplace")),
        f(v.get("rule-laplace/auto")), f(v.get("rule-gauss/auto")), b, bn))
    for c in v:
        if c.startswith("rule-gauss") and not math.isnan(v[c][0]):
            regret[c].append(v[c][0] / b)
        if c.startswith("rule-laplace") or c == "old-default/laplace":
            regret[c].append(v[c][0] / bl)
print()
print("| candidate | mean RMSE / best | worst |")
print("|---|---|---|")
for c, r in sorted(regret.items()):
    print("| %s | %.3f | %.3f |" % (c, sum(r) / len(r), max(r)))
