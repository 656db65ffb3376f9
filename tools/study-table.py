#!/usr/bin/env python3
"""study-table.py TABLE.csv --rows AXIS --cols AXIS --metric NAME [--where AXIS=VALUE ...] [--scale X] [--digits N]

Prints a Markdown table of a sweep's metric: the mean over the seeds of each cell and its 95%
confidence interval (Student's t, two-sided), from rnic-sweep's table.csv. The study's numbers in
the text come from here, so text and figures read the same runs. --metric A/B is the ratio of two
metrics taken run by run (e.g. NIC-memory bytes moved per delivered byte)."""
import argparse, csv, math, sys
from collections import OrderedDict

T95 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262, 10: 2.228,
       11: 2.201, 12: 2.179, 13: 2.160, 14: 2.145, 15: 2.131, 16: 2.120, 17: 2.110, 18: 2.101, 19: 2.093,
       20: 2.086, 21: 2.080, 22: 2.074, 23: 2.069, 24: 2.064, 25: 2.060, 26: 2.056, 27: 2.052, 28: 2.048,
       29: 2.045, 30: 2.042, 40: 2.021, 60: 2.000, 120: 1.980}

def t95(dof):
    """Two-sided 95% quantile of Student's t; between tabulated degrees of freedom the next smaller
    one (a slightly wider interval), 1.96 beyond 120."""
    if dof in T95:
        return T95[dof]
    smaller = [k for k in T95 if k < dof]
    return T95[max(smaller)] if dof <= 120 else 1.96

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('table'); ap.add_argument('--rows', required=True); ap.add_argument('--cols', required=True)
    ap.add_argument('--metric', required=True); ap.add_argument('--where', action='append', default=[])
    ap.add_argument('--scale', type=float, default=1.0); ap.add_argument('--digits', type=int, default=1)
    a = ap.parse_args()
    where = dict(w.split('=', 1) for w in a.where)
    cells, rows, cols = {}, OrderedDict(), OrderedDict()
    with open(a.table) as f:
        for r in csv.DictReader(f):
            names = a.metric.split('/')
            if r['status'] != 'ok' or any(r[k] != v for k, v in where.items()) or any(r[n] == '' for n in names):
                continue
            value = float(r[names[0]])
            if len(names) == 2:
                if float(r[names[1]]) == 0: continue
                value /= float(r[names[1]])
            rows[r[a.rows]] = 1; cols[r[a.cols]] = 1
            cells.setdefault((r[a.rows], r[a.cols]), []).append(value * a.scale)
    print('| %s \\ %s | %s |' % (a.rows, a.cols, ' | '.join(cols)))
    print('|---|' + '---|' * len(cols))
    for row in rows:
        out = []
        for col in cols:
            v = cells.get((row, col), [])
            if not v: out.append(''); continue
            m = sum(v) / len(v)
            if len(v) > 1:
                sd = math.sqrt(sum((x - m) ** 2 for x in v) / (len(v) - 1))
                ci = t95(len(v) - 1) * sd / math.sqrt(len(v))
                out.append('%.*f ± %.*f' % (a.digits, m, a.digits, ci))
            else:
                out.append('%.*f' % (a.digits, m))
        print('| %s | %s |' % (row, ' | '.join(out)))

if __name__ == '__main__':
    sys.exit(main())
