"""Pairwise scores in words (issue 8 point 11): the chance to beat a model of average strength.

Bradley-Terry strengths are log-odds: model i beats model j with probability 1 / (1 + exp(-(t_i - t_j))), and
the penalised fit centres them (they sum to 0). The chance to beat an average model is then the logistic of a
strength minus the ranking's mean strength. Checked against hand computations on data the model fits exactly.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from reviewer_app.analysis.decisions import ranking_rows
from reviewer_app.analysis.prepare import bootstrap_weights
from reviewer_app.analysis.ranking import average_strength, pairwise_estimate, win_vs_average
from reviewer_app.analysis.report import build_report
from reviewer_app.domain.report import report_to_dict
from reviewer_app.reporting.formats import render
from tests.analysis.test_report import _rating_batch
from tests.support.simulated_panels import pairwise_panel


def _comparisons(wins: dict[tuple[str, str], int], n_samples: int) -> pd.DataFrame:
    """``wins[(a, b)]`` wins of a over b on every one of ``n_samples`` samples (outcome "a": model_a won)."""
    rows = [
        {"sample_id": f"s{k}", "model_a": a, "model_b": b, "outcome": "a"}
        for k in range(n_samples)
        for (a, b), n in wins.items()
        for _ in range(n)
    ]
    return pd.DataFrame(rows)


def _rows(frame: pd.DataFrame) -> dict[str, tuple[float | None, float | None, float | None]]:
    models = sorted(set(frame["model_a"]) | set(frame["model_b"]))
    samples = sorted(frame["sample_id"].unique())
    weights = bootstrap_weights(len(samples), 200, np.random.default_rng(0))
    est = pairwise_estimate(frame, models, samples, weights)
    return {
        r.model: (r.win_vs_average, r.win_vs_average_ci_low, r.win_vs_average_ci_high)
        for r in ranking_rows(est, "overall").rows
    }


def test_two_models_three_to_one():
    # A beats B 3 times out of 4: t_A - t_B = log 3, centred t_A = log(3) / 2, so A beats an average model
    # with probability 1 / (1 + 3^(-1/2)) = sqrt(3) / (1 + sqrt(3)) = 0.634 (and B with 0.366).
    rows = _rows(_comparisons({("A", "B"): 3, ("B", "A"): 1}, n_samples=100))
    hand = math.sqrt(3) / (1 + math.sqrt(3))
    assert rows["A"][0] == pytest.approx(hand, abs=1e-3)
    assert rows["B"][0] == pytest.approx(1 - hand, abs=1e-3)
    # Every sample is alike, so every bootstrap replicate is too: the interval is the point.
    assert rows["A"][1] == pytest.approx(rows["A"][0]) and rows["A"][2] == pytest.approx(rows["A"][0])


def test_three_models_on_a_log_two_ladder():
    # A beats B and B beats C 2 times in 3, A beats C 4 times in 5: exactly the Bradley-Terry strengths
    # log 2, 0, -log 2, so the chances against the average (B's strength) are 2/3, 1/2 and 1/3.
    rows = _rows(
        _comparisons({("A", "B"): 2, ("B", "A"): 1, ("B", "C"): 2, ("C", "B"): 1, ("A", "C"): 4, ("C", "A"): 1}, 60)
    )
    assert [rows[m][0] for m in "ABC"] == pytest.approx([2 / 3, 1 / 2, 1 / 3], abs=2e-3)


def test_the_transform_is_the_logistic_of_the_centred_strength():
    strengths = np.array([math.log(3) / 2, -math.log(3) / 2, np.nan])
    assert win_vs_average(strengths, 0.0)[:2] == pytest.approx(
        [math.sqrt(3) / (1 + math.sqrt(3)), 1 / (1 + math.sqrt(3))]
    )
    assert np.isnan(win_vs_average(strengths, 0.0)[2])
    assert win_vs_average(np.array([1.5, 0.5]), 1.0) == pytest.approx(
        [1 / (1 + math.exp(-0.5)), 1 / (1 + math.exp(0.5))]
    )


def test_every_pairwise_ranking_says_its_strengths_in_words():
    ratings, outputs, rubric = pairwise_panel(
        np.random.default_rng(3), {"x": {"A": 0.8, "B": 0.0, "C": -0.6}, "y": {"A": 0.2, "B": 0.4, "C": -0.3}},
        n_samples=25, n_reviewers=4,
    )  # fmt: skip
    report = build_report(ratings, outputs, rubric, batch="duel", seed=2, rounds=200)
    rankings = [b.ranking for b in (*report.scenarios, report.overall)] + [report.overall.composite.ranking]
    for ranking in rankings:
        for dim in {r.dimension for r in ranking}:
            rows = [r for r in ranking if r.dimension == dim]
            mean = float(np.mean([r.score for r in rows]))
            for r in rows:
                assert r.score is not None and r.win_vs_average is not None
                assert r.win_vs_average == pytest.approx(1 / (1 + math.exp(-(r.score - mean))))
                for end, chance in ((r.ci_low, r.win_vs_average_ci_low), (r.ci_high, r.win_vs_average_ci_high)):
                    assert (end is None) == (chance is None)
                    if end is not None:
                        assert chance == pytest.approx(1 / (1 + math.exp(-(end - mean))))
    one_fit = [r.score for r in report.scenarios[0].ranking if r.dimension == "overall"]
    assert sum(one_fit) == pytest.approx(0.0, abs=1e-9)  # the penalised fit centres the strengths
    md, html = render(report, "md"), render(report, "html")
    assert "| beats average |" in md and "<th>beats an average model</th>" in html
    assert "Bradley-Terry strengths (log-odds)" in md and "Bradley-Terry strengths (log-odds)" in html


def test_rating_mode_has_no_such_column_or_field():
    ratings, outputs, rubric = _rating_batch()
    report = build_report(ratings, outputs, rubric, batch="pilot", seed=5, rounds=200)
    assert all("win_vs_average" not in row for row in report_to_dict(report)["overall"]["ranking"])
    md, html = render(report, "md"), render(report, "html")
    assert "beats average" not in md and "beats an average model" not in html
    assert "win_vs_average" in render(report, "csv").splitlines()[0]  # the CSV's columns do not depend on the mode


def test_average_strength_is_the_mean_of_the_ranked_models():
    frame = _comparisons({("A", "B"): 3, ("B", "A"): 1}, n_samples=10)
    samples = sorted(frame["sample_id"].unique())
    est = pairwise_estimate(frame, ["A", "B", "C"], samples, bootstrap_weights(10, 50, np.random.default_rng(1)))
    assert est.n[2] == 0  # C never played: not ranked, and not part of the average
    assert average_strength(est) == pytest.approx(float(np.mean(est.point[:2])))
