"""The two-sample tests against computations that share nothing with scipy: exact enumeration of every
arrangement (Mann-Whitney) or every table (Fisher) in integers, and the normal approximation's closed form."""

from __future__ import annotations

import math
from fractions import Fraction
from itertools import combinations

import numpy as np
import pytest

from reviewer_app.analysis.two_sample import EXACT_MAX_PRODUCT, fisher_exact, mann_whitney


def _u(x: list[float], y: list[float]) -> Fraction:
    return sum((Fraction(int(a > b)) + Fraction(int(a == b), 2) for a in x for b in y), Fraction(0))


def _enumerated_p(x: list[float], y: list[float]) -> float:
    """Two-sided exact p: twice the smaller tail of U over every split of the pooled values into the samples."""
    pooled = x + y
    us = [_u([pooled[i] for i in idx], [v for i, v in enumerate(pooled) if i not in idx])
          for idx in map(set, combinations(range(len(pooled)), len(x)))]  # fmt: skip
    u = _u(x, y)
    low, high = Fraction(sum(v <= u for v in us), len(us)), Fraction(sum(v >= u for v in us), len(us))
    return float(min(Fraction(1), 2 * min(low, high)))


@pytest.mark.parametrize("n1, n2, shift", [(1, 1, 0.0), (3, 7, 0.4), (4, 5, 1.5), (6, 6, 0.0), (8, 3, -2.0)])
def test_exact_mann_whitney_equals_the_enumeration(n1: int, n2: int, shift: float) -> None:
    rng = np.random.default_rng(n1 * 10 + n2)
    x, y = rng.normal(size=n1), rng.normal(shift, size=n2)
    got = mann_whitney(x, y)
    assert got.method == "exact"
    assert got.statistic == float(_u(list(x), list(y)))
    assert got.p_value == pytest.approx(_enumerated_p(list(x), list(y)), rel=1e-12, abs=0)


def test_normal_approximation_equals_its_closed_form_with_ties() -> None:
    x, y = [1, 2, 2, 3, 3, 3, 5], [2, 3, 4, 4, 5, 5, 6, 6]  # ties: the exact distribution does not apply
    got = mann_whitney(np.array(x), np.array(y))
    n1, n2, n = len(x), len(y), len(x) + len(y)
    _, sizes = np.unique(x + y, return_counts=True)
    var = n1 * n2 / 12 * ((n + 1) - float((sizes**3 - sizes).sum()) / (n * (n - 1)))
    z = (abs(got.statistic - n1 * n2 / 2) - 0.5) / math.sqrt(var)  # continuity-corrected
    assert got.method == "normal approximation" and got.statistic == float(_u(x, y))
    assert got.p_value == pytest.approx(math.erfc(z / math.sqrt(2)), rel=1e-12)
    with pytest.raises(ValueError, match="without ties"):
        mann_whitney(np.array(x), np.array(y), exact=True)


def test_mann_whitney_method_choice_and_edges() -> None:
    rng = np.random.default_rng(1)
    big = mann_whitney(rng.normal(size=50), rng.normal(size=EXACT_MAX_PRODUCT // 50 + 1))
    assert big.method == "normal approximation"  # past n1 x n2 = 2500 without ties
    small = rng.normal(size=(2, 6))
    assert mann_whitney(small[0], small[1], exact=False).method == "normal approximation"
    with_gaps = mann_whitney(np.array([1.0, np.nan, 2.0, np.inf]), np.array([3.0, -np.inf, 4.0]))
    assert with_gaps == mann_whitney(np.array([1.0, 2.0]), np.array([3.0, 4.0]))  # non-finite values dropped
    assert mann_whitney(np.full(40, 3.0), np.full(70, 3.0)).p_value == 1.0  # all equal: nothing to tell apart
    assert math.isnan(mann_whitney(np.array([]), np.array([1.0])).p_value)


def _fisher_enumerated(a: int, b: int, c: int, d: int) -> float:
    """Sum of the hypergeometric weights (integers) of the tables with the margins of [[a, b], [c, d]] that are
    no more likely than it, over the sum of all of them."""
    row1, col1, n = a + b, a + c, a + b + c + d
    weights = [math.comb(row1, k) * math.comb(n - row1, col1 - k)
               for k in range(max(0, col1 - (n - row1)), min(row1, col1) + 1)]  # fmt: skip
    observed = math.comb(row1, a) * math.comb(n - row1, c)
    return float(Fraction(sum(w for w in weights if w <= observed), sum(weights)))


def test_fisher_equals_the_enumeration_of_every_small_table() -> None:
    tables = [(a, b, c, n - a - b - c) for n in range(1, 11) for a in range(n + 1) for b in range(n + 1 - a)
              for c in range(n + 1 - a - b)]  # fmt: skip
    for table in tables:
        assert fisher_exact(*table).p_value == pytest.approx(_fisher_enumerated(*table), rel=1e-12, abs=0), table
    for table in ((774, 284, 1587, 13), (532, 129, 1792, 413), (40, 60, 55, 45)):  # large, down to p ~ 1e-105
        assert fisher_exact(*table).p_value == pytest.approx(_fisher_enumerated(*table), rel=1e-13, abs=0), table


def test_fisher_odds_ratio_and_edges() -> None:
    assert fisher_exact(3, 1, 1, 3).statistic == 9.0
    assert fisher_exact(0, 4, 3, 2).statistic == 0.0
    assert fisher_exact(4, 0, 3, 2).statistic == math.inf
    empty_column = fisher_exact(0, 10, 0, 10)
    assert math.isnan(empty_column.statistic) and empty_column.p_value == 1.0
    assert math.isnan(fisher_exact(0, 0, 0, 0).p_value)
    with pytest.raises(ValueError, match="negative"):
        fisher_exact(1, -1, 2, 3)
