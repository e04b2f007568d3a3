#!/usr/bin/python3
"""sklearn LinearDiscriminantAnalysis on the shared-set split of docs/results/lmgc.md.

Same data, public bounds and split as mechanism/lmgc/shared_test.go: features
mapped to [-1, 1] by the declared bounds and clipped; test rows index % 5 == 0.
Writes docs/results/lmgc_lda.csv. Needs Debian's python3-sklearn (/usr/bin/python3).
"""
import csv
import json
import os

import numpy as np
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
SHARED = os.environ.get("LMGC_DATA", os.path.join(ROOT, "..", "shared", "data"))
SETS = ["iris", "wine", "breast_cancer", "vehicle", "vowel", "digits", "dna"]
VEHICLE_HI = [150, 100, 150, 400, 200, 100, 300, 100, 50, 250, 400, 1200, 300, 200, 50, 50, 250, 250]


def load(name):
    cat = json.load(open(os.path.join(ROOT, "testdata", "demo_catalog.json")))
    incat = name in cat and cat[name].get("label")
    path = os.path.join(ROOT, "testdata", name + ".csv") if incat else os.path.join(SHARED, name + ".csv")
    with open(path) as f:
        rows = list(csv.reader(f))
    head, rows = rows[0][:-1], rows[1:]
    lo, hi = [], []
    for j, feat in enumerate(head):
        if incat:
            a, b = cat[name]["bounds"][feat]
        elif name == "dna":
            a, b = 0, 1
        elif name == "vowel":
            a, b = (0, 14) if feat == "v1" else (-6, 6)
        else:
            a, b = 0, VEHICLE_HI[j]
        lo.append(a)
        hi.append(b)
    x = np.array([[float(v) for v in r[:-1]] for r in rows])
    y = np.array([r[-1] for r in rows])
    lo, hi = np.array(lo, float), np.array(hi, float)
    z = np.clip(2 * (x - lo) / (hi - lo) - 1, -1, 1)
    test = np.arange(len(y)) % 5 == 0
    return z[~test], y[~test], z[test], y[test]


def main():
    out = [("dataset", "n_train", "n_test", "lda", "majority")]
    for name in SETS:
        xtr, ytr, xte, yte = load(name)
        lda = LinearDiscriminantAnalysis().fit(xtr, ytr)
        vals, counts = np.unique(ytr, return_counts=True)
        maj = vals[np.argmax(counts)]
        out.append((name, len(ytr), len(yte), "%.4f" % np.mean(lda.predict(xte) == yte), "%.4f" % np.mean(yte == maj)))
    with open(os.path.join(HERE, "lmgc_lda.csv"), "w", newline="") as f:
        csv.writer(f).writerows(out)
    for r in out:
        print(*r, sep="\t")


if __name__ == "__main__":
    main()
