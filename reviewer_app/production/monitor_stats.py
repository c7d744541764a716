"""The production monitor's statistics: windows, intervals and the tests, as pure functions.

Windows are calendar windows in UTC: ``1d`` a day from midnight, ``7d`` an ISO week from Monday 00:00. The
feedback's 95% CI: thumbs (the -1..1 scale), the share of +1 with Wilson's score interval; any other scale,
the mean with the t interval. Latency and time to first token as median and p95 (linear interpolation).

Tests, each named in its row, none random (so the same data always give the same verdicts):

* feedback between two windows (or two models): thumbs, the two-proportion z-test (pooled variance), or
  Fisher's exact test when an expected count of the 2 x 2 table is under 5; other scales, Welch's t-test;
* latency and TTFT: the Mann-Whitney U test (a shift of the distribution; the rows show the medians).

Apart from the assembling (``monitor``: which windows are compared, Holm's adjustment, the rows) and from the
panel-versus-production comparison (``panel``), which both use them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from reviewer_app.analysis.inference import t_quantile, t_two_sided_p
from reviewer_app.analysis.two_sample import EXACT_MAX_PRODUCT, fisher_exact, mann_whitney
from reviewer_app.domain.production import WINDOWS

DAY_MS = 86_400_000
Z95 = 1.959963984540054  # the standard normal's 0.975 quantile
FISHER_BELOW = 5.0  # an expected count under this: Fisher's exact test instead of the z-test
Z_TEST = "two-proportion z-test"
FISHER = "Fisher's exact test"
WELCH = "Welch's t-test"
MANN_WHITNEY = "Mann-Whitney U test"
LATENCY_METRICS = ("latency_ms", "ttft_ms")


def window_days(ts_ms: np.ndarray, window: str) -> np.ndarray:
    """The first day (days since 1970-01-01, UTC) of the window of each timestamp: the day itself (``1d``) or
    the Monday of its week (``7d``; 1970-01-01 was a Thursday, day 3 of its week)."""
    if window not in WINDOWS:
        raise ValueError(f"unknown window {window!r}; use one of {', '.join(WINDOWS)}")
    days = np.asarray(ts_ms, dtype=np.int64) // DAY_MS
    if window == "7d":
        days = days - (days + 3) % 7
    return days


def day_label(day: int) -> str:
    """Day number as YYYY-MM-DD."""
    return str(np.datetime64(int(day), "D"))


def wilson(k: np.ndarray, n: np.ndarray, z: float = Z95) -> tuple[np.ndarray, np.ndarray]:
    """Wilson's score interval for k successes out of n (Wilson 1927), vectorised; NaN where n is 0."""
    k, n = np.asarray(k, dtype=float), np.asarray(n, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        p = k / n
        denom = 1 + z**2 / n
        centre = (p + z**2 / (2 * n)) / denom
        half = z / denom * np.sqrt(p * (1 - p) / n + z**2 / (4 * n**2))
    return centre - half, centre + half


def mean_ci(mean: np.ndarray, var: np.ndarray, n: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The t 95% interval of a mean (NaN where n < 2)."""
    n = np.asarray(n, dtype=float)
    df = np.maximum(n - 1, 1)
    half = t_quantile(0.975, df) * np.sqrt(np.asarray(var, dtype=float) / n)
    half = np.where(n >= 2, half, np.nan)
    return mean - half, mean + half


@dataclass(frozen=True)
class Sample:
    """What the tests need of one group of events: counts and moments of the feedback, and its latency and
    TTFT values sorted (NaN left out): sorted once per window, they serve both tests the window is in."""

    n: int
    up: int  # thumbs: events with +1
    mean: float
    var: float
    timings: tuple[np.ndarray, ...]  # per LATENCY_METRICS, sorted


def sorted_mann_whitney(x: np.ndarray, y: np.ndarray) -> float:
    """Two-sided p of the Mann-Whitney U test of sorted ``x`` against sorted ``y``: the same p-value as
    ``two_sample.mann_whitney`` (which it calls for samples small enough for the exact distribution), with
    U counted by binary search instead of ranking the pooled sample: a million latencies over a thousand
    window pairs took seconds that way."""
    n1, n2 = len(x), len(y)
    if n1 * n2 <= EXACT_MAX_PRODUCT:
        return mann_whitney(x, y).p_value
    pooled = np.sort(np.concatenate([x, y]), kind="stable")  # two sorted runs: a merge
    starts = np.flatnonzero(np.r_[True, pooled[1:] != pooled[:-1]])
    sizes = np.diff(np.r_[starts, len(pooled)]).astype(float)
    below = np.searchsorted(y, x, "left").sum()  # pairs with y < x; ties count half
    u = float(below if len(starts) == n1 + n2 else (below + np.searchsorted(y, x, "right").sum()) / 2)
    n = n1 + n2
    var = n1 * n2 / 12 * ((n + 1) - float((sizes**3 - sizes).sum()) / (n * (n - 1)))
    if var <= 0:
        return 1.0
    z = (abs(u - n1 * n2 / 2) - 0.5) / math.sqrt(var)
    return float(min(1.0, math.erfc(max(z, 0.0) / math.sqrt(2))))


def quantile_sorted(values: np.ndarray, q: float) -> float | None:
    """The ``q`` quantile of sorted ``values`` by linear interpolation (numpy's and pandas' default)."""
    if not len(values):
        return None
    pos = q * (len(values) - 1)
    lo = int(math.floor(pos))
    hi = min(lo + 1, len(values) - 1)
    return float(values[lo] + (values[hi] - values[lo]) * (pos - lo))


def feedback_test(a: Sample, b: Sample, thumbs: bool) -> tuple[str, float]:
    """The test of ``b`` against ``a`` on feedback (see the module's docstring): its name and two-sided p."""
    if thumbs:
        n = a.n + b.n
        k = a.up + b.up
        pooled = k / n
        expected = min(a.n * pooled, a.n * (1 - pooled), b.n * pooled, b.n * (1 - pooled))
        if expected < FISHER_BELOW:
            return FISHER, fisher_exact(a.up, a.n - a.up, b.up, b.n - b.up).p_value
        se = math.sqrt(pooled * (1 - pooled) * (1 / a.n + 1 / b.n))
        if se == 0:
            return Z_TEST, 1.0
        z = (b.up / b.n - a.up / a.n) / se
        return Z_TEST, math.erfc(abs(z) / math.sqrt(2))
    if a.n < 2 or b.n < 2:
        return WELCH, math.nan
    va, vb = a.var / a.n, b.var / b.n
    if va + vb == 0:
        return WELCH, 1.0 if a.mean == b.mean else 0.0
    t = (b.mean - a.mean) / math.sqrt(va + vb)
    df = (va + vb) ** 2 / (va**2 / (a.n - 1) + vb**2 / (b.n - 1))
    return WELCH, float(t_two_sided_p(np.array([t]), np.array([df]))[0])


def finite_or_none(x: Any) -> float | None:
    """``x`` as a float; None where it is missing or not finite (a row has no NaN)."""
    return None if x is None or not math.isfinite(float(x)) else float(x)
