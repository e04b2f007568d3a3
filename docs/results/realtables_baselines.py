"""Non-private baselines for docs/results/realtables.md (issue 28).

house_votes.csv and income.csv (../shared/data) with the split of
engine/realtables_test.go (every fifth row is test), features one-hot
encoded from the declared domains with a NULL level (the encoding DP_TRAIN
uses, docs/mechanisms/encoding.md), scikit-learn LogisticRegression and
LDA; the constant = the training majority class.

    /usr/bin/python3 docs/results/realtables_baselines.py [../shared/data]
"""
import csv
import sys

import numpy as np
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
from sklearn.linear_model import LogisticRegression

data = sys.argv[1] if len(sys.argv) > 1 else "../shared/data"


def balanced(y, p):
    return np.mean([np.mean(p[y == c] == c) for c in np.unique(y)])


for name in ["house_votes", "income"]:
    rows = list(csv.reader(open(f"{data}/{name}.csv")))
    head, rows = rows[0], rows[1:]
    last = len(head) - 1
    levels = [sorted({r[j] for r in rows if r[j] != ""}) for j in range(last)]

    def enc(r):
        x = []
        for j in range(last):
            v = [1.0 if r[j] == l else 0.0 for l in levels[j]] + [1.0 if r[j] == "" else 0.0]
            x += v
        return x

    tr = [r for i, r in enumerate(rows) if i % 5 != 4]
    te = [r for i, r in enumerate(rows) if i % 5 == 4]
    Xtr, Xte = np.array([enc(r) for r in tr]), np.array([enc(r) for r in te])
    ytr, yte = np.array([r[last] for r in tr]), np.array([r[last] for r in te])
    vals, counts = np.unique(ytr, return_counts=True)
    maj = vals[np.argmax(counts)]
    out = {"majority": (np.mean(yte == maj), balanced(yte, np.full(len(yte), maj)))}
    for mname, m in [("sk_logreg", LogisticRegression(max_iter=5000)), ("sk_lda", LinearDiscriminantAnalysis())]:
        p = m.fit(Xtr, ytr).predict(Xte)
        out[mname] = (np.mean(p == yte), balanced(yte, p))
    for k, (a, b) in out.items():
        print(f"{name},{k},{a:.4f},{b:.4f}")
