"""Two-sample tests, computed by scipy: Mann-Whitney U and Fisher's exact test, both two-sided.

This module is the one place that chooses their options, so the drift table and the production monitor run
the same tests; the drift table uses them to say whether a change could be chance. scipy.stats is imported
when a test runs, not with this module: it takes over a second and 75 MB to import, and ``import-feedback``
and report builds import this module (through the monitor) without running a test.
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
    """Two-sided Mann-Whitney U test (Wilcoxon rank-sum) of ``x`` against ``y`` (NaN and infinite values dropped).

    The statistic is U of ``x``: the number of pairs (x_i, y_j) with x_i > y_j, ties counting half.
    Without ties and with n1 x n2 <= ``EXACT_MAX_PRODUCT``, the p-value is exact: twice the smaller tail of
    U's null distribution (Mann & Whitney 1947), ``method="exact"``. scipy's own ``"auto"`` goes exact only
    when a sample has at most 8 values; drift compares tens of per-sample means, where the exact distribution
    takes a millisecond and carries no approximation error into the tails. Otherwise the normal approximation
    with the tie correction of the variance and a continuity correction of 0.5 (``method="asymptotic"``,
    ``use_continuity=True``), as R's ``wilcox.test(exact=FALSE)`` computes it. ``exact`` forces one or the
    other; the exact distribution only exists without ties (scipy would use it anyway, ignoring them)."""
    from scipy import stats

    a = np.asarray(x, dtype=float)
    b = np.asarray(y, dtype=float)
    a, b = a[np.isfinite(a)], b[np.isfinite(b)]
    n1, n2 = len(a), len(b)
    if n1 == 0 or n2 == 0:
        return TestResult(math.nan, math.nan, "none: a sample is empty")
    ties = len(np.unique(np.concatenate([a, b]))) < n1 + n2
    if exact and ties:
        raise ValueError("the exact Mann-Whitney distribution needs values without ties")
    use_exact = exact or (exact is None and not ties and n1 * n2 <= EXACT_MAX_PRODUCT)
    res = stats.mannwhitneyu(
        a, b, use_continuity=True, alternative="two-sided", method="exact" if use_exact else "asymptotic"
    )
    return TestResult(float(res.statistic), float(res.pvalue), "exact" if use_exact else "normal approximation")


def fisher_exact(a: int, b: int, c: int, d: int) -> TestResult:
    """Two-sided Fisher's exact test of the 2 x 2 table [[a, b], [c, d]], margins fixed: the sum of the
    hypergeometric probabilities of every table no more likely than the observed one, the two-sided p-value
    of R's ``fisher.test`` (scipy counts tables within a relative 1e-14 of the observed probability as equally
    likely, R within 1e-7). The statistic is the sample odds ratio a d / (b c): infinite when b c is 0, NaN
    when a row or a column is empty (p is then 1)."""
    from scipy import stats

    if min(a, b, c, d) < 0:
        raise ValueError("a 2 x 2 table has no negative counts")
    if a + b + c + d == 0:
        return TestResult(math.nan, math.nan, "none: the table is empty")
    res = stats.fisher_exact(np.array([[a, b], [c, d]]), alternative="two-sided")
    return TestResult(float(res.statistic), float(res.pvalue), "exact")
