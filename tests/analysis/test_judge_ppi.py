"""Judge-assisted rankings (prediction-powered inference, issue 29 section 3): valid intervals whatever the
judge's bias, narrower than the panel's alone when the judge is good, the panel's width when it is useless, and
the exact arithmetic of the estimator on small frames."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from reviewer_app.analysis.decisions import ranking_rows
from reviewer_app.analysis.judge_ppi import (
    MIN_LABELLED,
    JudgeAssisted,
    judge_assisted_estimate,
    power_tuned_lambda,
    stratified_weights,
)
from reviewer_app.analysis.pair_tests import TEST_MEAN
from reviewer_app.analysis.prepare import bootstrap_weights
from reviewer_app.analysis.ranking import rating_estimate
from tests.support.judge_panels import FAVOURS_M0, GOOD, USELESS, Judge, JudgePanel, judge_panel


def _estimate(sim: JudgePanel, rng: np.random.Generator, rounds: int = 200) -> JudgeAssisted:
    return judge_assisted_estimate(sim.judge, sim.panel, sim.models, sim.samples, rng, rounds=rounds)


def _panel_only_widths(sim: JudgePanel, rng: np.random.Generator) -> float:
    frame = sim.panel.rename(columns={"model": "model_a"})
    est = rating_estimate(frame, sim.models, sim.labelled, bootstrap_weights(len(sim.labelled), 200, rng))
    return sum(
        r.ci_high - r.ci_low for r in ranking_rows(est, "q").rows if r.ci_high is not None and r.ci_low is not None
    )


def _coverage(judge: Judge, panels: int, seed: int, fraction: float = 0.2) -> float:
    rng = np.random.default_rng(seed)
    held = total = 0
    for _ in range(panels):
        sim = judge_panel(rng, judge, fraction)
        truth = dict(zip(sim.models, sim.truth.tolist(), strict=True))
        for row in ranking_rows(_estimate(sim, rng).estimate, "q").rows:
            assert row.ci_low is not None and row.ci_high is not None
            total += 1
            held += row.ci_low <= truth[row.model] <= row.ci_high
    return held / total


@pytest.mark.slow
@pytest.mark.parametrize(("judge", "seed"), [(GOOD, 11), (FAVOURS_M0, 12)])
def test_intervals_cover_the_panels_score_whatever_the_judge(judge: Judge, seed: int) -> None:
    """250 panels x 4 models, a fifth of the samples rated by the panel: the 95% intervals hold the score of
    this panel's reviewers at least 93% of the time, for a good judge and one that adds 0.5 to one model."""
    assert _coverage(judge, 250, seed) >= 0.93


def test_a_judge_biased_for_one_model_does_not_separate_it() -> None:
    """Equal models, a judge adding 0.5 to m0 only: the judge's own means separate m0 from every other model in
    nearly every panel; the judge-assisted ranking separates it (or any pair) in at most 5% of panels."""
    rng = np.random.default_rng(21)
    panels = 100
    favourite = any_pair = judge_alone = 0
    for _ in range(panels):
        sim = judge_panel(rng, FAVOURS_M0, 0.35)
        pairs = ranking_rows(_estimate(sim, rng, rounds=20).estimate, "q").pairs
        favourite += any(p.separated and "m0" in (p.model_a, p.model_b) for p in pairs)
        any_pair += any(p.separated for p in pairs)
        frame = sim.judge.rename(columns={"model": "model_a"})
        alone = ranking_rows(rating_estimate(frame, sim.models, sim.samples, bootstrap_weights(100, 20, rng)), "q")
        judge_alone += any(p.separated and "m0" in (p.model_a, p.model_b) for p in alone.pairs)
    assert judge_alone / panels > 0.9
    assert favourite / panels <= 0.05
    assert any_pair / panels <= 0.05


def test_a_good_judge_narrows_the_intervals() -> None:
    """A judge close to the panel, 20 of 100 samples rated: intervals at most 0.8 of the panel's alone, and the
    judge worth clearly more samples than were rated (lambda near its optimum, about 0.8 here)."""
    rng = np.random.default_rng(31)
    ratio, effective, lam = [], [], []
    for _ in range(30):
        sim = judge_panel(rng, GOOD, 0.2)
        res = _estimate(sim, rng)
        rows = ranking_rows(res.estimate, "q").rows
        width = sum(r.ci_high - r.ci_low for r in rows if r.ci_high is not None and r.ci_low is not None)
        ratio.append(width / _panel_only_widths(sim, rng))
        effective.append(float(np.mean(res.effective)))
        lam.append(float(np.mean(res.lam)))
    assert np.mean(ratio) < 0.8
    assert np.mean(effective) > 30  # of 20 rated
    assert 0.65 < np.mean(lam) < 0.95


def test_a_useless_judge_gets_lambda_near_zero_and_the_panels_width() -> None:
    """A judge of pure noise: lambda near 0, the standard errors those of the panel alone (within 5%), and
    the judge worth about the samples rated, never much more."""
    rng = np.random.default_rng(41)
    lam, se_ratio, effective = [], [], []
    for _ in range(40):
        res = _estimate(judge_panel(rng, USELESS, 0.35), rng, rounds=20)
        lam.append(float(np.mean(res.lam)))
        se_ratio.append(float(np.mean(res.se / res.panel_se)))
        effective.append(float(np.mean(res.effective / res.labelled)))
    assert np.mean(lam) < 0.1
    assert 0.95 < np.mean(se_ratio) < 1.06
    assert 0.9 < np.mean(effective) < 1.08


# Exact cases on small frames ---------------------------------------------------------------------------


def _frames(
    judge: np.ndarray, human: dict[int, list[float]] | dict[int, list[list[float]]], models: list[str]
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``judge`` (samples x models); ``human[s]`` the panel's rating of each model on sample s (a list per
    model gives several reviewers)."""
    s, m = judge.shape
    j = pd.DataFrame({"sample_id": np.repeat(np.arange(s), m), "model": np.tile(models, s), "score": judge.ravel()})
    rows = []
    for sample, values in human.items():
        for model, value in zip(models, values, strict=True):
            for r, v in enumerate(value if isinstance(value, list) else [value]):
                rows.append((sample, model, f"r{r}", float(v)))
    return j, pd.DataFrame(rows, columns=["sample_id", "model", "reviewer", "score"])


def _run(judge: pd.DataFrame, panel: pd.DataFrame, models: list[str], samples: int) -> JudgeAssisted:
    return judge_assisted_estimate(judge, panel, models, list(range(samples)), np.random.default_rng(0), rounds=50)


MODELS = ["a", "b"]
JUDGE = np.array([[3.0, 2.0], [4.0, 2.5], [2.0, 3.0], [5.0, 4.0], [3.5, 1.0], [1.0, 2.0], [4.5, 3.5], [2.5, 2.0]])
HUMAN = {0: [3.5, 2.0], 1: [4.0, 3.5], 2: [1.5, 2.5], 3: [5.0, 3.0], 4: [3.0, 2.0]}


def test_the_score_is_the_judges_mean_corrected_by_the_measured_gap() -> None:
    """By hand: lambda = cov / var on the labelled samples, clipped; theta = lambda mean_all(J) +
    mean_L(H - lambda J); the pseudo-values average to theta; ranking_rows ranks them with the means test."""
    judge, panel = _frames(JUDGE, HUMAN, MODELS)
    res = _run(judge, panel, MODELS, 8)
    for k in range(2):
        h = np.array([HUMAN[s][k] for s in range(5)])
        j_l, j_all = JUDGE[:5, k], JUDGE[:, k]
        lam = float(np.clip(np.cov(h, j_l)[0, 1] / np.var(j_l, ddof=1), 0, 1))
        assert res.lam[k] == pytest.approx(lam)
        theta = lam * j_all.mean() + (h - lam * j_l).mean()
        assert res.estimate.point[k] == pytest.approx(theta)
        assert res.panel_point[k] == pytest.approx(h.mean())
        assert res.panel_se[k] == pytest.approx(h.std(ddof=1) / np.sqrt(5))
    assert res.estimate.sums is not None and res.estimate.counts is not None
    np.testing.assert_allclose(res.estimate.sums.sum(axis=0) / res.estimate.counts.sum(axis=0), res.estimate.point)
    assert list(res.judged) == [8, 8] and list(res.labelled) == [5, 5]
    ranking = ranking_rows(res.estimate, "q")
    assert [r.model for r in ranking.rows] == ["a", "b"]
    assert ranking.pairs[0].test == TEST_MEAN
    assert ranking.pairs[0].p_adjusted is not None


def test_the_bootstrap_keeps_the_designs_rated_samples() -> None:
    """Samples are stratified by the models the panel rated on them, and every bootstrap replicate draws as
    many samples from each stratum as it holds: the number rated never varies between replicates."""
    judge, panel = _frames(JUDGE, HUMAN, MODELS)  # both models rated on samples 0-4, only "a" on sample 5
    panel = pd.concat([panel, pd.DataFrame([(5, "a", "r0", 2.0)], columns=panel.columns)], ignore_index=True)
    res = _run(judge, panel, MODELS, 8)
    assert res.estimate.strata is not None
    strata = res.estimate.strata
    assert len(set(strata[:5].tolist())) == 1 and strata[5] not in (0, strata[0]) and list(strata[6:]) == [0, 0]
    assert list(res.labelled) == [6, 5]
    weights = stratified_weights(strata, 200, np.random.default_rng(1))
    for h in np.unique(strata):
        np.testing.assert_array_equal(weights[:, strata == h].sum(axis=1), (strata == h).sum())


def test_power_tuned_lambda_is_the_clipped_slope() -> None:
    h = np.array([1.0, 2.0, 3.0, 4.0, 6.0])
    assert power_tuned_lambda(h, 2 * h + 1) == pytest.approx(0.5)
    assert power_tuned_lambda(h, 0.5 * h) == 1.0  # slope 2: never more than the panel's own ratings
    assert power_tuned_lambda(h, -h) == 0.0  # a judge that reads the scale backwards is not used
    assert power_tuned_lambda(h, np.full(5, 3.0)) == 0.0  # a judge that never varies carries nothing
    assert power_tuned_lambda(h[:1], h[:1]) == 0.0


def test_a_constant_judge_leaves_the_panels_mean() -> None:
    judge, panel = _frames(np.full((8, 2), 3.0), HUMAN, MODELS)
    res = _run(judge, panel, MODELS, 8)
    np.testing.assert_allclose(res.lam, 0.0)
    np.testing.assert_allclose(res.estimate.point, res.panel_point)
    np.testing.assert_allclose(res.se, res.panel_se)


def test_every_sample_rated_gives_the_panels_mean() -> None:
    """With every sample labelled the judge's terms cancel: the score is the panel's mean whatever lambda."""
    human = {s: [float(x) + 0.5 * (s % 3) for x in JUDGE[s]] for s in range(8)}
    judge, panel = _frames(JUDGE, human, MODELS)
    res = _run(judge, panel, MODELS, 8)
    np.testing.assert_allclose(res.estimate.point, [np.mean([human[s][k] for s in range(8)]) for k in range(2)])


def test_a_perfect_judge_is_worth_every_sample() -> None:
    """A judge that gives the panel's own ratings: lambda 1, the judge's mean over all samples, its variance
    the judge's spread within the rated and the unrated samples (each cluster-robust), and the judge worth
    the panel's variance over that, times the 5 rated samples."""
    human = {s: list(JUDGE[s]) for s in range(5)}
    judge, panel = _frames(JUDGE, human, MODELS)
    res = _run(judge, panel, MODELS, 8)
    np.testing.assert_allclose(res.lam, 1.0)
    np.testing.assert_allclose(res.estimate.point, JUDGE.mean(axis=0))
    rated, rest = JUDGE[:5], JUDGE[5:]
    var = (5 * np.var(rated, axis=0, ddof=1) * 4 / 4 + 3 * np.var(rest, axis=0, ddof=1) * 2 / 2) / 64
    np.testing.assert_allclose(res.se, np.sqrt(var))
    np.testing.assert_allclose(res.effective, 5 * (np.var(rated, axis=0, ddof=1) / 5) / var)
    assert all(e > 5 for e in res.effective)


def test_outputs_rated_several_times_count_once() -> None:
    """Three reviewers of an output, or a judge run twice, count as the output's mean."""
    human = {s: [[v - 0.5, v, v + 0.5] for v in values] for s, values in HUMAN.items()}
    judge, panel = _frames(JUDGE, human, MODELS)
    twice = pd.concat([judge.assign(score=judge["score"] - 1), judge.assign(score=judge["score"] + 1)])
    res = _run(twice.rename(columns={"model": "model_a"}), panel, MODELS, 8)
    plain = _run(*_frames(JUDGE, HUMAN, MODELS), MODELS, 8)
    np.testing.assert_allclose(res.estimate.point, plain.estimate.point)
    np.testing.assert_allclose(res.effective_ratings, 3 * res.effective)


def test_no_panel_ratings_is_a_report_error() -> None:
    judge, panel = _frames(JUDGE, {}, MODELS)
    with pytest.raises(ValueError, match="panel rated none of the samples"):
        _run(judge, panel, MODELS, 8)


def test_too_few_panel_rated_samples_is_a_report_error() -> None:
    judge, panel = _frames(JUDGE, {s: HUMAN[s] for s in range(MIN_LABELLED - 1)}, MODELS)
    with pytest.raises(ValueError, match=r"a \(2\), b \(2\).*at least 3"):
        _run(judge, panel, MODELS, 8)


def test_an_output_the_judge_did_not_rate_is_a_report_error() -> None:
    judge, panel = _frames(JUDGE, HUMAN, MODELS)
    judge = judge[~((judge["sample_id"] == 2) & (judge["model"] == "b"))]
    with pytest.raises(ValueError, match=r"1 output\(s\) the judge did not \(b on sample 2\)"):
        _run(judge, panel, MODELS, 8)


def test_a_sample_outside_the_ranking_is_a_report_error() -> None:
    judge, panel = _frames(JUDGE, HUMAN, MODELS)
    with pytest.raises(ValueError, match="not among the ranking's samples: 7"):
        _run(judge, panel, MODELS, 7)


def test_a_model_nobody_rated_is_left_out_of_the_ranking() -> None:
    judge, panel = _frames(JUDGE, HUMAN, MODELS)
    res = _run(judge, panel, [*MODELS, "c"], 8)
    assert np.isnan(res.estimate.point[2])
    assert [r.model for r in ranking_rows(res.estimate, "q").rows] == ["a", "b"]
