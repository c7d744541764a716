"""The seed-free tests behind the decisions, Holm, and the Monte Carlo error of the bootstrap interval ends."""

from __future__ import annotations

import numpy as np
import pytest

from reviewer_app.analysis.inference import (
    bt_score_test,
    holm,
    percentile_ci,
    sign_flip_p,
    t_quantile,
    t_two_sided_p,
)
from reviewer_app.analysis.prepare import bootstrap_weights
from reviewer_app.analysis.ranking import rating_estimate
from tests.support.simulated_panels import rating_panel

stats = pytest.importorskip("scipy.stats")  # the reference implementation (scipy comes with choix)


def test_student_t_matches_scipy():
    rng = np.random.default_rng(0)
    t = np.abs(rng.standard_cauchy(500)) * rng.random(500) * 5
    df = rng.choice([1.0, 2.0, 3.5, 5.0, 10.0, 29.0, 100.0, 1000.0, np.inf], 500)
    assert np.abs(t_two_sided_p(t, df) - 2 * stats.t.sf(t, df)).max() < 1e-9
    dfs = np.array([1.0, 1.5, 2.0, 4.0, 7.3, 29.0, 1e3, np.inf])
    for q in (0.9, 0.975, 0.995):
        assert np.abs(t_quantile(q, dfs) - stats.t.ppf(q, dfs)).max() < 1e-6


def test_holm_matches_the_step_down_rule():
    p = np.array([0.01, 0.04, 0.03, 0.005])
    # Sorted 0.005, 0.01, 0.03, 0.04 times 4, 3, 2, 1, kept non-decreasing: 0.02, 0.03, 0.06, 0.06.
    assert holm(p).tolist() == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert holm(np.array([0.02, 0.9])).tolist() == pytest.approx([0.04, 0.9])


def test_sign_flip_is_exact_for_few_samples_and_never_below_its_smallest_value():
    u = np.array([[1.0, 1.0, 1.0, 1.0]])  # every sample says the same: the most extreme of 16 flips
    active = np.ones_like(u, dtype=bool)
    assert sign_flip_p(u, active, np.array([2.0]), np.array([4]))[0] == pytest.approx(2 / 16)
    u = np.array([[2.0, 1.0, 1.0, 1.0]])  # unequal sizes: only the all-same flips are as extreme
    assert sign_flip_p(u, active, np.array([2.0]), np.array([4]))[0] == pytest.approx(2 / 16)
    many = np.ones((1, 20))
    p = sign_flip_p(many, np.ones_like(many, dtype=bool), np.array([20 / np.sqrt(20)]), np.array([20]))
    assert p[0] == pytest.approx(max(2 * stats.norm.sf(np.sqrt(20)), 2 * 0.5**20))


def test_score_test_is_not_fooled_by_an_undefeated_model():
    # A beat B once on each of 4 samples: strength set by the penalty, but 4 samples prove little.
    blocks = np.zeros((4, 2, 2))
    blocks[:, 0, 1] = 1.0
    res = bt_score_test([blocks], [(np.array([0]), np.array([1]))], [1.0], [np.zeros(4)], 0.01)
    assert res.p[0] == pytest.approx(2 / 16)
    blocks = np.zeros((40, 2, 2))
    blocks[:, 0, 1] = 1.0  # 40 of 40: clear
    res = bt_score_test([blocks], [(np.array([0]), np.array([1]))], [1.0], [np.zeros(40)], 0.01)
    assert res.p[0] < 1e-6


def test_monte_carlo_error_of_the_interval_ends_matches_reruns():
    rng = np.random.default_rng(4)
    ratings, _, _ = rating_panel(rng, {"s": {"A": 3.0, "B": 3.3}}, n_samples=40, biases=[0.0, 0.2], overlap=2)
    frame = ratings.assign(score=ratings["value"].astype(float))
    samples = sorted(frame["sample_id"].unique())
    lows, errors = [], []
    for seed in range(40):
        w = bootstrap_weights(len(samples), 1000, np.random.default_rng(seed))
        est = rating_estimate(frame, ["A", "B"], samples, w)
        lo, _, mc = percentile_ci(est.boot)
        lows.append(lo[0])
        errors.append(mc[0])
    spread = float(np.std(lows, ddof=1))
    assert 0.6 * spread < float(np.mean(errors)) < 1.6 * spread
