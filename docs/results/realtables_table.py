"""Tables of docs/results/realtables.md (issue 28) from a dpsql-accuracy run.

    /usr/bin/python3 docs/results/realtables_table.py /tmp/acc28/out/accuracy.csv docs/results/accuracy_baselines.csv

Per classification set and ε: the mean test accuracy of the default call
DP_TRAIN(t, ε) (kind auto, with issue 28's prior rule), the kinds it
released, the training-majority constant's accuracy (accuracy_baselines.csv,
same split), the check "mean ≥ majority − 0.01", and the balanced accuracy
of the default and of objective=balanced.
"""
import collections
import csv
import math
import sys

rows = list(csv.DictReader(open(sys.argv[1])))
base = {}
for r in csv.DictReader(open(sys.argv[2])):
    base[(r["set"], r["model"])] = float(r["value"])

acc = collections.defaultdict(list)
bal = collections.defaultdict(list)
kinds = collections.defaultdict(collections.Counter)
meta = {}
for r in rows:
    if r["error"]:
        continue
    key = (r["set"], float(r["eps"]), r["kind"])
    meta[r["set"]] = (int(r["n"]), int(r["d"]), int(r["k"]))
    if r["metric"] == "accuracy":
        acc[key].append(float(r["value"]))
        kinds[key][r["model_kind"]] += 1
    elif r["metric"] == "balanced_accuracy":
        bal[key].append(float(r["value"]))


def ms(v):
    if not v:
        return "–"
    m = sum(v) / len(v)
    sd = math.sqrt(sum((x - m) ** 2 for x in v) / (len(v) - 1)) if len(v) > 1 else 0
    return "%.3f ± %.3f" % (m, sd)


def mean(v):
    return sum(v) / len(v) if v else float("nan")


sets = sorted({k[0] for k in acc}, key=lambda s: (s.startswith("syn"), meta[s][0], s))
eps_list = sorted({k[1] for k in acc})
print("| set | n | d | K | ε | default accuracy | released | majority | ≥ majority − 1 pt | default bal. acc. | balanced bal. acc. |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
npass = ntot = 0
for s in sets:
    n, d, k = meta[s]
    for e in eps_list:
        a = acc[(s, e, "auto")]
        if not a:
            continue
        maj = base.get((s, "majority"))
        ok = maj is not None and mean(a) >= maj - 0.01
        ntot += 1
        npass += ok
        rel = ", ".join("%s %d" % (kk, c) for kk, c in kinds[(s, e, "auto")].most_common())
        print("| %s | %d | %d | %d | %g | %s | %s | %s | %s | %s | %s |" % (
            s, n, d, k, e, ms(a), rel, "%.3f" % maj if maj is not None else "–",
            "**pass**" if ok else "fail (%.3f)" % (mean(a) - maj), ms(bal[(s, e, "auto")]), ms(bal[(s, e, "auto_balanced")])))
print()
print("%d of %d cells: mean accuracy ≥ majority − 1 point." % (npass, ntot))
