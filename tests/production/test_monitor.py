"""The production monitor's statistics against hand-computed values: Wilson's interval, the two-proportion
z-test, Welch's t-test, windows on UTC days and ISO weeks, a known change point flagged (and only it) after
Holm's adjustment, a canary against its current model, and the panel-versus-production sentences."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from reviewer_app.analysis.inference import holm
from reviewer_app.analysis.two_sample import mann_whitney
from reviewer_app.production.monitor_stats import (
    DAY_MS,
    FISHER,
    MANN_WHITNEY,
    WELCH,
    Z_TEST,
    Sample,
    feedback_test,
    mean_ci,
    sorted_mann_whitney,
    wilson,
    window_days,
)
from reviewer_app.production.monitoring import build_monitor

MONDAY = 1_772_409_600_000  # 2026-03-02T00:00:00Z, a Monday


def events(model: str, days: int, per_day: int, ups: list[int], *, start: int = MONDAY, scale: tuple[float, float]
           = (-1.0, 1.0), scenario: str | None = None, latency: np.ndarray | None = None) -> pd.DataFrame:  # fmt: skip
    """``per_day`` thumbs events a day for ``days`` days, ``ups[d]`` of them +1 on day d, spread over the day;
    the same latencies every day (so no latency change)."""
    rows = []
    lat = np.linspace(200, 1200, per_day) if latency is None else latency
    for d in range(days):
        for i in range(per_day):
            rows.append((model, scenario, start + d * DAY_MS + i * (DAY_MS // per_day), 1.0 if i < ups[d] else -1.0,
                         scale[0], scale[1], float(lat[i]), float(lat[i]) / 4))  # fmt: skip
    frame = pd.DataFrame(rows, columns=["model", "scenario", "ts_ms", "feedback", "scale_min", "scale_max",
                                        "latency_ms", "ttft_ms"])  # fmt: skip
    return frame.astype({"model": "category", "scenario": "category"})


def test_wilson_interval_matches_the_hand_computed_value() -> None:
    # 8 of 10, z = 1.96: centre (0.8 + 1.96^2/20) / (1 + 1.96^2/10) = 0.71674, half-width 0.22661
    low, high = wilson(np.array([8]), np.array([10]))
    assert low[0] == pytest.approx(0.49016, abs=1e-4)
    assert high[0] == pytest.approx(0.94331, abs=1e-4)
    low, high = wilson(np.array([0]), np.array([20]))  # no successes: the interval still has width
    assert low[0] == pytest.approx(0.0, abs=1e-12) and high[0] == pytest.approx(0.16112, abs=1e-4)


def test_mean_interval_is_the_t_interval() -> None:
    # mean 3, variance 2.5, n 5: t(0.975, 4) = 2.776445, half-width 2.776445 * sqrt(0.5) = 1.963243
    low, high = mean_ci(np.array([3.0]), np.array([2.5]), np.array([5]))
    assert (low[0], high[0]) == pytest.approx((3 - 1.963243, 3 + 1.963243), abs=1e-5)


def test_two_proportion_z_test_by_hand() -> None:
    # 400/500 against 300/500: pooled 0.7, se sqrt(0.21 * 2/500) = 0.0289828, z = 6.90066
    a, b = Sample(500, 400, 0.6, 0.0, ()), Sample(500, 300, 0.2, 0.0, ())
    test, p = feedback_test(a, b, thumbs=True)
    assert test == Z_TEST
    assert p == pytest.approx(math.erfc(6.900656 / math.sqrt(2)), rel=1e-5)
    # Small counts: Fisher's exact test (3/4 against 0/4: p = 0.142857, Fisher's tea-tasting margins)
    test, p = feedback_test(Sample(4, 3, 0.5, 0.0, ()), Sample(4, 0, -1.0, 0.0, ()), thumbs=True)
    assert test == FISHER and p == pytest.approx(0.142857, abs=1e-5)


def test_welch_t_test_by_hand() -> None:
    # x = 1..5, y = 2, 4, .., 10: t = 3 / sqrt(2.5/5 + 10/5) = 1.897367, Welch df = 5.882353, p = 0.10753
    # (R: t.test(1:5, seq(2, 10, 2)) gives p-value = 0.1075; the fifth digit by Simpson's rule on the t density)
    x, y = np.arange(1, 6, dtype=float), np.arange(2, 11, 2, dtype=float)
    a = Sample(5, 0, float(x.mean()), float(x.var(ddof=1)), ())
    b = Sample(5, 0, float(y.mean()), float(y.var(ddof=1)), ())
    test, p = feedback_test(a, b, thumbs=False)
    assert test == WELCH and p == pytest.approx(0.107531, abs=1e-6)


def test_sorted_mann_whitney_gives_the_reference_p_values() -> None:
    rng = np.random.default_rng(3)
    for n1, n2, ties in ((60, 80, False), (300, 250, True), (30, 40, False)):
        x, y = rng.gamma(2, 300, n1), rng.gamma(2, 330, n2)
        if ties:
            x, y = np.round(x, -2), np.round(y, -2)
        assert sorted_mann_whitney(np.sort(x), np.sort(y)) == pytest.approx(mann_whitney(x, y).p_value, rel=1e-9)


def test_windows_are_utc_days_and_weeks_from_monday() -> None:
    sunday_late = MONDAY - 1  # 2026-03-01T23:59:59.999Z, a Sunday
    wednesday = MONDAY + 2 * DAY_MS + 5
    days = window_days(np.array([sunday_late, MONDAY, wednesday]), "1d")
    assert [str(np.datetime64(int(d), "D")) for d in days] == ["2026-03-01", "2026-03-02", "2026-03-04"]
    weeks = window_days(np.array([sunday_late, MONDAY, wednesday]), "7d")
    assert [str(np.datetime64(int(d), "D")) for d in weeks] == ["2026-02-23", "2026-03-02", "2026-03-02"]
    with pytest.raises(ValueError, match="unknown window"):
        window_days(np.array([MONDAY]), "2d")


def test_a_known_change_point_is_flagged_and_nothing_else() -> None:
    # 0.8 for seven days, then 0.6 for seven: only the eighth day's feedback changes.
    frame = events("m", 14, 500, [400] * 7 + [300] * 7)
    result = build_monitor(frame, "1d")
    assert len(result.windows) == 14
    assert [(w.window, w.n, w.mean) for w in result.windows[6:8]] == [
        ("2026-03-08", 500, 0.8),
        ("2026-03-09", 500, 0.6),
    ]
    feedback = [c for c in result.changes if c.metric == "feedback"]
    assert len(feedback) == 13 and len(result.changes) == 13 * 3  # feedback, latency and TTFT per window pair
    flagged = result.flagged
    assert [(c.metric, c.before_window, c.window, c.test) for c in flagged] == [
        ("feedback", "2026-03-08", "2026-03-09", Z_TEST)
    ]
    change = flagged[0]
    assert (change.before, change.after) == pytest.approx((0.8, 0.6))
    # Holm over all 39 tests: the smallest p is multiplied by 39
    assert change.p_adjusted == pytest.approx(39 * math.erfc(6.900656 / math.sqrt(2)), rel=1e-5)
    assert all(c.p_adjusted == 1.0 for c in result.changes if c is not change)  # identical windows
    assert {c.test for c in result.changes if c.metric != "feedback"} == {MANN_WHITNEY}


def test_holm_keeps_a_change_significant_alone_from_being_flagged() -> None:
    # Day 2 drops from 0.8 to 0.74 on 500 events: p = 0.021 alone, not after Holm over the other tests.
    frame = events("m", 3, 500, [400, 370, 370])
    result = build_monitor(frame, "1d")
    change = next(c for c in result.changes if c.metric == "feedback" and c.window == "2026-03-03")
    assert change.p_value < 0.05 and not change.flagged
    raw = np.array([c.p_value for c in result.changes])
    assert [c.p_adjusted for c in result.changes] == pytest.approx(list(holm(raw)))


def test_weekly_windows_and_scenarios() -> None:
    frame = pd.concat(
        [events("m", 14, 100, [80] * 14, scenario="qa"), events("m", 14, 100, [50] * 14, scenario="chat")]
    )
    result = build_monitor(frame.astype({"model": "category", "scenario": "category"}), "7d")
    overall = [w for w in result.windows if w.scenario is None]
    assert [(w.window, w.n, w.mean) for w in overall] == [("2026-03-02", 1400, 0.65), ("2026-03-09", 1400, 0.65)]
    by_scenario = {(w.scenario, w.window): w.mean for w in result.windows if w.scenario is not None}
    assert by_scenario[("qa", "2026-03-09")] == 0.8 and by_scenario[("chat", "2026-03-02")] == 0.5
    assert not result.flagged


def test_a_rating_scale_uses_means_and_welch() -> None:
    rng = np.random.default_rng(5)
    rows = []
    for d in range(2):
        for i in range(200):
            value = float(rng.integers(3, 6) if d == 0 else rng.integers(1, 4))  # 3-5, then 1-3
            rows.append(("m", None, MONDAY + d * DAY_MS + i * 1000, value, 1.0, 5.0, None, None))
    columns = ["model", "scenario", "ts_ms", "feedback", "scale_min", "scale_max", "latency_ms", "ttft_ms"]
    frame = pd.DataFrame(rows, columns=columns).astype({"model": "category", "scenario": "category"})
    result = build_monitor(frame, "1d")
    assert {w.ci_method for w in result.windows} == {"t"} and {w.scale for w in result.windows} == {"1-5"}
    assert [(c.metric, c.test, c.flagged) for c in result.changes] == [("feedback", WELCH, True)]
    assert result.windows[0].latency_n == 0 and result.windows[0].latency_p50 is None


def test_a_canary_is_compared_with_the_current_model() -> None:
    current = events("cur", 7, 400, [320] * 7)  # 0.8
    canary = events("new", 7, 400, [240] * 7, start=MONDAY + 3 * DAY_MS)  # 0.6, from day 4 on
    frame = pd.concat([current, canary]).astype({"model": "category", "scenario": "category"})
    result = build_monitor(frame, "1d", [("new", "cur")])
    canary_rows = [c for c in result.changes if c.kind == "canary" and c.metric == "feedback"]
    assert [c.window for c in canary_rows] == ["2026-03-05", "2026-03-06", "2026-03-07", "2026-03-08", "overall"]
    assert all(c.flagged and c.model == "new" and c.against == "cur" for c in canary_rows)
    overall = canary_rows[-1]
    assert (overall.n_before, overall.n_after) == (
        1600,
        1600,
    )  # the four shared days and overall.before == pytest.approx(0.8)
    assert overall.p_value <= min(c.p_value for c in canary_rows[:-1])
    missing = build_monitor(frame, "1d", [("ghost", "cur")])
    assert missing.notes == ("Canary ghost=cur: no feedback for ghost; not compared.",)
    assert not [c for c in missing.changes if c.kind == "canary"]


def test_an_empty_frame_gives_an_empty_result() -> None:
    result = build_monitor(events("m", 0, 1, []), "7d")
    assert result.events == 0 and result.windows == () and result.changes == ()
