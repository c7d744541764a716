"""The position-effect CI on simulated panels whose reviewers drift differently along their queues.

Queue position belongs to a reviewer: each reviewer here has their own drift (drawn around a true average
drift of 0), so one reviewer's ratings share it. A CI clustered by sample alone treats them as independent and
misses the truth far more often than 5%; clustered by reviewer (two ways, with samples) it must hold about 95%.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from reviewer_app.analysis.prepare import bootstrap_weights
from reviewer_app.analysis.secondary_measures import position_effect, two_way_slope_se

REVIEWERS, SAMPLES, MODELS, OVERLAP, SIMS = 10, 60, 2, 2, 400
DRIFT_SD = 0.6  # per 100 positions


def _panel(rng: np.random.Generator) -> pd.DataFrame:
    """Every (sample, model) output rated by OVERLAP reviewers; each reviewer sees their items in a random
    order, and their score moves by their own drift (SD 0.6 per 100 positions, mean 0) along it."""
    s, m = (a.ravel() for a in np.meshgrid(np.arange(SAMPLES), np.arange(MODELS), indexing="ij"))
    who = np.stack([rng.choice(REVIEWERS, OVERLAP, replace=False) for _ in range(len(s))]).ravel()
    s, m = np.repeat(s, OVERLAP), np.repeat(m, OVERLAP)
    position = np.zeros(len(s), dtype=int)
    for r in range(REVIEWERS):
        mine = np.flatnonzero(who == r)
        position[mine] = rng.permutation(len(mine))
    drift = rng.normal(0.0, DRIFT_SD, REVIEWERS) / 100
    norm = 0.5 + 0.1 * m + rng.normal(0, 0.1, SAMPLES)[s] + drift[who] * position + rng.normal(0, 0.1, len(s))
    return pd.DataFrame(
        {"scenario": "s", "sample_id": s, "reviewer": who.astype(str), "model_a": m.astype(str),
         "position": position, "norm": norm, "seconds_spent": 20.0}
    )  # fmt: skip


def test_reviewer_clustered_ci_covers_the_average_drift():
    rng = np.random.default_rng(11)
    covered = by_sample = 0
    for _ in range(SIMS):
        frame = _panel(rng)
        strata = {"s": (list(range(SAMPLES)), bootstrap_weights(SAMPLES, 10, rng))}
        effect = position_effect(frame, strata=strata)
        assert effect.ci_low is not None and effect.ci_high is not None
        covered += effect.ci_low <= 0.0 <= effect.ci_high
        # The same slope's CI clustered by sample alone (both ways by sample: one-way): what it replaces.
        resid = frame["norm"] - frame.groupby("model_a")["norm"].transform("mean")
        codes = frame["sample_id"].to_numpy()
        slope, se, _ = two_way_slope_se(frame["position"].to_numpy(float), resid.to_numpy(), codes, codes)
        by_sample += abs(slope) <= 1.97 * se
    print(f"coverage of the average drift: by sample {by_sample / SIMS:.3f}, two-way {covered / SIMS:.3f}")
    assert by_sample / SIMS < 0.85  # the panel is one where sample clustering fails
    assert covered / SIMS >= 0.92, covered / SIMS


def test_two_way_variance_reduces_to_one_way():
    # With every rating its own reviewer, V_reviewer = V_both, so the two-way variance is the sample-clustered one.
    rng = np.random.default_rng(3)
    x, y = rng.normal(size=200), rng.normal(size=200)
    samples, alone = np.repeat(np.arange(40), 5), np.arange(200)
    slope, se, df = two_way_slope_se(x, y, samples, alone)
    one, se_one, df_one = two_way_slope_se(x, y, samples, samples)
    assert slope == pytest.approx(np.polyfit(x, y, 1)[0]) and slope == one
    assert se == pytest.approx(se_one, rel=1e-9) and 1 < df <= 39 and df == df_one
