#!/usr/bin/env python3
"""Where a simulation's time goes, by part of the platform, from callgrind profiles.

    valgrind --tool=callgrind --callgrind-out-file=before.out build/bin/rnic-sim --set ...
    tools/callgrind-summary.py before.out after.out

Prints a Markdown table: each part's own instructions (Ir, callees not included) in millions and
as a share of the run, one column per profile. Instruction counts do not depend on the machine's
load, so two builds compare on a busy machine (wall time is for rnic-bench). The parts are found
by function and library names (see cat()); docs/profile.md shows the tables it made.
"""
import sys, re, collections
def load(path):
    names={}; fl=None; fn=None; cost=collections.Counter(); objs={}
    cur_ob=None; ob_names={}
    sub=False
    for line in open(path):
        line=line.rstrip('\n')
        m=re.match(r'^ob=\((\d+)\)(?: (.*))?$',line)
        if m:
            i,n=m.groups()
            if n: ob_names[i]=n
            cur_ob=ob_names.get(i,i); continue
        m=re.match(r'^fn=\((\d+)\)(?: (.*))?$',line)
        if m:
            i,n=m.groups()
            if n: names[i]=n
            fn=names.get(i,i); objs[fn]=cur_ob; sub=False; continue
        m=re.match(r'^cfn=\((\d+)\)(?: (.*))?$',line)
        if m:
            i,n=m.groups()
            if n: names[i]=n
            continue
        m=re.match(r'^cob=\((\d+)\)(?: (.*))?$',line)
        if m:
            i,n=m.groups()
            if n: ob_names[i]=n
            continue
        if line.startswith(('cfl=','calls=','fl=','fi=','fe=')):
            if line.startswith('calls='): sub=True
            continue
        if re.match(r'^[+-]?\d',line) or line.startswith('*'):
            parts=line.split()
            if len(parts)>=2:
                if sub: sub=False; continue   # inclusive cost line of a call
                try: cost[fn]+=int(parts[1])
                except: pass
    return cost,objs
def cat(fn,ob):
    f=fn or ''
    o=ob or ''
    if 'libsystemc' in o:
        if 'tlm_generic_payload' in f: return 'generic payload construct/destroy'
        return 'SystemC kernel (events, processes, time)'
    if 'malloc' in f or 'free' in f or 'operator new' in f or 'operator delete' in f or '_int_' in f: return 'heap (malloc/free)'
    if 'memmove' in f or 'memcpy' in f or 'memset' in f: return 'memcpy/memset'
    if 'checksum' in f or 'dword_sum' in f: return 'TCP/IP checksum'
    if 'castagnoli' in f or 'crc32c' in f: return 'CRC32c'
    if 'timed_resource' in f or 'tx_schedule' in f: return 'booking shared resources (timed_resource, tx_schedule)'
    if 'pcie' in f or 'pcix' in f or 'host_memory' in f or 'host_interface' in f or 'occupancy_pool' in f: return 'host bus models (PCIe, memory)'
    if 'tcp' in f.lower() or 'toe' in f or '::net::' in f: return 'TCP engine and codecs'
    if 'mpa' in f or 'framer' in f or 'fpdu' in f: return 'framing (MPA)'
    if 'rdma' in f or 'transmit_path' in f or 'receive_path' in f or 'ddp' in f or 'completions' in f: return 'RDMA engine and codecs'
    if 'dma_engine' in f: return 'DMA engine'
    if 'ethernet_link' in f or 'fault_injector' in f: return 'link and fault injector'
    if 'platform' in f or 'drv::' in f or 'host_cpu' in f or 'workload' in f or 'compare_ranges' in f or 'fill_pattern' in f: return 'host CPU, driver, workload, integrity'
    if 'buffer_memory' in f: return 'buffer memory'
    if 'ld-linux' in o or 'dl_' in f: return 'loader'
    if 'libboost' in o or 'json' in f: return 'configuration/results (JSON)'
    return 'other'
cols=[]
for p in sys.argv[1:]:
    c,o=load(p); tot=sum(c.values())
    agg=collections.Counter()
    for fn,v in c.items(): agg[cat(fn,o.get(fn))]+=v
    cols.append((p,tot,agg))
keys=sorted(set(k for _,_,a in cols for k in a), key=lambda k:-cols[0][2].get(k,0))
print('| part | '+' | '.join('%s'%p.split('/')[-1] for p,_,_ in cols)+' |')
print('|---|'+'---|'*len(cols))
for k in keys:
    print('| '+k+' | '+' | '.join('%.1f M (%.0f%%)'%(a.get(k,0)/1e6,100*a.get(k,0)/t) for _,t,a in cols)+' |')
print('| total | '+' | '.join('%.1f M'%(t/1e6) for _,t,_ in cols)+' |')
