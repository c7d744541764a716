"""Two-sample tests without scipy (not a dependency): Mann-Whitney U and Fisher's exact test.

Both are checked against published values in the tests (scipy's and R's documentation examples, Fisher's
tea tasting); the drift table uses them to say whether a change could be chance.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

EXACT_MAX_PRODUCT = 2500  # Mann-Whitney: exact null distribution when n1 x n2 is at most this and no ties


@dataclass(frozen=True)
class TestResult:
    """The statistic, its two-sided p-value (NaN when a sample is empty), and how it was computed."""

    statistic: float
    p_value: float
    method: str


def mann_whitney(x: np.ndarray, y: np.ndarray, *, exact: bool | None = None) -> TestResult:
    """Two-sided Mann-Whitney U test (Wilcoxon rank-sum) of ``x`` against ``y`` (NaN values dropped).

    The statistic is U of ``x``: the number of pairs (x_i, y_j) with x_i > y_j, ties counting half.
    Without ties and with n1 x n2 <= ``EXACT_MAX_PRODUCT``, the p-value is exact (twice the smaller tail of
    U's null distribution, counted by the Mann & Whitney 1947 recursion); otherwise the normal approximation
    with the tie correction of the variance and a continuity correction of 0.5, as scipy's
    ``mannwhitneyu(method="asymptotic")`` and R's ``wilcox.test(exact=FALSE)`` compute it. ``exact`` forces
    one or the other (the exact distribution only exists without ties)."""
    a = np.asarray(x, dtype=float)
    b = np.asarray(y, dtype=float)
    a, b = a[np.isfinite(a)], b[np.isfinite(b)]
    n1, n2 = len(a), len(b)
    if n1 == 0 or n2 == 0:
        return TestResult(math.nan, math.nan, "none: a sample is empty")
    ranks, tie_sizes = _ranks(np.concatenate([a, b]))
    u = float(ranks[:n1].sum() - n1 * (n1 + 1) / 2)
    ties = bool((tie_sizes > 1).any())
    if exact and ties:
        raise ValueError("the exact Mann-Whitney distribution needs values without ties")
    if exact or (exact is None and not ties and n1 * n2 <= EXACT_MAX_PRODUCT):
        counts = _u_distribution(n1, n2)
        total = counts.sum()
        k = int(round(u))
        low, high = counts[: k + 1].sum() / total, counts[k:].sum() / total
        return TestResult(u, float(min(1.0, 2 * min(low, high))), "exact")
    n = n1 + n2
    mean = n1 * n2 / 2
    var = n1 * n2 / 12 * ((n + 1) - float((tie_sizes**3 - tie_sizes).sum()) / (n * (n - 1)))
    if var <= 0:  # every value equal: no evidence of a difference
        return TestResult(u, 1.0, "normal approximation")
    z = (abs(u - mean) - 0.5) / math.sqrt(var)
    return TestResult(u, float(min(1.0, math.erfc(z / math.sqrt(2)))), "normal approximation")


def _ranks(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mid-ranks (1-based, ties averaged) of ``values``, and the size of each group of equal values."""
    order = np.argsort(values, kind="mergesort")
    sorted_values = values[order]
    starts = np.flatnonzero(np.r_[True, sorted_values[1:] != sorted_values[:-1]])
    sizes = np.diff(np.r_[starts, len(values)])
    mid = starts + (sizes + 1) / 2  # 1-based average rank of each group
    ranks = np.empty(len(values))
    ranks[order] = np.repeat(mid, sizes)
    return ranks, sizes.astype(float)


def _u_distribution(n1: int, n2: int) -> np.ndarray:
    """How many of the C(n1 + n2, n1) orderings give each U = 0 .. n1 n2 (no ties): f(i, j, u) =
    f(i - 1, j, u - j) + f(i, j - 1, u), the largest value being an x (beating all j y's) or a y."""
    f = [[np.ones(1)] * (n2 + 1)]  # i = 0: U is 0 whatever j
    for i in range(1, n1 + 1):
        row = [np.ones(1)]  # j = 0: U is 0
        for j in range(1, n2 + 1):
            out = np.zeros(i * j + 1)
            prev = f[i - 1][j]  # the largest value is an x: it beats all j y's
            out[j : j + len(prev)] += prev
            left = row[j - 1]  # the largest value is a y
            out[: len(left)] += left
            row.append(out)
        f.append(row)
    return f[n1][n2]


def fisher_exact(a: int, b: int, c: int, d: int) -> TestResult:
    """Two-sided Fisher's exact test of the 2 x 2 table [[a, b], [c, d]]: the sum of the hypergeometric
    probabilities (margins fixed) of every table no more likely than the observed one (with R's relative
    tolerance of 1e-7 for equal probabilities). The statistic is the sample odds ratio a d / (b c)."""
    if min(a, b, c, d) < 0:
        raise ValueError("a 2 x 2 table has no negative counts")
    row1, col1, n = a + b, a + c, a + b + c + d
    if n == 0:
        return TestResult(math.nan, math.nan, "none: the table is empty")
    lo, hi = max(0, col1 - (n - row1)), min(row1, col1)
    k = np.arange(lo, hi + 1)
    log_p = _log_choose(row1, k) + _log_choose(n - row1, col1 - k) - _log_choose(n, np.array([col1]))
    p = np.exp(log_p - log_p.max())
    observed = p[a - lo]
    p_value = float(p[p <= observed * (1 + 1e-7)].sum() / p.sum())
    odds = (a * d) / (b * c) if b * c else math.inf if a * d else math.nan
    return TestResult(float(odds), min(1.0, p_value), "exact")


def _log_choose(n: int, k: np.ndarray) -> np.ndarray:
    lgamma = np.vectorize(math.lgamma, otypes=[float])
    out: np.ndarray = lgamma(n + 1.0) - lgamma(k + 1.0) - lgamma(n - k + 1.0)
    return out
