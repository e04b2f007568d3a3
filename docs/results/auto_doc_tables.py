#!/usr/bin/python3
"""Tables 1–3 of docs/mechanisms/auto.md from docs/results/auto_harness.csv.

Usage: /usr/bin/python3 docs/results/auto_doc_tables.py docs/results/auto_harness.csv
`logreg_old` is logreg before this revision (T = 100, HorizonScale 15);
`logreg` the current default. "auto" is the kind the rule picks (lda when
lda's noise edge E ≤ 0.01: here only d = 10, n = 10⁵).
"""
import csv
import statistics as st
import sys
from collections import defaultdict

acc, base = defaultdict(list), {}
for r in csv.reader(open(sys.argv[1])):
    if not r or r[0] == "set":
        continue
    s, n, d, k, eps, delta, cand, run, a = r
    if cand in ("np_lda", "majority"):
        base[(s, int(n), cand)] = float(a)
    elif eps == "1":
        acc[(s, int(n), delta, cand)].append(float(a))


def cell(v):
    return f"{st.mean(v):.3f} ± {st.stdev(v) if len(v) > 1 else 0:.3f}" if v else "—"


def auto_kind(s, n, delta):
    if delta == "0":
        return "lda"
    return "lda" if s.startswith("syn_d10") and n >= 100000 else "logreg"


syn = sorted({(s, n) for (s, n, _, _) in acc if s.startswith("syn")}, key=lambda x: (int(x[0].split("_d")[1].split("_")[0]), int(x[0].split("_K")[1]), x[1]))
print("Table 1 (δ = 1e-6)\n")
print("| set | n | np LDA | lda | logreg (old: T = 100, c = 15) | logreg (now) | auto picks | auto − np |")
print("|---|---|---|---|---|---|---|---|")
for s, n in syn:
    np_ = base[(s, n, "np_lda")]
    a = auto_kind(s, n, "1e-06")
    v = acc.get((s, n, "1e-06", a))
    gap = f"{st.mean(v) - np_:+.3f}" if v else "—"
    print(f"| {s} | {n} | {np_:.3f} | {cell(acc.get((s, n, '1e-06', 'lda')))} | {cell(acc.get((s, n, '1e-06', 'logreg_old')))} | {cell(acc.get((s, n, '1e-06', 'logreg')))} | {a} | {gap} |")

print("\nTable 2 (δ = 1e-6, mean over the 4 folds of the per-fold means)\n")
print("| set | n (fold train) | d | K | np LDA | majority | lda | logreg (old) | logreg (now) | folds logreg (now) ≥ lda |")
print("|---|---|---|---|---|---|---|---|---|---|")
sets = sorted({s.split("_cv")[0] for (s, _, _, _) in acc if "_cv" in s})
dims = {}
for r in csv.reader(open(sys.argv[1])):
    if r and "_cv" in r[0]:
        dims[r[0].split("_cv")[0]] = (r[2], r[3])
for name in sets:
    folds = sorted({(s, n) for (s, n, _, _) in acc if s.startswith(name + "_cv")})
    def fm(c):
        ms = [st.mean(acc[(s, n, "1e-06", c)]) for s, n in folds if acc.get((s, n, "1e-06", c))]
        return (f"{st.mean(ms):.3f}" + ("" if len(ms) == len(folds) else f" ({len(ms)} folds)")) if ms else "—"
    wins = sum(1 for s, n in folds if acc.get((s, n, "1e-06", "logreg")) and acc.get((s, n, "1e-06", "lda"))
               and st.mean(acc[(s, n, "1e-06", "logreg")]) >= st.mean(acc[(s, n, "1e-06", "lda")]))
    npm = st.mean(base[(s, n, "np_lda")] for s, n in folds)
    maj = st.mean(base[(s, n, "majority")] for s, n in folds)
    d, k = dims[name]
    print(f"| {name} | {folds[0][1]} | {d} | {k} | {npm:.3f} | {maj:.3f} | {fm('lda')} | {fm('logreg_old')} | {fm('logreg')} | {wins}/{len(folds)} |")

print("\nTable 3 (δ = 0)\n")
cands = ["lda", "logreg_old", "lda/ms=0.5", "lda/ms=0.65", "lda/ms=0.8", "qda"]
print("| set | n | np LDA | " + " | ".join(c.replace("logreg_old", "logreg (T = 1)") for c in cands) + " |")
print("|---|---|---|" + "---|" * len(cands))
for s, n in syn:
    if not any(acc.get((s, n, "0", c)) for c in cands):
        continue
    print(f"| {s} | {n} | {base[(s, n, 'np_lda')]:.3f} | " + " | ".join(cell(acc.get((s, n, "0", c))) for c in cands) + " |")
