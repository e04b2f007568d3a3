# Reference fits for dpsql-bench case "train": loads the CSV the tool wrote
# (the same rows it imported), prints "ready", then answers every "fit"
# line on stdin with the wall seconds of one LogisticRegression().fit
# (scikit-learn defaults: lbfgs, C = 1, max_iter = 100) on all rows.
import sys
import time

import numpy as np
from sklearn.linear_model import LogisticRegression

data = np.loadtxt(sys.argv[1], delimiter=",", skiprows=1)
X, y = data[:, :-1], data[:, -1].astype(int)
print("ready", X.shape[0], X.shape[1], flush=True)
for line in sys.stdin:
    if line.strip() != "fit":
        break
    t0 = time.perf_counter()
    m = LogisticRegression().fit(X, y)
    el = time.perf_counter() - t0
    acc = m.score(X, y)
    print(f"{el:.6f} {m.n_iter_[0]} {acc:.4f}", flush=True)
