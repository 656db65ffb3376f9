#!/usr/bin/env python3
"""study-compare.py OLD.csv NEW.csv --metric NAME --group AXIS[,AXIS...] [--compare AXIS] [--where AXIS=VALUE ...]
                    [--scale X] [--digits N]

Compares one metric of the same sweep run on two models (two rnic-sweep table.csv files, e.g. a
study and its tools/run-study.sh --current re-run): per group, the mean over the seeds and its 95%
confidence interval (Student's t) on each model, and the change. With --compare AXIS (e.g. rx_path)
it also checks the study's comparisons: within each group of the other axes, every pair of AXIS
values is ranked on each model (A > B or A < B when the intervals do not overlap, "=" when they do),
and a pair whose verdict differs between the models is listed. Exit status 0; the last line counts
the groups whose intervals do not overlap and the comparisons that changed."""
import argparse
import csv
import math
import os
import sys
from collections import OrderedDict
from itertools import combinations

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from study_stats import mean_ci  # noqa: E402

def load(path, metric, group, where, scale):
    """{group tuple: [values]} of the ok runs that match `where`."""
    names = metric.split('/')
    cells = OrderedDict()
    with open(path) as f:
        reader = csv.DictReader(f)
        missing = [k for k in group + list(where) + names if k not in (reader.fieldnames or [])]
        if missing:
            sys.exit('study-compare.py: %s has no column %s' % (path, missing[0]))
        for r in reader:
            if r['status'] != 'ok' or any(r[k] != v for k, v in where.items()) or any(r.get(n, '') == '' for n in names):
                continue
            value = float(r[names[0]])
            if len(names) == 2:
                if float(r[names[1]]) == 0:
                    continue
                value /= float(r[names[1]])
            cells.setdefault(tuple(r[k] for k in group), []).append(value * scale)
    return cells


def verdict(a, b):
    (ma, ca), (mb, cb) = a, b
    if math.isinf(ca) or math.isinf(cb):
        return '='  # one run: no interval to rank it by
    if ma - ca > mb + cb:
        return '>'
    if ma + ca < mb - cb:
        return '<'
    return '='


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('old')
    ap.add_argument('new')
    ap.add_argument('--metric', required=True)
    ap.add_argument('--group', required=True)
    ap.add_argument('--compare')
    ap.add_argument('--where', action='append', default=[])
    ap.add_argument('--scale', type=float, default=1.0)
    ap.add_argument('--digits', type=int, default=2)
    a = ap.parse_args()
    group = a.group.split(',')
    if a.compare and a.compare not in group:
        group.append(a.compare)
    where = dict(w.split('=', 1) for w in a.where)
    old = load(a.old, a.metric, group, where, a.scale)
    new = load(a.new, a.metric, group, where, a.scale)
    d = a.digits
    print('| %s | old model | current model | change |' % ' | '.join(group))
    print('|' + '---|' * (len(group) + 3))
    apart = 0
    stats_old, stats_new = {}, {}
    for key in list(old) + [k for k in new if k not in old]:
        o = mean_ci(old[key]) if key in old else None
        n = mean_ci(new[key]) if key in new else None
        stats_old[key], stats_new[key] = o, n
        fmt = lambda s: ('' if s is None else '%.*f (one run)' % (d, s[0]) if math.isinf(s[1])
                         else '%.*f ± %.*f' % (d, s[0], d, s[1]))
        change = ''
        if (o is None) != (n is None):
            print('study-compare.py: group %s is in only one of the tables' % ', '.join(key), file=sys.stderr)
        if o and n:
            change = '%+.1f%%' % (100.0 * (n[0] - o[0]) / o[0]) if o[0] else '%+.*f' % (d, n[0] - o[0])
            if verdict(o, n) != '=':
                apart += 1
                change += ' (apart)'
        print('| %s | %s | %s | %s |' % (' | '.join(key), fmt(o), fmt(n), change))
    changed = []
    if a.compare:
        ci = group.index(a.compare)
        rest = lambda k: k[:ci] + k[ci + 1:]
        for g in OrderedDict((rest(k), 1) for k in stats_old):
            members = [k for k in stats_old if rest(k) == g and stats_old[k] and stats_new.get(k)]
            for x, y in combinations(members, 2):
                vo, vn = verdict(stats_old[x], stats_old[y]), verdict(stats_new[x], stats_new[y])
                if vo != vn:
                    changed.append('%s: %s %s %s on the old model, %s on the current one' %
                                   (', '.join(g) or '-', x[ci], vo, y[ci], vn))
        print()
        for line in changed:
            print('- ' + line)
    print()
    print('%d groups, %d with intervals apart; %d comparisons of %s changed' %
          (len(stats_old), apart, len(changed), a.compare or '-'))
    return 0


if __name__ == '__main__':
    sys.exit(main())
