"""Comparing a follow-up round with its baseline: hand-computed frames, a published paired t interval, the
verdict rules, model pairing, and verdicts that do not move with the seed."""

from __future__ import annotations

import statistics

import numpy as np
import pandas as pd
import pytest

from reviewer_app.analysis.prepare import ANCHOR, OVERALL
from reviewer_app.domain.enums import Mode
from reviewer_app.domain.rubric import PAIRWISE_DIMENSION, Rubric
from reviewer_app.domain.versions import INCONCLUSIVE, ModelPair
from reviewer_app.errors import ValidationError
from reviewer_app.versions.compare import compare_ratings, samples_needed, verdict_for
from reviewer_app.versions.pairing import pair_models, parse_match
from storage.repositories.results.frames import RATING_COLUMNS
from tests.support.simulated_panels import continuous, likert
from tests.support.version_chains import chain

LIKERT = Rubric(mode=Mode.RATING, overlap=2, dimensions=(likert("q"),))


def _ratings(rows: list[tuple], *, anchor: bool = False) -> pd.DataFrame:
    """A ratings frame from (sample, model, repeat, reviewer, dimension, value) rows, one item per output."""
    frame = pd.DataFrame(rows, columns=["sample_id", "model_a", "repeat_a", "reviewer", "dimension", "value"])
    items = {
        k: n
        for n, k in enumerate(dict.fromkeys(zip(frame["sample_id"], frame["model_a"], frame["repeat_a"], strict=True)))
    }
    frame = frame.assign(
        scenario="s",
        item_id=[items[k] for k in zip(frame["sample_id"], frame["model_a"], frame["repeat_a"], strict=True)],
        is_gold=False,
        occurrence=0,
        position=0,
        swapped=False,
        model_b=None,
        repeat_b=None,
        seconds_spent=10.0,
        rater_role="reviewer",
        shown=True,
        value=frame["value"].astype(str),
        **{ANCHOR: anchor},
    )[RATING_COLUMNS]
    return frame


def _one(comparison, dimension: str, model: str):
    (row,) = [r for r in comparison.rows if r.dimension == dimension and r.model == model]
    return row


def test_paired_difference_and_panel_shift_by_hand():
    baseline = _ratings(
        [
            ("s1", "m", 0, "r1", "q", 4), ("s1", "m", 0, "r2", "q", 5),
            ("s2", "m", 0, "r1", "q", 3), ("s2", "m", 0, "r2", "q", 3),
            ("s3", "m", 0, "r1", "q", 2), ("s3", "m", 0, "r2", "q", 4),  # the follow-up lacks s3
            ("s1", "o", 0, "r1", "q", 3), ("s1", "o", 0, "r2", "q", 3),
            ("s2", "o", 0, "r1", "q", 2), ("s2", "o", 0, "r2", "q", 2),
        ]
    )  # fmt: skip
    new = _ratings(
        [
            ("s1", "m2", 0, "r3", "q", 3), ("s1", "m2", 0, "r4", "q", 4),
            ("s2", "m2", 0, "r3", "q", 2), ("s2", "m2", 0, "r4", "q", 3),
        ],
        anchor=False,
    )  # fmt: skip
    anchors = _ratings(
        [
            ("s1", "m", 0, "r3", "q", 4), ("s1", "m", 0, "r4", "q", 4),  # baseline's (s1, m): 4, 5
            ("s2", "o", 0, "r3", "q", 1), ("s2", "o", 0, "r4", "q", 2),  # baseline's (s2, o): 2, 2
            ("s3", "m", 1, "r3", "q", 5),  # no such output in the baseline: not a pair, left out
        ],
        anchor=True,
    )  # fmt: skip
    anchors["item_id"] += 100
    candidate = pd.concat([new, anchors], ignore_index=True)
    result = compare_ratings(baseline, candidate, LIKERT, [ModelPair("m", "m2")], seed=1, rounds=200)
    row = _one(result, "q", "m2")
    assert (row.baseline_model, row.n, row.n_anchors) == ("m", 2, 2)
    assert row.baseline_score == pytest.approx((4 + 5 + 3 + 3) / 4)  # s1 and s2 only: the samples both have
    assert row.candidate_score == pytest.approx((3 + 4 + 2 + 3) / 4)
    assert row.diff == pytest.approx(-0.75)
    assert row.panel_shift == pytest.approx((4 + 4 + 1 + 2) / 4 - (4 + 5 + 2 + 2) / 4)  # -0.5
    assert row.corrected == pytest.approx(-0.25)
    # Per-sample contributions to the corrected difference: -0.125 (s1) and +0.125 (s2), so the CR1 standard
    # error is sqrt(2 x 2 x 0.125^2) = 0.25. The anchors' parts cancel within each sample, so Satterthwaite
    # leaves the diff's 2 - 1 = 1 degree of freedom: t(0.975, 1) = 12.7062 (any t table).
    assert row.decision_low == pytest.approx(-0.25 - 12.7062047 * 0.25, abs=1e-6)
    assert row.decision_high == pytest.approx(-0.25 + 12.7062047 * 0.25, abs=1e-6)
    assert row.verdict == INCONCLUSIVE
    overall = _one(result, OVERALL, "m2")
    assert overall.diff == pytest.approx(-0.75 / 4)  # one 1-5 dimension: overall is (score - 1) / 4
    assert overall.tolerance == 0.05 and row.tolerance == 0.25


def test_the_decision_interval_is_the_paired_t_interval_of_students_sleep_data():
    # Cushny & Peebles' sleep data as in R's `sleep`; t.test(extra ~ group, paired = TRUE) reports the mean
    # difference 1.58 (group 2 - group 1) with the 95% interval 0.7001142 to 2.4598858 (t = 4.0621, df = 9).
    one = [0.7, -1.6, -0.2, -1.2, -0.1, 3.4, 3.7, 0.8, 0.0, 2.0]
    two = [1.9, 0.8, 1.1, 0.1, -0.1, 4.4, 5.5, 1.6, 4.6, 3.4]
    rubric = Rubric(mode=Mode.RATING, overlap=1, dimensions=(continuous("extra", lo=-10, hi=10),))
    baseline = _ratings([(f"p{k}", "drug", 0, "r", "extra", v) for k, v in enumerate(one)])
    candidate = _ratings([(f"p{k}", "drug", 0, "r", "extra", v) for k, v in enumerate(two)], anchor=False)
    row = _one(compare_ratings(baseline, candidate, rubric, [ModelPair("drug", "drug")], seed=3), "extra", "drug")
    assert row.diff == pytest.approx(1.58)
    assert row.panel_shift is None and row.corrected == row.diff and row.n_anchors == 0
    assert row.decision_low == pytest.approx(0.7001142, abs=1e-6)
    assert row.decision_high == pytest.approx(2.4598858, abs=1e-6)
    assert row.verdict == "improvement"
    assert row.ci_low is not None and row.ci_high is not None and row.ci_low < 1.58 < row.ci_high


def test_a_lower_is_better_dimension_regresses_upwards():
    rubric = Rubric(
        mode=Mode.RATING, overlap=1, dimensions=(continuous("errors", lo=0, hi=50, higher_is_better=False),)
    )
    rng = np.random.default_rng(5)
    errors = rng.poisson(3, 60)
    baseline = _ratings([(f"x{k}", "m", 0, "r", "errors", v) for k, v in enumerate(errors)])
    candidate = _ratings([(f"x{k}", "m", 0, "r", "errors", v + 5) for k, v in enumerate(errors)], anchor=False)
    result = compare_ratings(baseline, candidate, rubric, [ModelPair("m", "m")], seed=1, rounds=50)
    row = _one(result, "errors", "m")
    assert row.diff == pytest.approx(5.0) and not row.higher_is_better
    assert row.verdict == "regression"
    overall = _one(result, OVERALL, "m")  # 0-1, turned round: 5 more errors of 50 is 0.1 worse
    assert overall.diff == pytest.approx(-0.1) and overall.verdict == "regression"


def test_a_baselines_own_anchors_never_count_for_its_scores():
    # A follow-up compared with a later round: its anchor rows re-rate an older batch's outputs.
    earlier = _ratings([(f"x{k}", "m", 0, "r", "q", 1) for k in range(5)], anchor=True)
    own = _ratings([(f"x{k}", "m", 0, "r", "q", 4) for k in range(5)], anchor=False)
    own["item_id"] += 50
    later = _ratings([(f"x{k}", "m", 0, "r", "q", 4) for k in range(5)], anchor=False)
    result = compare_ratings(pd.concat([earlier, own]), later, LIKERT, [ModelPair("m", "m")], seed=1, rounds=20)
    row = _one(result, "q", "m")
    assert row.baseline_score == 4.0 and row.diff == 0.0


def _pairwise(rows: list[tuple], *, anchor: bool) -> pd.DataFrame:
    """A pairwise frame from (sample, model_a, model_b, swapped, shown value) rows."""
    frame = pd.DataFrame(rows, columns=["sample_id", "model_a", "model_b", "swapped", "value"])
    return frame.assign(
        scenario="s",
        item_id=np.arange(len(frame)) + (1000 if anchor else 0),
        is_gold=False,
        reviewer="r",
        occurrence=0,
        position=0,
        dimension="overall",
        repeat_a=0,
        repeat_b=0,
        seconds_spent=5.0,
        rater_role="reviewer",
        shown=True,
        **{ANCHOR: anchor},
    )[RATING_COLUMNS]


def test_pairwise_win_rates_against_common_opponents_by_hand():
    rubric = Rubric(mode=Mode.PAIRWISE, overlap=1, dimensions=(PAIRWISE_DIMENSION,))
    baseline = _pairwise(
        [
            ("s1", "B", "O", False, "left"),  # B won
            ("s1", "B", "X", False, "right"),  # X is no opponent of the new version: left out
            ("s2", "B", "O", False, "tie"),  # half
            ("s3", "O", "B", False, "left"),  # O won; the follow-up has no s3
        ],
        anchor=False,
    )
    candidate = pd.concat(
        [
            _pairwise(
                [
                    ("s1", "C", "O", False, "right"),  # O won
                    ("s2", "C", "O", True, "right"),  # shown swapped: the right side was C, so C won
                    ("s1", "C", "Y", False, "left"),  # Y is new: not a common opponent
                ],
                anchor=False,
            ),
            _pairwise(
                [
                    ("s1", "O", "B", False, "left"),  # the baseline's s1 B-O pair again, stored the other way: O won
                    ("s3", "O", "B", False, "left"),  # O won again
                    ("s1", "B", "X", False, "left"),  # not a common opponent: left out
                ],
                anchor=True,
            ),
        ],
        ignore_index=True,
    )
    result = compare_ratings(baseline, candidate, rubric, [ModelPair("B", "C")], seed=1, rounds=100)
    row = _one(result, OVERALL, "C")
    assert row.unit == "win rate against the common opponents"
    assert row.n == 2  # s1 and s2
    assert row.baseline_score == pytest.approx(0.75) and row.candidate_score == pytest.approx(0.5)
    assert row.diff == pytest.approx(-0.25)
    assert row.n_anchors == 2
    assert row.panel_shift == pytest.approx((0 + 0) / 2 - (1 + 0) / 2)
    assert row.corrected == pytest.approx(0.25)


def test_verdict_rules():
    assert verdict_for(-0.9, -0.3, 0.25) == "regression"
    assert verdict_for(0.3, 0.9, 0.25) == "improvement"
    assert verdict_for(-0.25, 0.25, 0.25) == "no change"  # the band's edges are inside it
    assert verdict_for(-0.3, 0.1, 0.25) == "inconclusive"
    assert verdict_for(-0.9, -0.25, 0.25) == "inconclusive"  # touching -tolerance is not below it
    assert verdict_for(0.3, 0.9, 0.25, higher_is_better=False) == "regression"
    assert verdict_for(float("nan"), float("nan"), 0.25) == "inconclusive"


def test_samples_needed_scales_the_half_width_as_one_over_root_n():
    # Estimate -0.4, half-width 0.2 at 100 samples: the interval leaves the band below -0.25 once the
    # half-width is under 0.15: 100 x (0.2 / 0.15)^2 = 177.8 -> 178 samples.
    assert samples_needed(-0.4, 0.2, 100, 0.25) == 178
    # Estimate 0.1 inside the band: fits once the half-width is under 0.15 as well.
    assert samples_needed(0.1, 0.2, 100, 0.25) == 178
    assert samples_needed(0.25, 0.2, 100, 0.25) is None  # on the edge: no number of samples settles it
    assert samples_needed(0.0, float("nan"), 1, 0.25) is None


def test_models_pair_by_name_or_by_match():
    assert pair_models(["a", "b"], ["b", "c"]) == (ModelPair("b", "b"),)
    pairs = pair_models(["a", "b"], ["a", "b2"], {"b": "b2"})
    assert pairs == (ModelPair("a", "a"), ModelPair("b", "b2"))
    # Matched away, a name no longer pairs with itself.
    assert pair_models(["a", "b"], ["a", "b"], {"a": "b"}) == (ModelPair("a", "b"),)
    assert parse_match(["old = new", "x=y"]) == {"old": "new", "x": "y"}


def test_unknown_and_malformed_matches_are_our_errors():
    with pytest.raises(ValidationError) as err:
        pair_models(["a", "b"], ["c"], {"zz": "c", "a": "nope"}, baseline_label="batch v1", candidate_label="v2")
    text = str(err.value)
    assert "match: 'zz' is not a model of batch v1 (its models: a, b)" in text
    assert "match: 'nope' is not a model of v2 (its models: c)" in text
    assert err.value.worded(lambda f: f"--{f}").startswith("--match: ")
    with pytest.raises(ValidationError, match="no model of the follow-up"):
        pair_models(["a"], ["b"])
    with pytest.raises(ValidationError, match="is not OLD=NEW"):
        parse_match(["a-b"])
    with pytest.raises(ValidationError, match="matched twice"):
        parse_match(["a=b", "a=c"])


def test_renamed_versions_pair_by_the_match():
    data = chain(
        np.random.default_rng(3),
        {"x": {"m": 3.2, "o": 3.0}},
        {"x": {"m-v2": 2.4, "o": 3.0}},
        n_samples=150,
        noise_sd=0.6,
    )
    pairs = pair_models(["m", "o"], ["m-v2", "o"], parse_match(["m=m-v2"]))
    result = compare_ratings(data.baseline, data.candidate, data.rubric, pairs, seed=2, rounds=100)
    row = _one(result, "correctness", "m-v2")
    assert row.baseline_model == "m" and row.n == 150 and row.n_anchors > 0
    assert row.verdict == "regression"
    assert _one(result, "correctness", "o").verdict != "regression"
    document = result.as_dict(baseline="v1", candidate="v2")
    assert document["baseline"] == "v1" and document["tolerance"] == 0.25
    block = document["scenarios"][0]
    assert (block["scenario"], block["dimension"]) == ("x", "correctness")
    assert {"model", "baseline_model", "baseline_score", "candidate_score", "diff", "ci_low", "ci_high",
            "panel_shift", "verdict", "n"} <= set(block["models"][0])  # fmt: skip


def test_verdicts_do_not_depend_on_the_seed():
    data = chain(np.random.default_rng(11), {"x": {"m": 3.2, "o": 3.0}}, {"x": {"m": 2.9, "o": 3.0}}, n_samples=150)
    pairs = pair_models(["m", "o"], ["m", "o"])

    def run(seed: int, tolerance: float = 0.25):
        return compare_ratings(data.baseline, data.candidate, data.rubric, pairs, seed=seed, rounds=400,
                               tolerance=tolerance)  # fmt: skip

    runs = [run(seed) for seed in range(1, 7)]
    highs = [_one(r, "correctness", "m").ci_high for r in runs]
    assert len(set(highs)) == 6  # the bootstrap interval does move with the seed
    # A tolerance right where the bootstrap's upper end falls: a rule on the bootstrap interval would call it
    # a regression for some seeds and not for others. The verdicts, decided without random draws, agree.
    line = -statistics.median(highs)
    runs = [run(seed, tolerance=line) for seed in range(1, 7)]
    rows = [_one(r, "correctness", "m") for r in runs]
    by_bootstrap = {verdict_for(r.ci_low, r.ci_high, line) for r in rows}
    assert len(by_bootstrap) > 1
    decided = [[(r.dimension, r.model, r.verdict, r.decision_low, r.decision_high, r.samples_needed)
                for r in run_.rows] for run_ in runs]  # fmt: skip
    assert all(d == decided[0] for d in decided)


def test_a_follow_up_without_ratings_yet_is_inconclusive_with_nothing_to_show():
    data = chain(np.random.default_rng(1), {"x": {"m": 3.0}}, {"x": {"m": 3.0}}, n_samples=20)
    nothing = data.candidate.iloc[0:0]
    result = compare_ratings(data.baseline, nothing, data.rubric, [ModelPair("m", "m")], seed=1, rounds=10)
    assert [(r.dimension, r.verdict, r.n, r.diff, r.ci_low, r.samples_needed) for r in result.rows] == [
        ("correctness", INCONCLUSIVE, 0, None, None, None),
        (OVERALL, INCONCLUSIVE, 0, None, None, None),
    ]
    with pytest.raises(ValueError, match="rounds"):
        compare_ratings(data.baseline, nothing, data.rubric, [ModelPair("m", "m")], seed=1, rounds=0)


def test_too_few_anchored_samples_give_no_verdict_even_on_a_zero_width_interval():
    # 12 samples, the new version rates exactly as the old (diff 0 on every sample), and the panel shift rests on
    # two anchored samples that both moved by -1: every part of the decision interval has zero spread, so on
    # its face the corrected difference (+1) is an "improvement". Two samples cannot carry a verdict.
    def rows(model: str, value: int, samples: range) -> list[tuple]:
        return [(f"s{i}", model, 0, r, "q", value) for i in samples for r in ("r1", "r2")]

    baseline = _ratings(rows("m", 3, range(12)))
    new = _ratings(rows("m", 3, range(12)), anchor=False)
    anchors = _ratings(rows("m", 2, range(2)), anchor=True)
    anchors["item_id"] += 100
    few = compare_ratings(
        baseline, pd.concat([new, anchors], ignore_index=True), LIKERT, [ModelPair("m", "m")], seed=1, rounds=200
    )
    row = _one(few, "q", "m")
    assert (row.n, row.corrected, row.decision_low, row.decision_high) == (12, 1.0, 1.0, 1.0)
    assert row.verdict == INCONCLUSIVE
    assert row.samples_needed == 60  # 10 anchored samples at the batch's share of 2 in 12
    # With ten anchored samples moving alike, the same data make a verdict.
    enough = _ratings(rows("m", 2, range(10)), anchor=True)
    enough["item_id"] += 100
    many = compare_ratings(
        baseline, pd.concat([new, enough], ignore_index=True), LIKERT, [ModelPair("m", "m")], seed=1, rounds=200
    )
    assert _one(many, "q", "m").verdict == "improvement"
