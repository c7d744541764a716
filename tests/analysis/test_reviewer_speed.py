"""Flagging reviewers who answer implausibly fast (issue 8 point 12): the rule on simulated panels.

A reviewer is flagged when their median seconds per timed item is under a third of the median of the other
reviewers' medians (10+ timed items each); imported ratings (no time) never count.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from reviewer_app.analysis.diagnostics import (
    FAST_SHARE,
    MIN_TIMED,
    fast_reference,
    reviewer_diagnostics,
    seconds_per_item,
)
from reviewer_app.analysis.prepare import split_ratings
from reviewer_app.domain.report_panel import ReviewerRow
from reviewer_app.domain.rubric import Rubric
from tests.support.simulated_panels import likert, rating_panel

FAST = "answers implausibly fast"


def _panel(
    pace: dict[str, float], *, n_samples: int = 20, seed: int = 4, spread: float = 0.4
) -> tuple[pd.DataFrame, Rubric]:
    """A rating panel of ``len(pace)`` reviewers (r0, r1, ...) with two dimensions, where each showing takes
    ``pace[reviewer]`` seconds times a log-normal ``spread`` (the same time on both dimensions' rows, as
    stored)."""
    rng = np.random.default_rng(seed)
    ratings, _, rubric = rating_panel(
        rng, {"s": {"A": 3.0, "B": 3.4}}, n_samples=n_samples, biases=[0.0] * len(pace), overlap=min(3, len(pace)),
        dims=(likert("correctness"), likert("tone")),
    )  # fmt: skip
    showings = ratings[["item_id", "reviewer"]].drop_duplicates()
    factor = rng.lognormal(0.0, spread, len(showings))
    showings = showings.assign(seconds_spent=showings["reviewer"].map(pace).to_numpy() * factor)
    ratings = ratings.drop(columns="seconds_spent").merge(showings, on=["item_id", "reviewer"])
    return ratings, rubric


def _rows(ratings: pd.DataFrame, rubric: Rubric) -> dict[str, ReviewerRow]:
    return {r.reviewer: r for r in reviewer_diagnostics(split_ratings(ratings), rubric)}


def test_a_reviewer_far_faster_than_the_rest_is_flagged_with_the_numbers():
    ratings, rubric = _panel({"r0": 40.0, "r1": 55.0, "r2": 35.0, "r3": 6.0})
    rows = _rows(ratings, rubric)
    fast = [r for r in rows.values() if any(FAST in x for x in r.reasons)]
    assert [r.reviewer for r in fast] == ["r3"]
    r3 = rows["r3"]
    mine = ratings[ratings["reviewer"] == "r3"].drop_duplicates("item_id")
    assert r3.flag and r3.timed_n == len(mine) and r3.median_seconds == pytest.approx(mine["seconds_spent"].median())
    others = float(np.median([rows[r].median_seconds for r in ("r0", "r1", "r2")]))
    reason = next(x for x in r3.reasons if FAST in x)
    assert f"median {r3.median_seconds:.1f} s per item against {others:.0f} s" in reason
    assert f"({len(mine)} timed items)" in reason


def test_time_counts_once_per_showing_and_is_the_median():
    ratings = pd.DataFrame(
        {
            "item_id": [1, 1, 2, 2, 3, 4],
            "reviewer": ["a", "a", "a", "a", "a", "b"],
            "occurrence": [0, 0, 0, 0, 0, 0],
            "seconds_spent": [10.0, 10.0, 20.0, 20.0, 90.0, np.nan],  # two dimensions' rows of items 1 and 2
            "is_gold": False,
        }
    )
    speeds = seconds_per_item(split_ratings(ratings)).set_index("reviewer")
    assert speeds.loc["a", "median_seconds"] == 20.0 and speeds.loc["a", "timed_n"] == 3  # not 15 over 5 rows
    assert "b" not in speeds.index  # an imported answer has no time


def test_one_reviewer_is_never_flagged_as_fast():
    ratings, rubric = _panel({"r0": 2.0})
    row = _rows(ratings, rubric)["r0"]
    assert row.median_seconds is not None and row.median_seconds < 5 and not row.reasons


def test_imported_ratings_are_never_flagged():
    ratings, rubric = _panel({"r0": 40.0, "r1": 50.0, "r2": 45.0, "r3": 3.0})
    ratings.loc[ratings["reviewer"] == "r3", "seconds_spent"] = np.nan  # r3's answers came from a file
    rows = _rows(ratings, rubric)
    assert rows["r3"].median_seconds is None and rows["r3"].timed_n is None
    assert not any(FAST in x for r in rows.values() for x in r.reasons)
    ratings["seconds_spent"] = np.nan  # everything imported
    assert not any(r.reasons for r in _rows(ratings, rubric).values() if r.median_seconds is not None)
    assert all(r.median_seconds is None for r in _rows(ratings, rubric).values())


def test_a_panel_where_everyone_is_fast_flags_no_one():
    ratings, rubric = _panel({"r0": 4.0, "r1": 5.0, "r2": 3.5, "r3": 4.5})
    assert not any(FAST in x for r in _rows(ratings, rubric).values() for x in r.reasons)


def test_a_slow_colleague_does_not_make_a_normal_reviewer_fast():
    # The bar is the median of the others: one reviewer who leaves the page open for minutes cannot raise it.
    ratings, rubric = _panel({"r0": 40.0, "r1": 45.0, "r2": 600.0, "r3": 30.0})
    assert not any(FAST in x for r in _rows(ratings, rubric).values() for x in r.reasons)


@pytest.mark.parametrize(("timed", "flagged"), [(MIN_TIMED - 1, False), (MIN_TIMED, True)])
def test_too_few_timed_items_are_not_judged(timed, flagged):
    ratings, rubric = _panel({"r0": 40.0, "r1": 55.0, "r2": 35.0, "r3": 5.0})
    mine = ratings[ratings["reviewer"] == "r3"]["item_id"].drop_duplicates()
    untimed = mine.iloc[timed:]
    ratings.loc[(ratings["reviewer"] == "r3") & ratings["item_id"].isin(untimed), "seconds_spent"] = np.nan
    row = _rows(ratings, rubric)["r3"]
    assert row.timed_n == timed
    assert any(FAST in x for x in row.reasons) == flagged


def test_colleagues_with_too_few_timed_items_do_not_set_the_bar():
    speeds = pd.DataFrame(
        {"reviewer": ["a", "b", "c"], "median_seconds": [5.0, 60.0, 500.0], "timed_n": [20, 20, MIN_TIMED - 1]}
    )
    assert fast_reference(speeds) == {"a": 60.0, "b": 5.0}  # c is neither judged nor a reference
    lone = speeds.iloc[[0]]
    assert fast_reference(lone) == {}  # no colleague: nothing to compare with


@pytest.mark.parametrize(("seconds", "flagged"), [(19.9, True), (20.1, False)])
def test_the_threshold_is_a_third_of_the_others_median(seconds, flagged):
    # Every item takes exactly its reviewer's pace (no spread): the others' median is 60 s, a third of it 20 s.
    ratings, rubric = _panel({"r0": 50.0, "r1": 60.0, "r2": 70.0, "r3": seconds}, spread=0.0)
    assert FAST_SHARE == pytest.approx(1 / 3)
    assert any(FAST in x for x in _rows(ratings, rubric)["r3"].reasons) == flagged


def test_frames_without_times_give_no_speed():
    ratings, rubric = _panel({"r0": 40.0, "r1": 50.0, "r2": 3.0})
    rows = _rows(ratings.drop(columns="seconds_spent"), rubric)
    assert all(r.median_seconds is None and r.timed_n is None for r in rows.values())
    assert not any(FAST in x for r in rows.values() for x in r.reasons)
    ratings["seconds_spent"] = None  # imported through an object column
    assert all(r.median_seconds is None for r in _rows(ratings, rubric).values())
