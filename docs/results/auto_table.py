#!/usr/bin/python3
"""Summarise the auto harness CSV (mechanism/auto/harness_test.go).

Usage: /usr/bin/python3 docs/results/auto_table.py auto_harness.csv [eps [delta [set-prefix]]]
Columns: set,n,d,K,eps,delta,cand,run,acc. Prints one markdown row per
(set, n, δ): every candidate's mean ± sd and its gap to the non-private LDA
reference (np_lda, same training rows), plus the majority class.
"""
import csv
import statistics
import sys
from collections import defaultdict

rows = list(csv.reader(open(sys.argv[1])))
eps_want = sys.argv[2] if len(sys.argv) > 2 else None
delta_want = sys.argv[3] if len(sys.argv) > 3 else None
prefix = sys.argv[4] if len(sys.argv) > 4 else ""
acc = defaultdict(list)
base = {}
cands, deltas = [], []
for r in rows:
    if not r or r[0] == "set":
        continue
    s, n, d, k, eps, delta, cand, run, a = r
    a = float(a)
    if not s.startswith(prefix):
        continue
    if cand in ("np_lda", "majority"):
        base[(s, int(n), cand)] = a
        continue
    if (eps_want and eps != eps_want) or (delta_want and delta != delta_want):
        continue
    acc[(s, int(n), delta, cand)].append(a)
    if cand not in cands:
        cands.append(cand)
    if delta not in deltas:
        deltas.append(delta)

keys = sorted({(s, n) for (s, n, _, _) in acc}, key=lambda x: (x[0].split("_cv")[0], x[1], x[0]))
print("| set | n | δ | np LDA | majority | " + " | ".join(cands) + " |")
print("|---|---|---|---|---|" + "---|" * len(cands))
for s, n in keys:
    for delta in deltas:
        np_ = base.get((s, n, "np_lda"), float("nan"))
        cells = []
        for c in cands:
            v = acc.get((s, n, delta, c))
            if not v:
                cells.append("")
                continue
            m = statistics.mean(v)
            sd = statistics.stdev(v) if len(v) > 1 else 0
            cells.append(f"{m:.3f} ± {sd:.3f} ({m - np_:+.3f})")
        print(f"| {s} | {n} | {delta} | {np_:.3f} | {base.get((s, n, 'majority'), float('nan')):.3f} | " + " | ".join(cells) + " |")
