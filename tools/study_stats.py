"""The statistics of the study tools (study-table.py, study-compare.py): a metric's mean over the
seeds and its two-sided 95% confidence interval (Student's t)."""
import math

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


def mean_ci(values):
    """Mean and 95% half-width; a single run has no interval (inf), so it is never ranked."""
    m = sum(values) / len(values)
    if len(values) < 2:
        return m, math.inf
    sd = math.sqrt(sum((x - m) ** 2 for x in values) / (len(values) - 1))
    return m, t95(len(values) - 1) * sd / math.sqrt(len(values))
