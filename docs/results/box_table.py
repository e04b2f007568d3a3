#!/usr/bin/env python3
"""Tables of docs/mechanisms/box.md §6 from box_harness.csv (rows of
mechanism/auto/box_harness_test.go: set,mode,n,d,K,eps,delta,candidate,run,accuracy).

    /usr/bin/python3 docs/results/box_table.py docs/results/box_harness.csv
"""
import collections
import csv
import sys

MIN_NEPSQ = 20  # box.MinNEpsQ
# ε_q of box.NewSplit (Share 0.25, 3 quantiles per feature) for (ε, δ, d),
# printed by box.NewSplit for the cells measured.
EPSQ = {
    (0.1, 1e-6): {4: 0.0036574, 10: 0.0023132, 18: 0.0017241, 30: 0.0013355, 40: 0.0011566, 57: 0.00096887, 64: 0.00091436},
    (1.0, 1e-6): {4: 0.031856, 10: 0.020148, 18: 0.015017, 30: 0.011632, 40: 0.010074, 57: 0.0084389, 64: 0.007964},
    (10.0, 1e-6): {4: 0.25325, 10: 0.16017, 18: 0.11938, 30: 0.092474, 40: 0.080085, 57: 0.067088, 64: 0.063313},
}
CANDS = ["lda", "lda/box=1", "logreg", "logreg/box=1"]


def main(paths):
    acc = collections.defaultdict(list)
    fold_n = {}
    for p in paths:
        for r in csv.reader(open(p)):
            if len(r) < 10:
                continue
            s, mode, n, d, k, eps, delta, cand, run, a = r
            # CV folds: one cell per set (fold sizes differ by ≤ 1; the
            # first fold's n is shown).
            name = s.split("_cv")[0]
            if "_cv" in s:
                n = fold_n.setdefault(name, int(n))
            key = (name, mode, int(n), int(d), int(k))
            if cand in ("np_lda", "majority"):
                acc[key + (cand, 0.0, 0.0)].append(float(a))
                continue
            acc[key + (cand, float(eps), float(delta))].append(float(a))
    cells = sorted({k[:5] + k[6:] for k in acc if k[5] in CANDS})
    print("| set | mode | n | ε | n·ε_q | rule | np LDA | lda | lda + box | logreg | logreg + box |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for c in cells:
        s, mode, n, d, k, eps, delta = c
        npv = acc.get((s, mode, n, d, k, "np_lda", 0.0, 0.0))
        row = []
        for cand in CANDS:
            v = acc.get((s, mode, n, d, k, cand, eps, delta))
            row.append("%.3f" % (sum(v) / len(v)) if v else "—")
        eq = EPSQ.get((eps, delta), {}).get(d)
        nn = n
        ne = "%.0f" % (nn * eq) if (eq and nn) else "—"
        rule = ("private" if nn * eq >= MIN_NEPSQ else "public") if (eq and nn) else "—"
        print("| %s | %s | %s | %g | %s | %s | %s | %s |" % (s, mode, n, eps, ne, rule,
              "%.3f" % (sum(npv) / len(npv)) if npv else "—", " | ".join(row)))


if __name__ == "__main__":
    main(sys.argv[1:])
