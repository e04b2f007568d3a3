# Issue 28 item 6 table: DP_LMGC_TRAIN margin (before) vs stats (after) through SQL, with the
# harness's sklearn LDA and majority on the same split. Reads lmgc_issue28_{before,after}.csv and
# lmgc_issue28_baselines.csv (copies of the harness outputs, commands in lmgc.md).
import csv, collections, statistics as st, os
here = os.path.dirname(os.path.abspath(__file__))
def load(name):
    acc = collections.defaultdict(list)
    for r in csv.DictReader(open(os.path.join(here, name))):
        if r['metric'] == 'accuracy' and r['value'] and r['kind'] == 'lmgc':
            acc[(r['set'], float(r['eps']))].append(float(r['value']))
    return acc
before, after = load('lmgc_issue28_before.csv'), load('lmgc_issue28_after.csv')
base = {}
for r in csv.DictReader(open(os.path.join(here, 'lmgc_issue28_baselines.csv'))):
    if r['metric'] == 'accuracy':
        base.setdefault(r['set'], {})[r['model']] = r
def ms(v):
    return f"{st.mean(v):.3f} ± {st.stdev(v):.3f} ({len(v)})" if len(v) > 1 else (f"{v[0]:.3f} (1)" if v else "—")
print("| set | ε | margin (before) | stats (after) | sklearn LDA | majority | after: LDA − stats | target |")
print("|---|---|---|---|---|---|---|---|")
for (s, e) in sorted(set(before) | set(after), key=lambda x: (x[0], x[1])):
    b = base.get(s, {})
    lda = float(b['sk_lda']['value']) if 'sk_lda' in b else float('nan')
    maj = float(b['majority']['value']) if 'majority' in b else float('nan')
    a = after.get((s, e), [])
    gap = lda - st.mean(a) if a else float('nan')
    tgt = ''
    if e == 1:
        tgt = 'met' if a and st.mean(a) > maj and gap <= 0.25 else 'not met'
    elif e == 10:
        tgt = 'met' if a and gap <= 0.10 else 'not met'
    print(f"| {s} | {e:g} | {ms(before.get((s, e), []))} | {ms(a)} | {lda:.4f} | {maj:.4f} | {gap*100:.1f} pts | {tgt} |")
