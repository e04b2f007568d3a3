#!/usr/bin/env python3
"""Build the external check sets of docs/results/external.md.

Public UCI data the project never tuned on, with owner-style declarations
(domain bounds from each data set's documentation, round numbers where it
documents none). The raw files are not in the repository; give their paths:

    /usr/bin/python3 docs/results/external_sets.py OUT \
        --letter letter-recognition.data --spambase spambase.data \
        --shuttle shuttle.trn shuttle.tst --satimage satimage.csv \
        --boston BostonHousing.csv --calhousing cal_housing.data

writes OUT/NAME.csv (header row, label last) and OUT/catalog.json for
`go run ./cmd/dpsql-accuracy -ext OUT -sets ext:NAME,...`.

No bound here is computed from the rows except where noted (shuttle: the
UCI page documents no ranges, so its box is the observed range rounded out
to multiples of 10 — an owner who knows the sensor ranges; the *_p99
variants are oracle boxes for comparison only, never a default).
"""
import argparse
import csv
import json
import math
import os


def write(out, cat, name, header, rows, bounds, domain=None):
    with open(os.path.join(out, name + ".csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows(rows)
    spec = {"bounds": bounds}
    if domain is not None:
        spec["label"] = {"column": header[-1], "domain": domain}
    cat[name] = spec


def oracle(rows, header, lo_q, hi_q, keep):
    """Per-column quantile box (comparison only)."""
    b = dict(keep)
    for j, h in enumerate(header[:-1]):
        v = sorted(float(r[j]) for r in rows)
        b[h] = [v[int(lo_q * (len(v) - 1))], v[int(hi_q * (len(v) - 1))]]
    return b


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--letter")
    ap.add_argument("--spambase")
    ap.add_argument("--shuttle", nargs=2)
    ap.add_argument("--satimage")
    ap.add_argument("--boston")
    ap.add_argument("--calhousing")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    cat = {}
    if a.letter:  # 20,000 × 16 integer features documented as 0–15; 26 classes
        recs = [r for r in csv.reader(open(a.letter)) if r and r[0] != "Letter"]
        h = [f"x{i}" for i in range(1, 17)] + ["letter"]
        rows = [r[1:] + [r[0]] for r in recs]
        write(a.out, cat, "letter", h, rows, {c: [0, 15] for c in h[:-1]}, sorted({r[0] for r in recs}))
    if a.spambase:  # 4,601 × 57: 54 percentages [0, 100], 3 run lengths
        recs = [r for r in csv.reader(open(a.spambase)) if len(r) == 58]
        if recs and recs[0][:2] == ["1", "2"]:  # some copies carry a 1…58 header row
            recs = recs[1:]
        h = [f"f{i}" for i in range(1, 58)] + ["spam"]
        rows = [r[:57] + ["spam" if r[57].strip() == "1" else "ham"] for r in recs]
        b = {c: [0, 100] for c in h[:54]}
        b.update({"f55": [1, 1200], "f56": [1, 10000], "f57": [1, 16000]})
        write(a.out, cat, "spambase", h, rows, b, ["ham", "spam"])
        write(a.out, cat, "spambase_p99", h, rows, oracle(rows, h, 0, 0.99, {}), ["ham", "spam"])
    if a.shuttle:  # 58,000 × 9, 7 classes (majority 0.79)
        names = {"1": "rad", "2": "fpvc", "3": "fpvo", "4": "high", "5": "bypass", "6": "bpvc", "7": "bpvo"}
        # UCI's files are space-separated with class codes 1–7; some copies are
        # comma-separated with class names instead.
        for code, full in [("1", "Rad Flow"), ("1", "Radiator Flow"), ("2", "Fpv Close"),
                           ("2", "Flow Proportioning Valve Close"), ("3", "Fpv Open"),
                           ("3", "Flow Proportioning Valve Open"), ("4", "High"), ("5", "Bypass"),
                           ("6", "Bpv Close"), ("6", "Bipropellant Valve Close"), ("7", "Bpv Open"),
                           ("7", "Bipropellant Valve Open")]:
            names[full] = names[code]
        recs = []
        for p in a.shuttle:
            for line in open(p):
                f = line.strip().split(",") if "," in line else line.split()
                if len(f) == 10:
                    recs.append([x.strip() for x in f])
        h = [f"a{i}" for i in range(1, 10)] + ["cls"]
        rows = [r[:9] + [names.get(r[9], r[9])] for r in recs]
        b = {}
        for j, c in enumerate(h[:-1]):
            v = [float(r[j]) for r in rows]
            b[c] = [math.floor(min(v) / 10) * 10, math.ceil(max(v) / 10) * 10]
        write(a.out, cat, "shuttle", h, rows, b, sorted(set(names.values())))
    if a.satimage:  # LIBSVM-scaled copy: 36 features in [-1, 1], 6 classes
        recs = [r for r in csv.reader(open(a.satimage)) if r]
        h = [f"s{i}" for i in range(1, 37)] + ["cls"]
        rows = [r[:36] + ["c" + r[36]] for r in recs]
        write(a.out, cat, "satimage_scaled", h, rows, {c: [-1, 1] for c in h[:-1]}, sorted({r[-1] for r in rows}))
    if a.boston:  # 506 × 13, label medv in thousands of dollars
        recs = list(csv.reader(open(a.boston)))
        h = [c.strip('"') for c in recs[0]]
        b = {"crim": [0, 100], "zn": [0, 100], "indus": [0, 30], "chas": [0, 1], "nox": [0.3, 0.9], "rm": [3, 9],
             "age": [0, 100], "dis": [1, 13], "rad": [1, 24], "tax": [180, 720], "ptratio": [12, 23],
             "b": [0, 400], "lstat": [1, 40], "medv": [5, 50]}
        write(a.out, cat, "boston", h, recs[1:], b)
    if a.calhousing:  # 20,640 × 8, label median house value (capped at 500,001)
        h = ["longitude", "latitude", "age", "rooms", "bedrooms", "population", "households", "income", "value"]
        rows = [line.strip().split(",") for line in open(a.calhousing) if line.strip()]
        b = {"longitude": [-125, -114], "latitude": [32, 42], "age": [1, 52], "rooms": [0, 40000],
             "bedrooms": [0, 6500], "population": [0, 36000], "households": [0, 6100], "income": [0, 15.0001],
             "value": [14999, 500001]}
        write(a.out, cat, "calhousing", h, rows, b)
        write(a.out, cat, "calhousing_p99", h, rows, oracle(rows, h, 0.005, 0.995, {"value": b["value"]}))
    with open(os.path.join(a.out, "catalog.json"), "w") as f:
        json.dump(cat, f, indent=1)


if __name__ == "__main__":
    main()
