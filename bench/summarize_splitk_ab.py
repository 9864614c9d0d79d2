#!/usr/bin/env python3
"""A/B table of the wgmma split-K reduction from one `bench/wgmma_bench.sh time` output whose
artifacts built from the previous header carry " OLD" in their description (see
bench/results/h100/wgmma-splitk/README.md). Per grid class: geomean of cuBLASLt auto-tuning's time
over the old split-K (splits=auto), over the new split-K (auto or 16) and over our best variant.
Usage: summarize_splitk_ab.py TIME.txt [per-shape.csv]"""
# Per shape: cuBLASLt auto-tuning, our best with the old split-K (same specs, old header: splits=auto),
# our best new split-K (auto / 16), our best overall in this run.
import sys,collections,math,csv
lines=open(sys.argv[1]).read().splitlines()
lt={}; rows=collections.defaultdict(list)
for l in lines:
    f=l.split()
    if len(f)<6 or f[0]=='shape': continue
    if f[-3]=='base': lt[f[0]]=min(lt.get(f[0],1e9),float(f[-2])); continue
    if f[-5]!='ok': continue
    rows[f[0]].append((' '.join(f[1:-5]),float(f[-3])))
cls=lambda m,n,k: 'skinny' if min(m,n)<=256 else ('large' if 2*m*n*k>=1e11 else 'medium')
out=[]
for sh,rs in rows.items():
    m,n,k=map(int,sh.split('x'))
    old=min(u for nm,u in rs if 'OLD' in nm)
    newsk=min(u for nm,u in rs if 'OLD' not in nm and (' pA' in nm or ' p16' in nm))
    best=min((u,nm) for nm,u in rs if 'OLD' not in nm)
    out.append(dict(m=m,n=n,k=k,cls=cls(m,n,k),lt=lt[sh],old_splitk=old,new_splitk=newsk,best=best[0],best_spec=best[1],
                    r_old=lt[sh]/old,r_new=lt[sh]/newsk,r_best=lt[sh]/best[0]))
g=lambda v: math.exp(sum(math.log(x) for x in v)/len(v))
for c in ['skinny','medium','large','all']:
    s=[o for o in out if c=='all' or o['cls']==c]
    if not s: continue
    print('%-7s %3d shapes: old split-K %.3f  new split-K %.3f (x%.2f)  best new %.3f  new split-K faster than old on %d, >=1.00 vs lt: %d'%(
        c,len(s),g([o['r_old'] for o in s]),g([o['r_new'] for o in s]),g([o['old_splitk']/o['new_splitk'] for o in s]),g([o['r_best'] for o in s]),
        sum(o['new_splitk']<o['old_splitk'] for o in s), sum(o['r_best']>=1 for o in s)))
if len(sys.argv)>2:
    w=csv.DictWriter(open(sys.argv[2],'w'),fieldnames=list(out[0].keys())); w.writeheader()
    for o in sorted(out,key=lambda o:o['r_best']): w.writerow({k:(round(v,4) if isinstance(v,float) else v) for k,v in o.items()})
