"""Anytime-valid verdicts: the confidence sequence keeps its level at every look, says nothing before its
burn-in, and a scenario is settled, needs more samples or is not settling as its pairs say."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from reviewer_app.analysis.anytime import (
    BURN_IN,
    anytime_pairwise_scenario,
    anytime_scenario,
    asymptotic_sequence,
    eb_sequence,
)

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


def _duels(rng: np.random.Generator, win: dict[tuple[str, str], float], samples: int, k: int) -> pd.DataFrame:
    """Pairwise answers: per sample and pair, k reviewers; the pair stored either way round (as items are), the
    first named model winning with probability ``win``, a tie otherwise a tenth of the time."""
    rows = []
    for s in range(samples):
        for (x, y), p in win.items():
            a, b = (x, y) if rng.random() < 0.5 else (y, x)
            for _ in range(k):
                u = rng.random()
                first_won = u < p * 0.9
                tie = u >= 0.9
                outcome = "tie" if tie else ("a" if first_won == (a == x) else "b")
                rows.append({"sample_id": f"s{s}", "model_a": a, "model_b": b, "outcome": outcome})
    return pd.DataFrame(rows)


def test_pairwise_verdicts_are_head_to_head_win_shares_whichever_way_items_are_stored() -> None:
    rng = np.random.default_rng(5)
    frame = _duels(rng, {("gpt", "llama"): 0.8, ("gpt", "mistral"): 0.8, ("llama", "mistral"): 0.5}, 80, 3)
    order = [f"s{s}" for s in range(80)]
    verdict = anytime_pairwise_scenario(frame, "qa", "overall", order, 80)
    assert verdict is not None and verdict.samples == 80 and verdict.tolerance == pytest.approx(0.1)
    by_pair = {(p.model_a, p.model_b): p for p in verdict.pairs}
    assert by_pair[("gpt", "llama")].state == "separated" and by_pair[("gpt", "mistral")].state == "separated"
    # gpt wins 72% and loses 18%: a difference of about 0.54
    assert by_pair[("gpt", "llama")].diff == pytest.approx(0.54, abs=0.08)
    even = next(p for p in verdict.pairs if {p.model_a, p.model_b} == {"llama", "mistral"})
    assert even.state == "open" and even.diff < 0.15
    # Only complete samples count, in their order: the first 10 alone are inside the burn-in.
    early = anytime_pairwise_scenario(frame, "qa", "overall", order[:10], 80)
    assert early is not None and early.samples == 10 and early.state == "more_samples"
    assert all(p.cs_low is None for p in early.pairs)


def test_equal_models_head_to_head_are_rarely_separated_at_any_look() -> None:
    separated = 0
    for seed in range(100):
        rng = np.random.default_rng(seed)
        frame = _duels(rng, {("m1", "m2"): 0.5, ("m1", "m3"): 0.5, ("m2", "m3"): 0.5}, 120, 3)
        order = [f"s{s}" for s in range(120)]
        for look in range(BURN_IN, 121, 20):
            verdict = anytime_pairwise_scenario(frame, "qa", "overall", order[:look], 120)
            assert verdict is not None
            if any(p.state == "separated" for p in verdict.pairs):
                separated += 1
                break
    assert separated <= 5 + 2 * np.sqrt(5 * 0.95)  # 5% of 100 plus two Monte Carlo errors
