#!/usr/bin/python3
"""Markdown tables for docs/results/logreg.md from logreg.csv and logreg_candidates.csv.

Run: /usr/bin/python3 docs/results/logreg_tables.py
"""
import csv, os

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    rows = list(csv.DictReader(open(os.path.join(HERE, "logreg.csv"))))
    key = lambda r: (r["data"], r["n_train"])
    order = []
    for r in rows:
        if key(r) not in order:
            order.append(key(r))
    print("| data | n | d | K | sklearn | majority | δ | ε = 0.1 | ε = 1 | ε = 10 |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for k in order:
        rs = [r for r in rows if key(r) == k]
        get = lambda m, e, dl: next((r for r in rs if r["method"] == m and float(r["epsilon"]) == e and float(r["delta"]) == dl), None)
        sk, mj = get("sklearn", 0, 0), get("majority", 0, 0)
        for dl in (1e-5, 0):
            cells = []
            for e in (0.1, 1, 10):
                r = get("logreg", e, dl)
                cells.append("%.3f ± %.3f" % (float(r["accuracy_mean"]), float(r["accuracy_sd"])))
            print("| %s | %s | %s | %s | %.3f | %.3f | %s | %s |" % (k[0], k[1], rs[0]["d"], rs[0]["classes"],
                  float(sk["accuracy_mean"]), float(mj["accuracy_mean"]), "1e-5" if dl else "0", " | ".join(cells)))
    print()
    cand = list(csv.DictReader(open(os.path.join(HERE, "logreg_candidates.csv"))))
    print("| data | n | K | ε | noisy GD | bolt-on (best λ) |")
    print("|---|---|---|---|---|---|")
    for i in range(0, len(cand), 2):
        a, b = cand[i], cand[i + 1]
        print("| %s | %s | %s | %s | %.3f ± %.3f | %.3f ± %.3f (λ = %s) |" % (a["data"], a["n_train"], a["classes"], a["epsilon"],
              float(a["accuracy_mean"]), float(a["accuracy_sd"]), float(b["accuracy_mean"]), float(b["accuracy_sd"]),
              b["method"].split("=")[1].rstrip(")")))


if __name__ == "__main__":
    main()
