#!/usr/bin/python3
"""Summarise the gauss results: docs/results/gauss_summary.csv and the
markdown tables of docs/results/gauss.md.

Usage: /usr/bin/python3 docs/results/gauss_table.py
Reads gauss_accuracy.csv, gauss_synthetic.csv (Go) and gauss_sklearn.csv
(gauss_sklearn.py) next to this script.
"""
import csv
import math
import os
from collections import defaultdict

HERE = os.path.dirname(os.path.abspath(__file__))
KINDS = ["lda", "qda", "gnb"]
EPS = ["0.1", "1", "10"]
BASE = ["sk_lda", "sk_qda", "sk_gnb", "sk_logreg", "majority"]


def read(name):
    with open(os.path.join(HERE, name)) as f:
        return list(csv.DictReader(f))


def stats(v):
    m = sum(v) / len(v)
    sd = math.sqrt(sum((x - m) ** 2 for x in v) / (len(v) - 1)) if len(v) > 1 else 0.0
    return m, sd


def main():
    runs = defaultdict(list)
    order = []
    for name in ["gauss_accuracy.csv", "gauss_synthetic.csv"]:
        for r in read(name):
            key = (r["set"], r["kind"], r["epsilon"])
            runs[key].append(float(r["accuracy"]))
            if r["set"] not in order:
                order.append(r["set"])
    base = {(r["set"], r["model"]): float(r["accuracy"]) for r in read("gauss_sklearn.csv")}
    out = [["set", "kind", "epsilon", "runs", "mean", "sd"] + BASE + ["best_linear"]]
    for s in order:
        best_lin = max(base.get((s, "sk_lda"), float("nan")), base.get((s, "sk_logreg"), float("nan")))
        for k in KINDS:
            for e in EPS:
                v = runs[(s, k, e)]
                m, sd = stats(v)
                out.append([s, k, e, len(v), "%.4f" % m, "%.4f" % sd] + ["%.4f" % base.get((s, b), float("nan")) for b in BASE] + ["%.4f" % best_lin])
    with open(os.path.join(HERE, "gauss_summary.csv"), "w", newline="") as f:
        csv.writer(f).writerows(out)

    def table(sets, eps_list):
        head = "| set | " + " | ".join("%s ε=%s" % (k, e) for e in eps_list for k in KINDS) + " | sk LDA | sk QDA | sk GNB | sk LogReg | majority | gap ε=1 |"
        print(head)
        print("|" + "---|" * (head.count("|") - 1))
        for s in sets:
            cells = []
            for e in eps_list:
                for k in KINDS:
                    m, sd = stats(runs[(s, k, e)])
                    cells.append("%.3f ± %.3f" % (m, sd))
            b = [base.get((s, x), float("nan")) for x in BASE]
            best_lin = max(b[0], b[3])
            best_priv = max(stats(runs[(s, k, "1")])[0] for k in KINDS)
            print("| %s | %s | %s | %+.3f |" % (s, " | ".join(cells), " | ".join("%.3f" % x for x in b), best_priv - best_lin))

    real = [s for s in order if not s.startswith("syn_")]
    syn = [s for s in order if s.startswith("syn_")]
    print("### Shared data sets, ε = 1\n")
    table(real, ["1"])
    print("\n### Shared data sets, ε = 0.1 and 10\n")
    table(real, ["0.1", "10"])
    print("\n### Synthetic, ε = 1\n")
    table(syn, ["1"])
    print("\n### Synthetic, ε = 0.1 and 10\n")
    table(syn, ["0.1", "10"])


if __name__ == "__main__":
    main()
