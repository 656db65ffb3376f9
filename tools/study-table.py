#!/usr/bin/env python3
"""study-table.py TABLE.csv --rows AXIS --cols AXIS --metric NAME [--where AXIS=VALUE ...] [--scale X] [--digits N]

Prints a Markdown table of a sweep's metric: the mean over the seeds of each cell and its 95%
confidence interval (Student's t, two-sided), from rnic-sweep's table.csv. The study's numbers in
the text come from here, so text and figures read the same runs. --metric A/B is the ratio of two
metrics taken run by run (e.g. NIC-memory bytes moved per delivered byte)."""
import argparse, csv, math, os, sys
from collections import OrderedDict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from study_stats import mean_ci  # noqa: E402


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
            m, ci = mean_ci(v)
            if math.isinf(ci):  # one run
                out.append('%.*f' % (a.digits, m))
            else:
                out.append('%.*f ± %.*f' % (a.digits, m, a.digits, ci))
        print('| %s | %s |' % (row, ' | '.join(out)))

if __name__ == '__main__':
    sys.exit(main())
