"""Anytime-valid verdicts: the confidence sequence keeps its level at every look, says nothing before its
burn-in, and a scenario is settled, needs more samples or is not settling as its pairs say."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from reviewer_app.analysis.anytime import BURN_IN, anytime_scenario, asymptotic_sequence, eb_sequence

LOOKS = np.arange(BURN_IN - 1, 200, 10)


@pytest.mark.parametrize("shape", ["normal", "symmetric discrete"])
def test_the_sequence_misses_the_mean_at_some_look_in_at_most_about_alpha(shape: str) -> None:
    misses = 0
    for s in range(400):
        rng = np.random.default_rng(s)
        if shape == "normal":
            d = rng.normal(0.3, 1.0, 200)
        else:  # a difference of two Likert-like ratings
            d = rng.integers(1, 6, 200) - rng.integers(1, 6, 200) + 0.3
        low, high = asymptotic_sequence(d, 0.05, 200)
        misses += bool(((low[LOOKS] > 0.3) | (high[LOOKS] < 0.3)).any())
    assert misses / 400 <= 0.05 + 2 * np.sqrt(0.05 * 0.95 / 400)  # 5% plus two Monte Carlo errors


def test_nothing_is_said_before_the_burn_in_and_the_interval_narrows() -> None:
    d = np.random.default_rng(1).normal(0, 1, 200)
    low, high = asymptotic_sequence(d, 0.05, 200)
    assert np.isinf(low[: BURN_IN - 1]).all() and np.isinf(high[: BURN_IN - 1]).all()
    widths = (high - low)[BURN_IN - 1 :]
    assert widths[-1] < 0.6 * widths[0]
    eb_low, eb_high = eb_sequence((d + 4) / 8, 0.05)  # the exact alternative, on a [-4, 4] scale: far wider
    assert (eb_high[-1] - eb_low[-1]) * 8 > 1.5 * widths[-1]


def _frame(rng: np.random.Generator, quality: dict[str, float], samples: int, noise: float) -> pd.DataFrame:
    rows = []
    for s in range(samples):
        effect = rng.normal(0, 0.1)
        for model, q in quality.items():
            rows.append({"sample_id": f"s{s:03d}", "model_a": model, "score": q + effect + rng.normal(0, noise)})
    return pd.DataFrame(rows)


def test_a_scenario_is_settled_when_every_pair_is_separated_or_equivalent() -> None:
    rng = np.random.default_rng(2)
    frame = _frame(rng, {"a": 0.8, "b": 0.5, "c": 0.5}, 150, 0.02)
    order = sorted(frame["sample_id"].unique())
    verdict = anytime_scenario(frame, "qa", "overall", order, (0.0, 1.0), 150)
    assert verdict is not None and verdict.state == "settled" and verdict.more_samples is None
    states = {(p.model_a, p.model_b): p.state for p in verdict.pairs}
    assert states[("a", "b")] == "separated" and states[("a", "c")] == "separated"
    assert "equivalent" in {states.get(("b", "c")), states.get(("c", "b"))}
    assert "settled" in verdict.sentence


def test_an_open_pair_asks_for_more_samples_and_a_hopeless_one_is_not_settling() -> None:
    rng = np.random.default_rng(3)
    frame = _frame(rng, {"a": 0.55, "b": 0.5}, 40, 0.15)
    order = sorted(frame["sample_id"].unique())
    verdict = anytime_scenario(frame, "qa", "overall", order, (0.0, 1.0), 200)
    assert verdict is not None and verdict.state == "more_samples" and verdict.more_samples is not None
    assert verdict.more_samples > 0 and "more samples would likely settle it" in verdict.sentence
    close = _frame(rng, {"a": 0.5005, "b": 0.5}, 40, 0.15)  # closer than the tolerance shows and noisier
    far = anytime_scenario(close.assign(score=close["score"]), "qa", "overall", order, (0.0, 1.0), 40, tolerance=0.001)
    assert far is not None and far.state == "not_settling" and "not settling" in far.sentence


def test_only_complete_samples_count_and_in_their_order() -> None:
    rng = np.random.default_rng(4)
    frame = _frame(rng, {"a": 0.6, "b": 0.5}, 30, 0.1)
    verdict = anytime_scenario(frame, "qa", "overall", ["s000", "s001"], (0.0, 1.0), 30)
    assert verdict is not None and verdict.samples == 2 and verdict.state == "more_samples"
    assert verdict.more_samples == BURN_IN - 2 and f"start after {BURN_IN}" in verdict.sentence
    none_yet = anytime_scenario(frame, "qa", "overall", [], (0.0, 1.0), 30)
    assert none_yet is not None and none_yet.samples == 0 and not none_yet.pairs
