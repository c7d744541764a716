"""Rankings: Bradley-Terry against choix, invariance to the blind labels, ranks, letters and sentences."""

from __future__ import annotations

import choix
import numpy as np
import pytest

from reviewer_app.analysis.decisions import describe, ranking_rows, separation_warning
from reviewer_app.analysis.letters import letters_and_tiers, ranks_from
from reviewer_app.analysis.prepare import bootstrap_weights
from reviewer_app.analysis.ranking import fit_bradley_terry, rating_estimate
from reviewer_app.analysis.report import build_report
from tests.support.simulated_panels import estimate_from_scores, likert, pairwise_panel, rating_panel


def _random_comparisons(seed: int, n_items: int = 6, n: int = 120) -> list[tuple[int, int]]:
    rng = np.random.default_rng(seed)
    strength = rng.normal(0, 1, n_items)
    data = []
    for _ in range(n):
        i, j = (int(x) for x in rng.choice(n_items, 2, replace=False))
        p = 1 / (1 + np.exp(strength[j] - strength[i]))
        data.append((i, j) if rng.random() < p else (j, i))
    return data


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_bradley_terry_matches_choix(seed):
    data = _random_comparisons(seed)
    wins = np.zeros((6, 6))
    for w, lo in data:
        wins[w, lo] += 1
    ours = fit_bradley_terry(wins, alpha=0.01)
    ref = choix.opt_pairwise(6, data, alpha=0.01, tol=1e-12)
    assert np.abs(ours - ref).max() < 1e-6


def test_ties_count_half_like_doubled_choix_data():
    # A tie counts half a win each way: the same as doubling every decisive comparison and adding one
    # win each way per tie, with the penalty doubled too.
    data = _random_comparisons(5, n_items=4, n=60)
    ties = [(0, 1), (2, 3), (0, 3), (1, 2), (1, 2)]
    wins = np.zeros((4, 4))
    for w, lo in data:
        wins[w, lo] += 1
    for a, b in ties:
        wins[a, b] += 0.5
        wins[b, a] += 0.5
    doubled = [c for c in data for _ in range(2)] + [c for a, b in ties for c in ((a, b), (b, a))]
    ref = choix.opt_pairwise(4, doubled, alpha=0.02, tol=1e-12)
    assert np.abs(fit_bradley_terry(wins, alpha=0.01) - ref).max() < 1e-6


def test_undefeated_model_stays_finite_and_batch_fit_equals_single_fits():
    wins = np.array([[0, 8, 9], [0, 0, 3], [0, 2, 0]], dtype=float)
    theta = fit_bradley_terry(wins)
    assert np.all(np.isfinite(theta)) and theta.argmax() == 0
    assert theta.sum() == pytest.approx(0.0, abs=1e-9)
    batch = np.stack([wins, wins.T, wins * 3])
    fitted = fit_bradley_terry(batch)
    for k in range(3):
        assert np.abs(fitted[k] - fit_bradley_terry(batch[k])).max() < 1e-9


def test_rank_counts_models_significantly_better_and_letters_group_unseparated():
    better = np.zeros((3, 3), dtype=bool)
    better[0, 2] = better[1, 2] = True  # A and B both beat C; A and B not separated
    assert ranks_from(better).tolist() == [1, 1, 3]
    letters, tiers = letters_and_tiers([0, 1, 2], better | better.T)
    assert letters == ["a", "a", "b"] and tiers.tolist() == [1, 1, 2]


def test_overlapping_letters_when_separation_is_not_transitive():
    separated = np.zeros((3, 3), dtype=bool)
    separated[0, 2] = separated[2, 0] = True  # A > C; B separated from neither
    letters, tiers = letters_and_tiers([0, 1, 2], separated)
    assert letters == ["a", "ab", "b"] and tiers.tolist() == [1, 1, 2]


def test_sentence_names_ties_and_who_is_behind():
    rng = np.random.default_rng(0)
    est = estimate_from_scores(rng, {"A": 3.0, "B": 3.0, "C": 1.0}, n_samples=40, noise_sd=1.0)
    ranking = ranking_rows(est, "extraction")
    line = describe(ranking.rows, ranking.better, est.models, "extraction")
    first, second = (r.model for r in ranking.rows[:2])
    assert line == f"{first} and {second} are tied on extraction; C is behind both."


def test_partial_separation_is_said_honestly():
    # A > C significantly, B (noisy, between them) not separated from either.
    rng = np.random.default_rng(3)
    est = estimate_from_scores(
        rng, {"A": 3.0, "B": 2.5, "C": 2.0}, n_samples=30, noise_sd={"A": 0.3, "B": 3.0, "C": 0.3}
    )
    ranking = ranking_rows(est, "x")
    assert [r.letters for r in ranking.rows] == ["a", "ab", "b"]
    line = describe(ranking.rows, ranking.better, est.models, "x")
    assert line == "A and B are tied on x; C is behind A (not clearly behind B)."


def _rows_by_model(report, rename=lambda m: m):
    out = {}
    blocks = [(b.scenario, b.ranking) for b in report.scenarios] + [("*", report.overall.ranking)]
    for scenario, ranking in blocks:
        for r in ranking:
            key = (scenario, r.dimension, rename(r.model))
            out[key] = (r.score, r.ci_low, r.ci_high, r.rank, r.tier, r.letters, r.n)
    return out


@pytest.mark.parametrize("mode", ["rating", "pairwise"])
def test_rankings_invariant_to_permuting_blind_labels(mode):
    rng = np.random.default_rng(11)
    if mode == "rating":
        ratings, outputs, rubric = rating_panel(
            rng, {"s1": {"A": 3.0, "B": 3.4, "C": 2.5}}, n_samples=30, biases=[0.0, 0.2, -0.2], overlap=2
        )
    else:
        ratings, outputs, rubric = pairwise_panel(
            rng, {"s1": {"A": 0.3, "B": 0.0, "C": -0.4}}, n_samples=30, n_reviewers=3
        )
    perm = {"A": "zeta", "B": "alpha", "C": "mu"}
    renamed = ratings.copy()
    renamed["model_a"] = renamed["model_a"].map(perm)
    if mode == "pairwise":
        renamed["model_b"] = renamed["model_b"].map(perm)
    base = build_report(ratings, outputs, rubric, batch="b", seed=3, rounds=300, diagnostics=False)
    again = build_report(
        renamed,
        outputs.assign(model=outputs["model"].map(perm)),
        rubric,
        batch="b",
        seed=3,
        rounds=300,
        diagnostics=False,
    )
    left, right = _rows_by_model(base, lambda m: perm[m]), _rows_by_model(again)
    assert left.keys() == right.keys()
    for key, values in left.items():
        assert right[key][3:] == values[3:], key
        assert right[key][:3] == pytest.approx(values[:3], abs=1e-9), key


def test_warning_when_samples_too_few_to_separate():
    rng = np.random.default_rng(2)
    ratings, outputs, rubric = rating_panel(
        rng, {"tiny": {"A": 3.0, "B": 3.05}}, n_samples=6, biases=[0.0, 0.1], overlap=2
    )
    report = build_report(ratings, outputs, rubric, batch="b", seed=1, rounds=300, diagnostics=False)
    warnings = report.scenarios[0].warnings
    assert any("6 samples can separate" in w and "would be needed" in w for w in warnings)


def test_no_warning_when_models_are_far_apart():
    rng = np.random.default_rng(2)
    ratings, _, _ = rating_panel(
        rng, {"big": {"A": 4.0, "B": 2.0}}, n_samples=80, biases=[0.0, 0.1], overlap=2, dims=(likert("q"),)
    )
    frame = ratings.assign(score=ratings["value"].astype(float))
    samples = sorted(frame["sample_id"].unique())
    est = rating_estimate(frame, ["A", "B"], samples, bootstrap_weights(len(samples), 300, np.random.default_rng(0)))
    assert separation_warning(est, len(samples), "big", "points") is None
