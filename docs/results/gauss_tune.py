#!/usr/bin/python3
"""Analysis of the moment-share sweep (docs/mechanisms/gauss.md §6).

Usage: /usr/bin/python3 docs/results/gauss_tune.py
Reads gauss_tuning.csv (go test -tags results -run ResultsTuning ./mechanism/gauss/)
and prints, per (set, ε), the noise index E, the best share and the accuracy
of the candidate default rules (linear interpolation between grid shares).
E mirrors gauss.NoiseIndex for δ > 0: the CKS conversion (budget.GaussianDelta)
gives the ratio r for (ε, δ); with moment share 0.35 the joint sensitivity is
√(1 + p_c), p_c = 0.65²/1.4, σ = √(1 + p_c)/r, sd_off = σ/(√2·w_m),
w_m² = 0.35/(2d²), E = 2√d·sd_off/(n − K).
"""
import csv
import math
import os
from collections import defaultdict

HERE = os.path.dirname(os.path.abspath(__file__))
GRID = [0.1, 0.2, 0.35, 0.5, 0.65]
# training sizes of the tuning splits (75 % of the 80 % training part) and synthetic sets
INFO = {"breast_cancer": (341, 30, 2), "digits": (1077, 64, 10), "dna": (1911, 180, 3), "ticdata": (5892, 85, 2),
        "vehicle": (507, 18, 4), "vowel": (594, 10, 11), "syn_1000_10_5": (1000, 10, 5), "syn_5000_10_2": (5000, 10, 2),
        "syn_5000_36_6": (5000, 36, 6), "syn_10000_50_5": (10000, 50, 5), "syn_20000_16_20": (20000, 16, 20),
        "syn_20000_40_2": (20000, 40, 2)}
ORDERS = []
x = 1e-4
while x <= 1e6:
    ORDERS.append(1 + x)
    x *= 1.01


def gdelta(eps, r):
    rho = r * r / 2
    lg = min((a - 1) * (a * rho - eps) + a * math.log1p(-1 / a) - math.log(a - 1) for a in ORDERS)
    return math.exp(min(lg, 0.0))


def ratio(eps, delta):
    lo, hi = 1e-6, 100.0
    for _ in range(80):
        m = (lo + hi) / 2
        lo, hi = (m, hi) if gdelta(eps, m) <= delta else (lo, m)
    return lo


def noise_index(n, d, k, eps, delta=1e-5):
    pm, ps = 0.35, 0.65
    pc = ps * ps / (4 * pm)
    sigma = math.sqrt(1 + pc) / ratio(eps, delta)
    sd_off = sigma / math.sqrt(2 * pm / (2 * d * d))
    return 2 * math.sqrt(d) * sd_off / (n - k)


RULES = {
    "constant 0.35": lambda e: 0.35,
    "constant 0.5": lambda e: 0.5,
    "default: clamp(0.4 - 0.15 log10 E, 0.3, 0.65)": lambda e: min(0.65, max(0.3, 0.4 - 0.15 * math.log10(e))),
    "clamp(0.33 - 0.2 log10 E, 0.15, 0.65)": lambda e: min(0.65, max(0.15, 0.33 - 0.2 * math.log10(e))),
}


def interp(accs, pm):
    pm = min(max(pm, GRID[0]), GRID[-1])
    for a, b in zip(GRID, GRID[1:]):
        if a <= pm <= b:
            return accs[a] + (accs[b] - accs[a]) * (pm - a) / (b - a)


def main():
    acc = defaultdict(list)
    with open(os.path.join(HERE, "gauss_tuning.csv")) as f:
        for r in csv.DictReader(f):
            if r["edge_factor"] == "1":
                acc[(r["set"], r["kind"], r["epsilon"], float(r["moment_share"]))].append(float(r["accuracy"]))
    m = {k: sum(v) / len(v) for k, v in acc.items()}
    es = {(s, eps): noise_index(n, d, k, float(eps)) for s, (n, d, k) in INFO.items() for eps in ["1", "10"]}
    for kind in ["lda", "qda", "gnb"]:
        print("\n%s: validation accuracy by moment share (edge factor 1)\n" % kind)
        print("| set | ε | E | " + " | ".join("%.2f" % p for p in GRID) + " | best |")
        print("|---|---|---|" + "---|" * (len(GRID) + 1))
        for eps in ["1", "10"]:
            for s in INFO:
                a = {p: m[(s, kind, eps, p)] for p in GRID}
                print("| %s | %s | %.3g | %s | %.2f |" % (s, eps, es[(s, eps)], " | ".join("%.3f" % a[p] for p in GRID), max(a, key=a.get)))
        if kind == "gnb":
            continue
        print("\n%s: mean accuracy of candidate rules over the 24 (set, ε) cells\n" % kind)
        for name, f in RULES.items():
            v = [interp({p: m[(s, kind, eps, p)] for p in GRID}, f(es[(s, eps)])) for eps in ["1", "10"] for s in INFO]
            print("- %s: %.4f" % (name, sum(v) / len(v)))
        v = [max(m[(s, kind, eps, p)] for p in GRID) for eps in ["1", "10"] for s in INFO]
        print("- oracle (best grid share per cell): %.4f" % (sum(v) / len(v)))


if __name__ == "__main__":
    main()
