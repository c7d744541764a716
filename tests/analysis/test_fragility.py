"""How fragile a verdict is, checked against brute force: on many small simulated panels every subset of up to
three samples (and of reviewers) is dropped in turn; the greedy count always undoes the verdict, is never below
the true minimum, and equals it in most panels (the rate is measured here). A clear winner is not fragile, a
winner by one outlying sample is, and the answer never depends on a random seed."""

from __future__ import annotations

from itertools import combinations

import numpy as np
import pandas as pd
import pytest

from reviewer_app.analysis.decisions import pair_decisions
from reviewer_app.analysis.fragility import _fewest, _tolerance, fragility_rows, reviewer_parts, subset_estimate
from reviewer_app.analysis.prepare import add_scores, overall_rows, split_ratings
from reviewer_app.analysis.ranking import Estimate, rating_estimate
from tests.support.simulated_panels import rating_panel


def _panel(seed: int, gap: float, n_samples: int = 12) -> tuple[Estimate, list[str], pd.DataFrame]:
    rng = np.random.default_rng(seed)
    quality = {"qa": {"A": 3.0 + gap, "B": 3.0, "C": 3.0 - gap}}
    ratings, _o, rubric = rating_panel(rng, quality, n_samples=n_samples, biases=[0.0, 0.3, -0.3, 0.1], noise_sd=0.7)
    overall = overall_rows(add_scores(split_ratings(ratings).main, rubric))
    samples = sorted(overall["sample_id"].unique().tolist())
    est = rating_estimate(overall, ["A", "B", "C"], samples, np.ones((1, len(samples))))
    return est, samples, overall


def _true_minimum(est: Estimate, a: int, b: int, n: int, up_to: int = 3) -> int | None:
    for k in range(1, up_to + 1):
        for drop in combinations(range(n), k):
            keep = np.ones(n, dtype=bool)
            keep[list(drop)] = False
            if not pair_decisions(subset_estimate(est, keep)).better[a, b]:
                return k
    return None


@pytest.mark.slow
def test_greedy_against_every_subset_on_small_panels() -> None:
    compared = exact = fragile = 0
    for seed in range(25):
        est, samples, _ = _panel(seed, gap=0.6)
        n = len(samples)
        for row in fragility_rows(est, samples, scenario="qa", dimension="overall"):
            if row.claim != "separation":
                continue
            a, b = est.models.index(row.better), est.models.index(row.worse or "")
            if row.samples_to_undo is not None:  # dropping exactly those undoes it: checked
                keep = np.array([s not in row.dropped_samples for s in samples])
                assert not pair_decisions(subset_estimate(est, keep)).better[a, b]
            truth = _true_minimum(est, a, b, n)
            if truth is None:
                assert row.samples_to_undo is None or row.samples_to_undo > 3
                continue
            compared += 1
            if row.samples_to_undo is None:  # the greedy order missed it within its budget: a bound of "more"
                continue
            assert row.samples_to_undo >= truth
            exact += row.samples_to_undo == truth
            fragile += row.fragile and truth <= 2
    assert compared >= 15, compared
    # Measured over these 25 panels: 19 of 24 (79%); over 40 panels 28 of 37 (76%). docs/benchmarks.md.
    assert exact / compared >= 0.7, (exact, compared)
    assert fragile >= 1  # some of these small panels' verdicts rest on one or two samples, and are flagged


def test_reviewers_against_every_subset() -> None:
    checked = 0
    for seed in range(20):
        est, samples, overall = _panel(seed, gap=0.6)
        parts = reviewer_parts(overall, est, samples, pairwise=False)
        for row in fragility_rows(est, samples, scenario="qa", dimension="overall", by_reviewer=parts):
            if row.claim != "separation" or row.reviewers_to_undo is None:
                continue
            a, b = est.models.index(row.better), est.models.index(row.worse or "")
            names = parts.names
            kept = overall[~overall["reviewer"].isin(list(row.dropped_reviewers))]
            rebuilt = rating_estimate(kept, est.models, samples, np.ones((1, len(samples))))
            assert not pair_decisions(rebuilt).better[a, b]  # the subtraction is the rebuild: it undoes it
            fewest = next(
                k for k in range(1, len(names) + 1) for drop in combinations(names, k)
                if not pair_decisions(rating_estimate(overall[~overall["reviewer"].isin(drop)], est.models, samples,
                                                      np.ones((1, len(samples))))).better[a, b]
            )  # fmt: skip
            assert row.reviewers_to_undo >= fewest
            checked += 1
    assert checked >= 5


def test_a_clear_winner_is_not_fragile() -> None:
    est, samples, _ = _panel(1, gap=1.5, n_samples=40)
    rows = fragility_rows(est, samples, scenario="qa", dimension="overall")
    top = rows[0]
    assert top.claim == "top" and top.better == "A" and not top.fragile
    assert top.samples_to_undo is None or top.samples_to_undo > 2
    assert "A is first holds" in top.sentence


@pytest.mark.parametrize("seed", [3, 4])
def test_the_answer_does_not_depend_on_any_seed(seed: int) -> None:
    est, samples, overall = _panel(seed, gap=0.6)
    parts = reviewer_parts(overall, est, samples, pairwise=False)
    first = fragility_rows(est, samples, scenario="qa", dimension="overall", by_reviewer=parts)
    again = fragility_rows(est, samples, scenario="qa", dimension="overall", by_reviewer=parts)
    assert first == again


@pytest.mark.parametrize("curve", [0.0, 1.0, 3.0])
def test_the_search_finds_the_turn_within_its_tolerance_in_few_decisions(curve: float) -> None:
    """A margin that falls monotonically with the favour dropped, straight or curved, turning at a known k: the
    search returns the first k that undoes the verdict (to one sample below 100, within 2% above), never a k
    that holds, and needs far fewer decisions than doubling and bisection (12-16 at these budgets)."""
    rng = np.random.default_rng(0)
    decisions: list[int] = []
    for budget in (10, 80, 833, 2500):
        favour = np.sort(rng.exponential(1.0, budget + 50))[::-1]
        order = np.arange(len(favour))
        x = np.concatenate(([0.0], np.cumsum(favour)))
        for turn in sorted({1, 2, budget // 7 + 1, budget // 2, budget - 1, budget}):
            calls = [0]

            def margin(
                drop: np.ndarray, turn: int = turn, calls: list[int] = calls, x: np.ndarray = x
            ) -> tuple[bool, float]:
                calls[0] += 1
                k = len(drop)
                f = (x[turn] - x[k]) * (1.0 + curve * x[k] / x[-1]) - 1e-6  # crosses 0 just below the turn
                return k < turn, f

            found = _fewest(order, favour, budget, margin(order[:0])[1], margin)
            assert found is not None and turn <= found <= turn + _tolerance(found), (budget, turn, found)
            decisions.append(calls[0] - 1)
        assert _fewest(order, favour, budget, 1.0, lambda d: (True, 1.0)) is None  # holds at the budget: None
    assert float(np.mean(decisions)) <= 6, decisions
