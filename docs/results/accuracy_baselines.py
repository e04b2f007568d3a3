"""Non-private baselines for docs/results/accuracy.md (run by cmd/dpsql-accuracy).

Reads the splits the tool wrote (<work>/splits/<set>_{train,test}.csv and
<set>.json with the declared bounds) and appends to accuracy_baselines.csv one
row per (set, model): test accuracy or RMSE of scikit-learn's non-private
models on the SAME split, features mapped to [-1, 1] by the same declared
bounds (clipped), as the private mechanisms see them; plus the constant
predictors (training majority class / training mean).

Usage: /usr/bin/python3 accuracy_baselines.py <splits dir> <out csv>
Sets already in the csv are skipped (delete the csv to redo).
"""
import csv
import glob
import json
import os
import sys
import time
import warnings

import numpy as np
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LinearRegression, LogisticRegression, Ridge
from sklearn.svm import LinearSVC

warnings.filterwarnings("ignore", category=ConvergenceWarning)


def load(path, classify, nfeat):
    x = np.loadtxt(path, delimiter=",", skiprows=1, usecols=range(nfeat), ndmin=2)
    with open(path) as f:
        r = csv.reader(f)
        next(r)
        y = [row[-1] for row in r]
    y = np.array(y) if classify else np.array(y, dtype=float)
    return x, y


def scale(x, lo, hi):
    lo, hi = np.array(lo), np.array(hi)
    return np.clip(2 * (x - lo) / (hi - lo) - 1, -1, 1)


def main():
    splits, out = sys.argv[1], sys.argv[2]
    done = set()
    if os.path.exists(out):
        with open(out) as f:
            done = {r["set"] for r in csv.DictReader(f)}
    new = not os.path.exists(out) or os.path.getsize(out) == 0
    with open(out, "a", newline="") as f:
        w = csv.writer(f)
        if new:
            w.writerow(["set", "model", "metric", "value", "seconds"])
        metas = [json.load(open(mp)) for mp in glob.glob(os.path.join(splits, "*.json"))]
        # Cheap sets first.
        for meta in sorted(metas, key=lambda m: (m["n"] * m["d"] * max(m["k"], 1), m["name"])):
            name = meta["name"]
            if name in done:
                continue
            cl, d = meta["classify"], meta["d"]
            xtr, ytr = load(os.path.join(splits, name + "_train.csv"), cl, d)
            xte, yte = load(os.path.join(splits, name + "_test.csv"), cl, d)
            ztr, zte = scale(xtr, meta["lo"], meta["hi"]), scale(xte, meta["lo"], meta["hi"])
            rows = []
            if cl:
                vals, counts = np.unique(ytr, return_counts=True)
                rows.append(("majority", "accuracy", float(np.mean(yte == vals[np.argmax(counts)])), 0.0))
                models = [
                    ("sk_logreg", LogisticRegression(max_iter=5000)),
                    ("sk_lda", LinearDiscriminantAnalysis()),
                    ("sk_linearsvc", LinearSVC(dual=len(ytr) <= d, max_iter=5000)),
                ]
                for mname, m in models:
                    t0 = time.time()
                    m.fit(ztr, ytr)
                    rows.append((mname, "accuracy", float(np.mean(m.predict(zte) == yte)), time.time() - t0))
            else:
                rows.append(("mean", "rmse", float(np.sqrt(np.mean((yte - ytr.mean()) ** 2))), 0.0))
                for mname, m in [("sk_ols", LinearRegression()), ("sk_ridge", Ridge(alpha=1.0))]:
                    t0 = time.time()
                    m.fit(ztr, ytr)
                    rows.append((mname, "rmse", float(np.sqrt(np.mean((m.predict(zte) - yte) ** 2))), time.time() - t0))
            for r in rows:
                w.writerow([name, r[0], r[1], "%.6g" % r[2], "%.3g" % r[3]])
            f.flush()
            print("baselines", name, " ".join("%s=%.4f" % (r[0], r[2]) for r in rows), flush=True)


if __name__ == "__main__":
    main()
