"""Simulated panels with a known truth: the 95% CIs must cover it and equal models must share a tier.

200 simulations each, 1,000 bootstrap rounds per simulation (as in the report).
"""

from __future__ import annotations

import numpy as np
import pytest

from reviewer_app.analysis.decisions import ranking_rows
from reviewer_app.analysis.prepare import bootstrap_weights
from reviewer_app.analysis.ranking import pairwise_estimate, rating_estimate
from tests.support.simulated_panels import expected_likert, pairwise_panel, rating_panel

SIMS, ROUNDS = 200, 1000


@pytest.mark.slow
def test_rating_cis_cover_truth_and_equal_models_share_a_tier():
    quality = {"A": 3.4, "B": 3.4, "C": 2.6}
    biases = [-0.4, -0.1, 0.1, 0.4]  # reviewer leniency, centred: the panel's mean is the reference
    noise_sd, sample_sd = 0.8, 0.6
    truth = {m: expected_likert(q, biases, (noise_sd**2 + sample_sd**2) ** 0.5, 1, 5) for m, q in quality.items()}
    covered = total = same_tier = 0
    rng = np.random.default_rng(20240601)
    for _ in range(SIMS):
        ratings, _, _ = rating_panel(
            rng, {"s": quality}, n_samples=40, biases=biases, overlap=2, noise_sd=noise_sd, sample_sd=sample_sd
        )
        frame = ratings.assign(score=ratings["value"].astype(float))
        samples = sorted(frame["sample_id"].unique())
        est = rating_estimate(frame, sorted(quality), samples, bootstrap_weights(len(samples), ROUNDS, rng))
        rows = ranking_rows(est, "q").rows
        by = {r.model: r for r in rows}
        for m, r in by.items():
            covered += r.ci_low <= truth[m] <= r.ci_high
            total += 1
        same_tier += by["A"].tier == by["B"].tier
    print(f"coverage {covered / total:.3f}, equal models share a tier {same_tier / SIMS:.3f}")
    assert covered / total >= 0.93, covered / total
    assert same_tier / SIMS >= 0.85, same_tier / SIMS


@pytest.mark.slow
def test_bradley_terry_cis_cover_truth_and_equal_models_share_a_tier():
    strength = {"A": 0.4, "B": 0.4, "C": -0.8}  # sums to 0, as the fitted strengths do
    covered = total = same_tier = 0
    rng = np.random.default_rng(7)
    for _ in range(SIMS):
        ratings, _, _ = pairwise_panel(rng, {"s": strength}, n_samples=40, n_reviewers=4, overlap=2, tie_prob=0.0)
        frame = ratings.assign(outcome=np.where((ratings["value"] == "left") ^ ratings["swapped"], "a", "b"))
        samples = sorted(frame["sample_id"].unique())
        est = pairwise_estimate(frame, sorted(strength), samples, bootstrap_weights(len(samples), ROUNDS, rng))
        rows = ranking_rows(est, "overall").rows
        by = {r.model: r for r in rows}
        for m, r in by.items():
            covered += r.ci_low <= strength[m] <= r.ci_high
            total += 1
        same_tier += by["A"].tier == by["B"].tier
    print(f"coverage {covered / total:.3f}, equal models share a tier {same_tier / SIMS:.3f}")
    assert covered / total >= 0.93, covered / total
    assert same_tier / SIMS >= 0.85, same_tier / SIMS
