"""The judge's report card on panels with a known truth: a judge that is one more reviewer may stand in; one that
favours a model, likes long answers, picks the first answer shown or answers at random is caught; a panel that
does not agree with itself certifies nobody."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from reviewer_app.analysis.judge_measures import _tau_b, judge_cards
from reviewer_app.domain.report_judge_card import JudgeCard
from reviewer_app.domain.rubric import Rubric
from tests.support.simulated_panels import pairwise_panel, rating_panel

QUALITY = {"qa": {"m1": 2.2, "m2": 3.0, "m3": 3.8}}
ROUNDS = 200


def _panel(seed: int, noise_sd: float = 0.6) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame, Rubric]:
    """Four reviewers on every item; the fourth becomes the judge (so it is exactly as good as a reviewer)."""
    ratings, outputs, rubric = rating_panel(
        np.random.default_rng(seed), QUALITY, n_samples=40, biases=[0.1, -0.1, 0.0, 0.0], overlap=4,
        noise_sd=noise_sd, sample_sd=0.7,
    )  # fmt: skip
    judge = ratings[ratings["reviewer"] == "r3"].assign(reviewer="judge:j@0", rater_role="judge", shown=False)
    panel = ratings[ratings["reviewer"] != "r3"]
    return panel.reset_index(drop=True), judge.reset_index(drop=True), outputs, rubric


def _lengths(outputs: pd.DataFrame) -> pd.DataFrame:
    return outputs.rename(columns={"output_words": "n_words"})[["sample_id", "model", "n_words"]]


def _card(panel: pd.DataFrame, judge: pd.DataFrame, outputs: pd.DataFrame, rubric: Rubric) -> JudgeCard:
    (card,) = judge_cards(panel, judge, rubric, _lengths(outputs), seed=1, rounds=ROUNDS)
    return card


def _shift(judge: pd.DataFrame, by: pd.Series | float) -> pd.DataFrame:
    value = (judge["value"].astype(int) + by).round().clip(1, 5).astype(int).astype(str)
    return judge.assign(value=value)


def test_a_judge_as_good_as_a_reviewer_may_stand_in() -> None:
    card = _card(*_panel(1))
    assert card.verdict == "stands_in", card.reasons
    (agreement,) = card.agreement
    assert agreement.passed and agreement.winning_rate == 1.0 and agreement.reviewers == 3
    assert agreement.alpha_panel is not None and agreement.alpha_with_judge is not None
    assert abs(agreement.alpha_with_judge - agreement.alpha_panel) < 0.1  # within the reviewers' spread
    assert not any(b.favours for b in card.bias)
    (measures,) = card.measures
    assert measures.tau == 1.0 and measures.tau_low is not None and measures.tau_low > 0


def test_a_judge_that_favours_a_model_is_caught_and_cannot_stand_in() -> None:
    panel, judge, outputs, rubric = _panel(2)
    card = _card(panel, _shift(judge, (judge["model_a"] == "m1") * 1.0), outputs, rubric)
    favoured = {b.model: b for b in card.bias}
    assert favoured["m1"].favours and favoured["m1"].ci_low is not None and favoured["m1"].ci_low > 0.5
    others = [favoured[m].bias for m in ("m2", "m3")]
    assert favoured["m1"].bias is not None and all(b is not None and favoured["m1"].bias > b + 0.5 for b in others)
    assert card.verdict == "triage_only"
    assert any("m1" in r for r in card.reasons)


def test_a_judge_that_likes_long_answers_shows_a_length_slope() -> None:
    panel, judge, outputs, rubric = _panel(3)
    words = _lengths(outputs).set_index(["sample_id", "model"])["n_words"]
    per_row = words.reindex(pd.MultiIndex.from_frame(judge[["sample_id", "model_a"]])).to_numpy() / 100
    card = _card(panel, _shift(judge, pd.Series(0.8 * per_row, index=judge.index)), outputs, rubric)
    (m,) = card.measures
    assert m.length_low is not None and m.length_low > 0 and m.length_slope is not None  # clipped to 1-5: attenuated
    fair = _card(*_panel(3))
    (f,) = fair.measures
    assert f.length_low is not None and f.length_high is not None and f.length_low < 0 < f.length_high


def test_a_judge_much_noisier_than_a_reviewer_cannot_stand_in() -> None:
    # The reviewer's ratings with extra noise (sd 1.5 on top of the reviewers' 0.6): unbiased, so only the
    # Alternative Annotator Test can catch it; it wins far fewer items than the reviewers do.
    panel, judge, outputs, rubric = _panel(7)
    noise = pd.Series(np.random.default_rng(7).normal(0, 1.5, len(judge)), index=judge.index)
    card = _card(panel, _shift(judge, noise), outputs, rubric)
    (agreement,) = card.agreement
    assert agreement.passed is False and agreement.winning_rate == 0.0 and card.verdict != "stands_in", card.reasons
    # The paper's advantage probability: the share of items the judge aligns with the others at least as well as
    # the reviewer (ties count); about 0.8 for the judge that is a reviewer (the test above's panels).
    assert all(r.advantage is not None and r.advantage < 0.7 for r in card.leave_one_out)


def test_a_judge_that_gives_the_panels_consensus_raises_alpha_in_each_place() -> None:
    panel, judge, outputs, rubric = _panel(8)
    consensus = panel.assign(v=panel["value"].astype(float)).groupby("item_id")["v"].mean().round().astype(int)
    card = _card(panel, judge.assign(value=judge["item_id"].map(consensus).astype(str)), outputs, rubric)
    (agreement,) = card.agreement
    assert agreement.alpha_panel is not None
    assert all(r.alpha is not None and r.alpha >= agreement.alpha_panel for r in card.leave_one_out)
    assert card.verdict == "stands_in", card.reasons


def _rounded(card: JudgeCard) -> object:
    def walk(x: object) -> object:
        if isinstance(x, float):
            return float(f"{x:.10g}")
        if isinstance(x, dict):
            return {k: walk(v) for k, v in x.items()}
        if isinstance(x, list | tuple):
            return [walk(v) for v in x]
        return x

    return walk(dataclasses.asdict(card))


def test_the_card_ignores_row_order_gold_items_and_repeat_showings() -> None:
    panel, judge, outputs, rubric = _panel(9)
    card = _card(panel, judge, outputs, rubric)
    gold = panel.head(30).assign(is_gold=True, value="1", item_id=panel["item_id"].max() + 1 + np.arange(30))
    repeat = panel.head(30).assign(occurrence=1, value="1")
    noisy = pd.concat([panel, gold, repeat]).sample(frac=1, random_state=1)
    # Equal to the last bits: a t-test's p sums its items in the rows' order.
    assert _rounded(_card(noisy, judge.sample(frac=1, random_state=2), outputs, rubric)) == _rounded(card)


def test_the_judges_repeats_are_averaged_for_bias_and_its_first_is_put_in_a_reviewers_place() -> None:
    panel, judge, outputs, rubric = _panel(10)
    once = _card(panel, judge, outputs, rubric)
    again = _shift(judge, 1.0).assign(occurrence=1)
    twice = _card(panel, pd.concat([judge, again], ignore_index=True), outputs, rubric)
    assert twice.leave_one_out == once.leave_one_out
    for before, after in zip(once.bias, twice.bias, strict=True):
        assert before.bias is not None and after.bias is not None
        assert 0.25 < after.bias - before.bias <= 0.5 + 1e-9  # half of a point, less what the 1-5 scale clips


def test_a_judge_that_answers_at_random_is_not_trusted() -> None:
    panel, judge, outputs, rubric = _panel(4)
    noise = np.random.default_rng(4).integers(1, 6, len(judge)).astype(str)
    card = _card(panel, judge.assign(value=noise), outputs, rubric)
    assert card.verdict == "not_trusted", card.reasons
    assert not card.agreement[0].passed


def test_a_panel_that_does_not_agree_certifies_no_judge() -> None:
    card = _card(*_panel(5, noise_sd=4.0))
    assert card.verdict != "stands_in"
    assert any("no judge can be certified" in r for r in card.reasons)


def _pairwise(first_always: bool) -> JudgeCard:
    strengths = {"qa": {"m1": 0.0, "m2": 0.8, "m3": 1.6}}
    ratings, _outputs, rubric = pairwise_panel(np.random.default_rng(6), strengths, n_samples=40, n_reviewers=4,
                                                overlap=4)  # fmt: skip
    judge = ratings[ratings["reviewer"] == "r3"].assign(reviewer="judge:j@0", rater_role="judge", shown=False)
    flip = {"left": "right", "right": "left"}
    other = judge.assign(swapped=~judge["swapped"].astype(bool), value=judge["value"].map(lambda v: flip.get(v, v)))
    orders = pd.concat([judge, other], ignore_index=True)
    if first_always:
        orders = orders.assign(value="left")
    lengths = pd.DataFrame(
        [(s, m, 100) for s in ratings["sample_id"].unique() for m in ("m1", "m2", "m3")],
        columns=["sample_id", "model", "n_words"],
    )
    panel = ratings[ratings["reviewer"] != "r3"]
    (card,) = judge_cards(panel, orders, rubric, lengths, seed=1, rounds=ROUNDS)
    return card


def test_pairwise_a_consistent_judge_and_one_that_picks_the_first_shown() -> None:
    fair = _pairwise(first_always=False)
    (m,) = fair.measures
    assert m.consistency == 1.0 and m.first_shown is not None and 0.3 < m.first_shown < 0.7
    first = _pairwise(first_always=True)
    (f,) = first.measures
    assert f.first_shown == 1.0 and f.first_shown_low is not None and f.first_shown_low > 0.95
    assert f.consistency is not None and f.consistency < 0.2  # nearly every verdict flips with the order
    assert first.verdict != "stands_in" and any("swapped" in r for r in first.reasons)


@pytest.mark.parametrize("seed", range(3))
def test_tau_b_over_replicates_is_scipys(seed: int) -> None:
    rng = np.random.default_rng(seed)
    x, y = rng.integers(0, 4, (50, 5)).astype(float), rng.integers(0, 4, (50, 5)).astype(float)
    x[3, 2] = np.nan
    ours = _tau_b(x, y)
    theirs = np.array(
        [stats.kendalltau(a, b).statistic if np.isfinite(a).all() else np.nan for a, b in zip(x, y, strict=True)]
    )
    np.testing.assert_allclose(ours, theirs, equal_nan=True, atol=1e-12)
