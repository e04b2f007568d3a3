# Issue 28 item 6, d = 30: DP_TRAIN kind lmgc (method=stats) on the declared box (before) and with
# DP_TRAIN's private per-feature box (after, box=auto), beside DP_TRAIN kind lda (box=auto, the same
# release written as weights) and the harness's sklearn LDA / majority on the same split.
# Reads lmgc_box_{before,after}.csv and lmgc_box_baselines.csv (harness outputs; commands in lmgc.md).
import csv, collections, statistics as st, os
here = os.path.dirname(os.path.abspath(__file__))
def load(name, kind):
    acc = collections.defaultdict(list)
    for r in csv.DictReader(open(os.path.join(here, name))):
        if r['metric'] == 'accuracy' and r['value'] and r['kind'] == kind:
            acc[(r['set'], float(r['eps']))].append(float(r['value']))
    return acc
before, after, lda = load('lmgc_box_before.csv', 'lmgc'), load('lmgc_box_after.csv', 'lmgc'), load('lmgc_box_before.csv', 'lda')
base = {}
for r in csv.DictReader(open(os.path.join(here, 'lmgc_box_baselines.csv'))):
    if r['metric'] == 'accuracy':
        base.setdefault(r['set'], {})[r['model']] = float(r['value'])
def ms(v):
    return f"{st.mean(v):.3f} ± {st.stdev(v):.3f} ({len(v)})" if len(v) > 1 else "—"
print("| set | ε | stats, declared box (before) | stats + private box (after) | after − before | DP lda (box=auto) | sklearn LDA | majority | LDA − after | target |")
print("|---|---|---|---|---|---|---|---|---|---|")
for (s, e) in sorted(set(before) | set(after), key=lambda x: (x[0], x[1])):
    b, a = before.get((s, e), []), after.get((s, e), [])
    sk, maj = base[s]['sk_lda'], base[s]['majority']
    gap = sk - st.mean(a)
    tgt = ''
    if e == 1:
        tgt = 'met' if st.mean(a) > maj and gap <= 0.25 else 'not met'
    elif e == 10:
        tgt = 'met' if gap <= 0.10 else 'not met'
    print(f"| {s} | {e:g} | {ms(b)} | **{ms(a)}** | {100*(st.mean(a)-st.mean(b)):+.1f} pts | {ms(lda.get((s, e), []))} | {sk:.4f} | {maj:.4f} | {gap*100:.1f} pts | {tgt} |")
