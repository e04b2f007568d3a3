#!/usr/bin/env python3
"""Tables of docs/results/prior_rule.md from the auto harness's CSV (the
/guard=1 and /guard=2 candidates): python3 docs/results/prior_rule_table.py [CSV]."""
import csv, collections, math, os, sys
path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "prior_rule_harness.csv")
rows=[r for r in csv.reader(open(path))]
base={}; acc=collections.defaultdict(list)
for set_,n,d,k,eps,dl,cand,rep,a in rows:
    key=(set_,int(n),int(d),int(k))
    if cand in('np_lda','majority'): base[key+(cand,)]=float(a); continue
    acc[key+(float(eps),cand)].append(float(a))
def mse(v):
    m=sum(v)/len(v); return m, (math.sqrt(sum((x-m)**2 for x in v)/(len(v)-1)/len(v)) if len(v)>1 else float('nan'))
out=[]; summ=collections.defaultdict(list)
hdr="| set | n | K | ε | n·ε | r | s | new rule | old rule (r only) | new − old | majority | non-private LDA |\n|---|---|---|---|---|---|---|---|---|---|---|---|"
for key in sorted({k[:5] for k in acc}, key=lambda k:(('maj' not in k[0]), k[0], k[1], k[4])):
    s,n,d,k,e=key
    a1=acc.get(key+('logreg/guard=1',),[]); a2=acc.get(key+('logreg/guard=2',),[])
    if len(a1)<2 or len(a2)<2 or len(a1)!=len(a2): continue
    kp=1 if k<=2 else k
    r=n*e/((d+1)*kp); sres=n*e*0.05/2
    ch = r>=0.5 and sres<1
    m1,s1=mse(a1); m2,s2=mse(a2); maj=base[(s,n,d,k,'majority')]
    bal='maj' in s
    cat = 'changed: prior alone (r ≥ 0.5, s < 1)' if ch else ('unchanged: prior alone (r < 0.5)' if r<0.5 else f'unchanged: select, s ∈ [{1 if sres<3 else 3}, {3 if sres<3 else 8})')
    summ[(bal,cat)].append((m1-m2, m1-maj, m2-maj))
    if ch:
        out.append(f"| {s} | {n} | {k} | {e:g} | {n*e:g} | {r:.2f} | {sres:.2f} | {m1:.3f} ± {s1:.3f} | {m2:.3f} ± {s2:.3f} | {m1-m2:+.3f} | {maj:.3f} | {base[(s,n,d,k,'np_lda')]:.3f} |")
print(hdr); print("\n".join(out)); print()
print("| classes | cells | regime | mean new − old | new rule: cells under majority − 1 pt | old rule: cells under majority − 1 pt | worst new − majority | worst old − majority |")
print("|---|---|---|---|---|---|---|---|")
for (bal,cat),v in sorted(summ.items()):
    print(f"| {'60 % in class 0' if bal else 'balanced'} | {len(v)} | {cat} | {sum(x[0] for x in v)/len(v):+.3f} | {sum(x[1]< -0.01 for x in v)} | {sum(x[2]< -0.01 for x in v)} | {min(x[1] for x in v):+.3f} | {min(x[2] for x in v):+.3f} |")
