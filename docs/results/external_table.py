#!/usr/bin/env python3
"""Summarise a dpsql-accuracy -ext run (docs/results/external.md).

    /usr/bin/python3 docs/results/external_table.py OUT [OUT2 ...]

OUT is the tool's -out directory (accuracy.csv, accuracy_baselines.csv).
Prints one markdown row per (set, kind, ε): mean ± sd over runs, the number
of runs and revisions, the best non-private linear model and the constant
predictor of the same split.
"""
import sys

import pandas as pd


def main():
    acc, base = [], []
    for d in sys.argv[1:]:
        acc.append(pd.read_csv(f"{d}/accuracy.csv"))
        try:
            base.append(pd.read_csv(f"{d}/accuracy_baselines.csv"))
        except FileNotFoundError:
            pass
    a = pd.concat(acc)
    a = a[a["error"].isna()] if "error" in a else a
    b = pd.concat(base).drop_duplicates(["set", "model"], keep="last") if base else pd.DataFrame()
    print("| set | kind | ε | private (mean ± sd) | runs | revision | best non-private linear | constant |")
    print("|---|---|---|---|---|---|---|---|")
    for (s, k, e), g in a.groupby(["set", "kind", "eps"], sort=True):
        metric = g["metric"].iloc[0]
        bs = b[b["set"] == s] if len(b) else b
        if metric == "accuracy":
            lin = bs[bs["model"].str.startswith("sk_")]["value"].max() if len(bs) else float("nan")
            const = bs[bs["model"] == "majority"]["value"].max() if len(bs) else float("nan")
            fmt = "{:.3f}"
        else:
            lin = bs[bs["model"].str.startswith("sk_")]["value"].min() if len(bs) else float("nan")
            const = bs[bs["model"] == "mean"]["value"].min() if len(bs) else float("nan")
            fmt = "{:.4g}"
        trained = ", ".join(sorted(set(g["model_kind"].dropna()))) if "model_kind" in g else ""
        kind = f"{k} ({trained})" if k.startswith("auto") and trained else k
        revs = ", ".join(sorted({str(r)[:7] for r in g["rev"]}))
        print(f"| {s} | {kind} | {e:g} | {fmt.format(g['value'].mean())} ± {fmt.format(g['value'].std())} "
              f"| {len(g)} | {revs} | {fmt.format(lin)} | {fmt.format(const)} |")


if __name__ == "__main__":
    main()
