#!/usr/bin/python3
"""Markdown accuracy table for docs/results/lmgc.md from lmgc_shared_*.csv
(current release), lmgc_shared_before.csv (previous calibration, same split)
and lmgc_lda.csv (sklearn LDA, majority)."""
import csv
import glob
import os

HERE = os.path.dirname(os.path.abspath(__file__))
SETS = ["iris", "wine", "breast_cancer", "vehicle", "vowel", "digits", "dna"]
EPS = ["0.1", "1", "10", "10000"]


def rows(path):
    with open(path) as f:
        return list(csv.DictReader(f))


now, before = {}, {}
for p in sorted(glob.glob(os.path.join(HERE, "lmgc_shared_*.csv"))):
    target = before if p.endswith("_before.csv") else now
    for r in rows(p):
        target[(r["dataset"], "%g" % float(r["epsilon"]))] = r
lda = {r["dataset"]: r for r in rows(os.path.join(HERE, "lmgc_lda.csv"))}


def cell(d, s, e):
    r = d.get((s, e))
    if r is None:
        return "—"
    sd = "" if r["sd"] in ("", "NaN") else " ± %.2f" % float(r["sd"])
    return "%.3f%s" % (float(r["mean"]), sd)


print("| set (n_train × d, C) | " + " | ".join("ε = %s" % ("10⁴" if e == "10000" else e) for e in EPS)
      + " | noise off at Δ(10⁴) | sklearn LDA | majority |")
print("|---|" + "---|" * (len(EPS) + 3))
for s in SETS:
    any_r = next((r for (k, _), r in now.items() if k == s), None)
    if any_r is None:
        continue
    shape = "%s × %s, %s" % (any_r["n_train"], any_r["d"], any_r["classes"])
    cells = []
    for e in EPS:
        c = cell(now, s, e)
        if (s, e) in before:
            c += " (before %s)" % cell(before, s, e)
        cells.append(c)
    off = now.get((s, "10000"))
    print("| %s (%s) | %s | %s | %s | %s |" % (s, shape, " | ".join(cells),
          "%.3f" % float(off["noise_off_same_delta"]) if off else "—",
          lda[s]["lda"], lda[s]["majority"]))
print()
print("| set | " + " | ".join("ε = %s: rel. disp. (Δ, T)" % ("10⁴" if e == "10000" else e) for e in EPS) + " |")
print("|---|" + "---|" * len(EPS))
for s in SETS:
    if not any(k == s for (k, _) in now):
        continue
    cs = []
    for e in EPS:
        r = now.get((s, e))
        cs.append("—" if r is None else "%.3g (%.2g, %s)" % (float(r["rel_displacement"]), float(r["delta"]), r["iterations"]))
    print("| %s | %s |" % (s, " | ".join(cs)))
