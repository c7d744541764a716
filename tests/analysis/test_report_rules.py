"""Report rules a lead relies on: nothing computed on what was not observed, comparisons on the same footing,
weight sensitivity that reflects uncertainty, continuous and lower-is-better scores, agreement and dominance."""

from __future__ import annotations

from dataclasses import replace

import krippendorff
import numpy as np
import pandas as pd
import pytest

from reviewer_app.analysis.agreement import alpha_many_values, alpha_with_ci
from reviewer_app.analysis.composite import ONE_SCENARIO
from reviewer_app.analysis.prepare import OVERALL_AGREED
from reviewer_app.analysis.report import build_report
from reviewer_app.analysis.secondary_measures import NOT_RECORDED
from reviewer_app.domain.low_agreement import is_low_agreement
from reviewer_app.reporting.formats import render
from tests.support.simulated_panels import continuous, likert, pairwise_panel, rating_panel


def _report(ratings, outputs, rubric, seed=1, rounds=300):
    return build_report(ratings, outputs, rubric, batch="b", seed=seed, rounds=rounds, diagnostics=False)


# 4. Position effects only where side and position were recorded when shown.


def test_imported_ratings_have_no_position_drift():
    ratings, outputs, rubric = rating_panel(
        np.random.default_rng(0), {"s": {"A": 3.0, "B": 3.5}}, n_samples=30, biases=[0.0, 0.2], overlap=2
    )
    imported = ratings.assign(seconds_spent=np.nan)  # import-ratings stores no time: never shown here
    effect = _report(imported, outputs, rubric).beside.position_effect
    assert effect.slope_per_100 is None and effect.note == NOT_RECORDED and effect.n_not_recorded > 0
    html = render(_report(imported, outputs, rubric), "html")
    assert "not recorded" in html and "slope" not in html.split("Beside quality")[1].split("</p>")[1]
    shown = _report(ratings, outputs, rubric).beside.position_effect
    assert shown.slope_per_100 is not None and shown.note is None and shown.n_not_recorded == 0


def test_imported_pairwise_answers_have_no_position_bias():
    ratings, outputs, rubric = pairwise_panel(
        np.random.default_rng(1), {"x": {"A": 0.3, "B": 0.0, "C": -0.3}}, n_samples=30, n_reviewers=3
    )
    imported = ratings.assign(seconds_spent=np.nan)
    bias = _report(imported, outputs, rubric).beside.position_bias
    assert bias.left_win_rate is None and bias.ci_low is None and bias.note == NOT_RECORDED
    assert "Position bias: not recorded" in render(_report(imported, outputs, rubric), "md")
    # Half imported: only the answers given in the app count.
    half = ratings.assign(seconds_spent=np.where(np.arange(len(ratings)) % 2 == 0, 20.0, np.nan))
    mixed = _report(half, outputs, rubric).beside.position_bias
    decisive = half["value"].isin(["left", "right"])
    assert mixed.n == int((decisive & half["seconds_spent"].notna()).sum())
    assert mixed.n_not_recorded == int((decisive & half["seconds_spent"].isna()).sum())
    # A `shown` column, when the frame has one, decides.
    flagged = ratings.assign(shown=False)
    assert _report(flagged, outputs, rubric).beside.position_bias.note == NOT_RECORDED


# 5. Weight sensitivity: ties shared, the weights kept apart from the noise, none for one scenario.


def _all_equal_batch():
    ratings, outputs, rubric = rating_panel(
        np.random.default_rng(2), {"s1": {"alpha": 3.0, "beta": 3.0}, "s2": {"alpha": 3.0, "beta": 3.0}},
        n_samples=20, biases=[0.0, 0.1], overlap=2,
    )  # fmt: skip
    return ratings.assign(value="3"), outputs, rubric


def test_exact_ties_share_first_place():
    ws = _report(*_all_equal_batch()).overall.weight_sensitivity
    assert {r.model: r.share_first for r in ws.models} == {"alpha": 0.5, "beta": 0.5}
    assert {r.model: r.share_first_with_noise for r in ws.models} == {"alpha": 0.5, "beta": 0.5}
    assert all(r.rank_best == r.rank_worst == 1 for r in ws.models)


def test_weight_sensitivity_keeps_the_weights_apart_from_the_noise():
    # Known truth: A is ahead of B in both scenarios (s2 is a copy of s1), by far less than the noise. No
    # weighting of these point scores can put B first, so "weights alone" must give A 100% and B rank 2 only;
    # the noise shows separately (P(best) at the chosen weights) and in "weights and noise", where B comes
    # first in a fair share of draws. The old table mixed the two: B "first in" 20% of weightings.
    ratings, outputs, rubric = rating_panel(
        np.random.default_rng(3), {"s1": {"A": 3.05, "B": 3.0}}, n_samples=15, biases=[0.0, 0.2], overlap=2
    )
    means = ratings.assign(v=ratings["value"].astype(float)).groupby("model_a")["v"].mean()
    if means["A"] < means["B"]:
        ratings["model_a"] = ratings["model_a"].map({"A": "B", "B": "A"})
    copy = ratings.assign(scenario="s2", sample_id="2-" + ratings["sample_id"], item_id=ratings["item_id"] + 10_000)
    both = pd.concat([ratings, copy], ignore_index=True)
    report = _report(both, outputs, rubric)
    overall = {(b.scenario, r.model): r.score for b in report.scenarios for r in b.ranking if r.dimension == "overall"}
    assert all(overall[(s, "A")] > overall[(s, "B")] for s in ("s1", "s2"))
    ws = {r.model: r for r in report.overall.weight_sensitivity.models}
    assert ws["A"].share_first == 1.0 and ws["B"].share_first == 0.0
    assert (ws["A"].rank_best, ws["A"].rank_worst, ws["B"].rank_best, ws["B"].rank_worst) == (1, 1, 2, 2)
    assert 0.1 < ws["B"].share_first_with_noise < 0.9 and ws["B"].rank_best_with_noise == 1
    p_best = {r.model: r.p_best for r in report.overall.composite.ranking}
    assert ws["B"].p_best == p_best["B"] and 0.1 < p_best["B"] < 0.9
    md = render(report, "md")
    assert "Under the weights alone" in md and "A is first in 100% of weightings, rank 1" in md
    assert "From the panel's noise alone, at the chosen weights" in md


def test_weight_sensitivity_when_the_scenarios_disagree():
    # A leads in s1 and B in s2, by clear margins: under weights alone each is first in some weightings. With
    # two scenarios and Dirichlet(1, 1) weights (w uniform on [0, 1]) A is first exactly when w1 d1 > w2 d2
    # (d1, d2: the point gaps), so its share is d1 / (d1 + d2): the truth the draws must reproduce.
    ratings, outputs, rubric = rating_panel(
        np.random.default_rng(5), {"s1": {"A": 4.0, "B": 3.0}, "s2": {"A": 3.2, "B": 3.8}},
        n_samples=30, biases=[0.0, 0.1], overlap=2,
    )  # fmt: skip
    report = _report(ratings, outputs, rubric)
    overall = {(b.scenario, r.model): r.score for b in report.scenarios for r in b.ranking if r.dimension == "overall"}
    d1, d2 = overall[("s1", "A")] - overall[("s1", "B")], overall[("s2", "B")] - overall[("s2", "A")]
    assert d1 > 0 and d2 > 0
    ws = {r.model: r for r in report.overall.weight_sensitivity.models}
    assert ws["A"].share_first == pytest.approx(d1 / (d1 + d2), abs=0.035)
    assert ws["A"].share_first + ws["B"].share_first == pytest.approx(1.0)
    assert all((r.rank_best, r.rank_worst) == (1, 2) for r in ws.values())


def test_no_weight_sensitivity_with_one_scenario():
    ratings, outputs, rubric = rating_panel(
        np.random.default_rng(4), {"only": {"A": 3.0, "B": 3.6}}, n_samples=20, biases=[0.0, 0.1], overlap=2
    )
    report = _report(ratings, outputs, rubric)
    ws = report.overall.weight_sensitivity
    assert ws.draws == 0 and ws.models == () and ws.note == ONE_SCENARIO
    md = render(report, "md")
    assert "random weightings, each with a bootstrap replicate" not in md and ONE_SCENARIO in md


# 6. Across scenarios only on the same footing; unrated models listed.


def test_a_model_rated_in_only_one_scenario_is_left_out_across_scenarios():
    ratings, outputs, rubric = rating_panel(
        np.random.default_rng(5),
        {"easy": {"A": 3.6, "B": 3.0, "D": 4.8}, "hard": {"A": 3.4, "B": 2.6, "D": 1.0}},
        n_samples=30, biases=[0.0, 0.1, -0.1], overlap=2,
    )  # fmt: skip
    # D has outputs in "hard" but nobody has rated them yet.
    ratings = ratings[~((ratings["scenario"] == "hard") & (ratings["model_a"] == "D"))]
    report = _report(ratings, outputs, rubric)
    assert {r.model for r in report.overall.ranking} == {"A", "B"}
    left = {(r.model, r.dimension): r.missing_in for r in report.overall.left_out}
    assert left[("D", "overall")] == ("hard",)
    assert any("D has no ratings in hard" in w for w in report.overall.warnings)
    assert "Not ranked across scenarios (no ratings in some): D." in report.overall.summary["overall"]
    hard = next(b for b in report.scenarios if b.scenario == "hard")
    assert hard.no_ratings == ("D",) and any("no ratings yet for D" in w for w in hard.warnings)
    assert {r.model for r in report.overall.composite.ranking} == {"A", "B"}


# 8. Continuous scores and lower-is-better.


def _reliability(frame: pd.DataFrame) -> np.ndarray:
    table = frame.pivot_table(index="reviewer", columns="unit", values="value", aggfunc="first")
    return table.to_numpy(dtype=float)


@pytest.mark.parametrize("level", ["interval", "ratio"])
def test_continuous_alpha_matches_krippendorff(level):
    rng = np.random.default_rng(6)
    units = np.repeat(np.arange(60), 3)
    truth = rng.uniform(5, 150, 60)
    values = np.round(truth[units] + rng.normal(0, 15, len(units)), 1).clip(0, 200)
    frame = pd.DataFrame({"unit": units, "reviewer": np.tile(["r1", "r2", "r3"], 60), "value": values})
    row = alpha_with_ci(frame, level=level, domain=None, rounds=200, rng=np.random.default_rng(0))
    if level == "ratio":  # ratio alpha runs on values rounded to 1/200 of the largest
        step = values.max() / 200
        frame = frame.assign(value=np.round(values / step) * step)
    expected = krippendorff.alpha(reliability_data=_reliability(frame), level_of_measurement=level)
    assert row.alpha == pytest.approx(expected, abs=1e-9)
    assert row.ci_low < row.alpha < row.ci_high
    point, _ = alpha_many_values(units, values, "interval", 0, np.random.default_rng(0))
    ref = krippendorff.alpha(reliability_data=_reliability(frame.assign(value=values)), level_of_measurement="interval")
    assert point == pytest.approx(ref, abs=1e-9)


def test_continuous_lower_is_better_dimension_in_the_report():
    mqm = continuous("mqm", 0.0, 200.0, higher_is_better=False)
    ratings, outputs, rubric = rating_panel(
        np.random.default_rng(7), {"s": {"A": 20.0, "B": 60.0, "C": 62.0}}, n_samples=40,
        biases=[0.0, 5.0, -5.0], overlap=2, noise_sd=10.0, sample_sd=10.0, dims=(mqm,),
    )  # fmt: skip
    report = _report(ratings, outputs, rubric)
    rows = {(r.dimension, r.model): r for r in report.scenarios[0].ranking}
    assert rows[("mqm", "A")].rank == 1 and rows[("mqm", "A")].letters == "a"
    assert rows[("mqm", "A")].score < rows[("mqm", "B")].score
    assert rows[("overall", "A")].score > rows[("overall", "B")].score  # 1 - (mqm / 200)
    assert rows[("overall", "A")].score == pytest.approx(1 - rows[("mqm", "A")].score / 200)
    agreement = next(r for r in report.scenarios[0].agreement if r.dimension == "mqm")
    assert agreement.level == "interval" and agreement.alpha is not None
    assert "mqm (lower is better)" in render(report, "html")
    method = report.methods.dimensions[0]
    assert method.scale == "continuous" and method.min == 0.0 and method.higher_is_better is False


# 10. Agreement feeds the verdict.


def test_low_agreement_rule():
    assert is_low_agreement(0.39, 0.2) and is_low_agreement(0.6, -0.01)
    assert not is_low_agreement(0.6, 0.1) and not is_low_agreement(None, None)


def test_dimension_without_agreement_is_named_and_overall_shown_without_it():
    rng = np.random.default_rng(8)
    ratings, outputs, rubric = rating_panel(
        rng, {"s1": {"A": 4.0, "B": 2.5}, "s2": {"A": 3.8, "B": 2.8}}, n_samples=40, biases=[0.0, 0.1, -0.1],
        overlap=3, noise_sd=0.4, dims=(likert("correctness"), likert("tone")),
    )  # fmt: skip
    noise = ratings["dimension"] == "tone"
    ratings.loc[noise, "value"] = rng.integers(1, 6, int(noise.sum())).astype(str)  # reviewers disagree
    report = _report(ratings, outputs, rubric)
    for block in (*report.scenarios, report.overall):
        assert "tone" in block.low_agreement and "correctness" not in block.low_agreement
        assert "agree" in block.warnings[0] and "tone (alpha " in block.warnings[0]  # first, with the number
        agreed = [r for r in block.ranking if r.dimension == OVERALL_AGREED]
        correctness = {r.model: r.score for r in block.ranking if r.dimension == "correctness"}
        assert {r.model: r.score for r in agreed} == pytest.approx({m: (s - 1) / 4 for m, s in correctness.items()})
    flags = {r.dimension: r.low_agreement for r in report.overall.agreement}
    assert flags["tone"] and not flags["correctness"]


# 11. One reviewer's opinion.


def test_warns_when_one_reviewer_gave_most_ratings():
    ratings, outputs, rubric = rating_panel(
        np.random.default_rng(9), {"s": {"A": 3.0, "B": 3.5}}, n_samples=30, biases=[0.0, 0.1, 0.2], overlap=1
    )
    fair = _report(ratings, outputs, rubric)
    assert not any("one person's opinion" in w for w in fair.scenarios[0].warnings)
    items = ratings["item_id"].unique()
    ratings.loc[ratings["item_id"].isin(items[: int(0.7 * len(items))]), "reviewer"] = "r0"
    report = _report(ratings, outputs, rubric)
    assert any(w.startswith("s: r0 gave") and "one person's opinion" in w for w in report.scenarios[0].warnings)


def test_report_schema_fields_for_the_new_rules_are_filled():
    ratings, outputs, rubric = rating_panel(
        np.random.default_rng(10), {"s1": {"A": 3.0, "B": 3.6}, "s2": {"A": 3.2, "B": 3.4}}, n_samples=20,
        biases=[0.0, 0.1], overlap=2, dims=(likert("q"), replace(likert("r"), higher_is_better=False)),
    )  # fmt: skip
    report = _report(ratings, outputs, rubric)
    assert report.methods.max_ci_mc_se is not None and report.methods.max_ci_mc_se < 0.1
    assert "Holm" in report.methods.multiple_comparisons
    block = report.scenarios[0]
    dims = {r.dimension for r in block.ranking}
    assert len(block.pairs) == len(dims)  # two models: one pair per ranking
    assert all(r.ci_mc_se is not None and r.letters for r in block.ranking)
