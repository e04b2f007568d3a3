# Usage: mkdir -p /tmp/lmgc-ext && cd /tmp/lmgc-ext && /usr/bin/python3 <repo>/docs/results/lmgc_ring6_gen.py  → ring6.csv, catalog.json
# Second K=6 generator (different class geometry from syn_c_*): per-class covariances
# (random rotations, anisotropic scales), means on a ring in a 3-D subspace, imbalanced priors,
# a non-Gaussian (uniform-noise) nuisance block; 10 000 rows, features winsorised to the declared [-6, 6].
import numpy as np, json
rng = np.random.default_rng(20261128)
K, d, n = 6, 12, 10000
Q, _ = np.linalg.qr(rng.normal(size=(d, d)))
ang = 2*np.pi*np.arange(K)/K
mu = np.zeros((K, d)); mu[:, 0] = 2.2*np.cos(ang); mu[:, 1] = 2.2*np.sin(ang); mu[:, 2] = np.linspace(-1, 1, K)
mu = mu @ Q.T
pri = np.array([0.30, 0.22, 0.16, 0.13, 0.11, 0.08])
covs = []
for k in range(K):
    R, _ = np.linalg.qr(rng.normal(size=(d, d)))
    s = rng.uniform(0.4, 1.6, size=d)
    covs.append(R @ np.diag(s**2) @ R.T)
y = rng.choice(K, size=n, p=pri)
X = np.empty((n, d))
for i in range(n):
    X[i] = rng.multivariate_normal(mu[y[i]], covs[y[i]])
X[:, -2:] = rng.uniform(-3, 3, size=(n, 2))  # nuisance features
X = np.clip(X, -6, 6)
names = [f"f{j+1}" for j in range(d)]
with open("ring6.csv", "w") as f:
    f.write(",".join(names + ["cls"]) + "\n")
    for i in range(n):
        f.write(",".join(f"{v:.5f}" for v in X[i]) + f",k{y[i]}\n")
json.dump({"ring6": {"bounds": {c: [-6, 6] for c in names}, "label": {"column": "cls", "domain": [f"k{k}" for k in range(K)]}}},
          open("catalog.json", "w"), indent=1)
