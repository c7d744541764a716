"""Reviewer-adjusted rankings where reviewers did particular models (issue 28, point 2): detected from the
design alone, separations that keep their error rate, and pairs the design cannot tell from leniency."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from reviewer_app.analysis.report import build_report
from reviewer_app.analysis.reviewer_effects import adjust_for_reviewers, reviewer_design
from reviewer_app.domain.enums import Mode
from reviewer_app.domain.report import Report
from reviewer_app.domain.rubric import Rubric
from tests.support.simulated_panels import likert, rating_panel

MODELS = ["m0", "m1", "m2", "m3"]
BIASES = np.array([-0.6, -0.3, 0.0, 0.0, 0.3, 0.6])


def _panel(
    rng: np.random.Generator,
    quality: dict[str, float],
    preference: np.ndarray,
    *,
    n_samples: int = 60,
    k: int = 2,
) -> tuple[pd.DataFrame, pd.DataFrame, Rubric]:
    """A rating batch of one scenario where model m's outputs go to reviewer r with weight preference[m, r]
    (k distinct reviewers per output): rounds of quality + sample effect + the reviewer's bias + noise."""
    models = list(quality)
    rows = []
    item = 0
    sample_effect = rng.normal(0, 0.5, n_samples)
    for s in range(n_samples):
        for m, model in enumerate(models):
            p = preference[m] / preference[m].sum()
            for r in rng.choice(len(p), size=k, replace=False, p=p):
                raw = quality[model] + sample_effect[s] + BIASES[r] + rng.normal(0, 0.8)
                rows.append(
                    {
                        "scenario": "s",
                        "sample_id": f"s-{s}",
                        "item_id": item,
                        "is_gold": False,
                        "reviewer": f"r{r}",
                        "occurrence": 0,
                        "position": item,
                        "swapped": False,
                        "dimension": "q",
                        "value": str(int(np.clip(np.rint(raw), 1, 5))),
                        "model_a": model,
                        "model_b": None,
                        "repeat_a": 0,
                        "repeat_b": None,
                        "seconds_spent": 30.0,
                    }
                )
            item += 1
    outputs = pd.DataFrame(
        {
            "scenario": "s",
            "sample_id": [f"s-{s}" for s in range(n_samples) for _ in models],
            "model": [m for _ in range(n_samples) for m in models],
            "repeat": 0,
            "excluded": False,
            "leak_words": "",
            "output_chars": 500,
            "output_words": 100,
            "latency_ms": 1000.0,
            "ttft_ms": 100.0,
        }
    )
    rubric = Rubric(mode=Mode.RATING, overlap=k, dimensions=(likert("q"),), seed=7)
    return pd.DataFrame(rows), outputs, rubric


def _by_model(weight: float) -> np.ndarray:
    """Reviewers 2m and 2m+1 (mod 6) take most of model m's outputs: ``weight`` each, the rest 0.05 each."""
    pref = np.full((4, 6), 0.05)
    for m in range(4):
        pref[m, [(2 * m) % 6, (2 * m + 1) % 6]] = weight
    return pref


def _report(ratings: pd.DataFrame, outputs: pd.DataFrame, rubric: Rubric) -> Report:
    return build_report(ratings, outputs, rubric, batch="b", seed=1, rounds=50, diagnostics=False)


def _separated(report: Report, dimension: str = "q") -> list[bool]:
    return [p.separated for p in report.scenarios[0].pairs if p.dimension == dimension]


@pytest.mark.slow
def test_equal_models_rated_by_particular_reviewers_are_rarely_separated() -> None:
    # Each model's outputs mostly go to its own two reviewers, whose leniency differs by up to 1.2 points.
    # The plain means separated some pair in 43-64% of such panels; adjusted, the family-wise error holds.
    rng = np.random.default_rng(28)
    quality = dict.fromkeys(MODELS, 3.0)
    any_false, pairs_false, pairs = 0, 0, 0
    panels = 60
    for _ in range(panels):
        report = _report(*_panel(rng, quality, _by_model(1.0)))
        sep = _separated(report)
        assert report.scenarios[0].reviewer_design is not None  # detected every time: the design is lopsided
        any_false += any(sep)
        pairs_false += sum(sep)
        pairs += len(sep)
    print(f"family-wise error {any_false / panels:.0%}, per pair {pairs_false / pairs:.1%}")
    assert any_false / panels <= 0.12  # 5% nominal; 60 panels: 0.12 is about 3 standard errors above
    assert pairs_false / pairs <= 0.05


def test_a_real_gap_is_still_found_on_a_lopsided_design() -> None:
    rng = np.random.default_rng(5)
    quality = {"m0": 2.4, "m1": 3.0, "m2": 3.0, "m3": 3.6}
    report = _report(*_panel(rng, quality, _by_model(1.0), n_samples=80))
    rows = {p.model_a + p.model_b: p for p in report.scenarios[0].pairs}
    assert rows["m3m0"].separated
    ranking = [r.model for r in report.scenarios[0].ranking if r.dimension == "q"]
    assert ranking[0] == "m3" and ranking[-1] == "m0"


def test_the_plain_means_mislead_where_the_adjusted_ones_do_not() -> None:
    # m0 is truly better but rated by the strictest reviewers, m1 by the most lenient: the plain means put m1
    # first. The adjusted scores put m0 first, and the report says it adjusted.
    rng = np.random.default_rng(11)
    pref = np.full((4, 6), 0.02)
    pref[0, [0, 1]] = 1.0  # strict reviewers (-0.6, -0.3) rate m0
    pref[1, [4, 5]] = 1.0  # lenient reviewers (+0.3, +0.6) rate m1
    pref[2, [2, 3]] = 1.0
    pref[3, [2, 3]] = 1.0
    ratings, outputs, rubric = _panel(rng, {"m0": 3.4, "m1": 3.0, "m2": 3.0, "m3": 3.0}, pref, n_samples=120)
    plain = ratings.assign(score=ratings["value"].astype(float)).groupby("model_a")["score"].mean()
    assert plain["m1"] > plain["m0"]
    report = _report(ratings, outputs, rubric)
    scores = {r.model: r.score for r in report.scenarios[0].ranking if r.dimension == "q"}
    assert scores["m0"] is not None and scores["m1"] is not None and scores["m0"] > scores["m1"]
    design = report.scenarios[0].reviewer_design
    assert design is not None and design[0].adjusted and design[0].cramers_v > 0.5
    assert any("did not rate the models evenly" in w for w in report.scenarios[0].warnings)
    assert report.overall.reviewer_design is not None  # the pooled ranking says so too


def test_models_no_reviewer_links_are_never_separated() -> None:
    # Reviewers 0-1 rated only m0 and m1, reviewers 4-5 only m2 and m3: m0 vs m2 cannot be told from the two
    # groups' leniency, however large the gap looks, while m0 vs m1 (shared reviewers) can still be separated.
    rng = np.random.default_rng(3)
    pref = np.zeros((4, 6))
    pref[[0, 1], 0:2] = 1.0
    pref[[2, 3], 4:6] = 1.0
    quality = {"m0": 2.2, "m1": 3.6, "m2": 2.2, "m3": 3.6}
    ratings, outputs, rubric = _panel(rng, quality, pref, n_samples=100)
    report = _report(ratings, outputs, rubric)
    design = report.scenarios[0].reviewer_design
    assert design is not None
    assert set(design[0].confounded) == {"m0 / m2", "m0 / m3", "m1 / m2", "m1 / m3"}
    pairs = {frozenset((p.model_a, p.model_b)): p for p in report.scenarios[0].pairs if p.dimension == "q"}
    for a, b in (("m0", "m2"), ("m0", "m3"), ("m1", "m2"), ("m1", "m3")):
        assert not pairs[frozenset((a, b))].separated
    assert pairs[frozenset(("m0", "m1"))].separated and pairs[frozenset(("m2", "m3"))].separated
    assert any("cannot be told from the reviewers' leniency" in w for w in report.scenarios[0].warnings)
    assert "Not compared, as no reviewer links them: m0 and m2" in report.scenarios[0].summary["q"]
    # Nor in the composite or across scenarios, and no "probability of being the best" among them.
    for block_pairs, rows in (
        (report.overall.composite.pairs, report.overall.composite.ranking),
        (report.overall.pairs, report.overall.ranking),
    ):
        linked = {frozenset((p.model_a, p.model_b)): p.separated for p in block_pairs}
        assert not any(linked[frozenset(pair)] for pair in (("m0", "m2"), ("m0", "m3"), ("m1", "m2"), ("m1", "m3")))
        assert all(r.p_best is None and r.note and "no reviewer links it" in r.note for r in rows)


def test_whole_sample_and_random_assignments_are_left_as_they_are() -> None:
    # The pool gives a reviewer every model of a sample: the table is exactly proportional, nothing changes.
    ratings, _, _ = rating_panel(
        np.random.default_rng(1), {"s": dict.fromkeys(MODELS, 3.0)}, n_samples=40, biases=[-0.5, 0.0, 0.5]
    )
    whole = ratings.copy()
    whole["reviewer"] = "r" + (whole["sample_id"].str.split("-").str[1].astype(int) % 3).astype(str)
    whole = whole.assign(score=whole["value"].astype(float))
    design = reviewer_design(whole)
    assert design.cramers_v == pytest.approx(0.0, abs=1e-12) and design.p_value == pytest.approx(1.0)
    same, again = adjust_for_reviewers(whole, MODELS)
    assert not again.adjusted and same["score"].equals(whole["score"])
    # Random per-output assignment: flagged at about the test's level (1%) only.
    flagged = 0
    rng = np.random.default_rng(2)
    for _ in range(200):
        panel, _, _ = rating_panel(rng, {"s": dict.fromkeys(MODELS, 3.0)}, n_samples=20, biases=[0.0] * 5, overlap=2)
        flagged += reviewer_design(panel).p_value < 0.01
    assert flagged <= 8  # 1% of 200 is 2; 8 is far in the binomial tail


def test_adjustment_recovers_the_reviewers_leniency() -> None:
    rng = np.random.default_rng(9)
    ratings, _, _ = _panel(rng, dict.fromkeys(MODELS, 3.0), _by_model(1.0), n_samples=200)
    frame = ratings.assign(score=ratings["value"].astype(float))
    _, design = adjust_for_reviewers(frame, MODELS)
    assert design.adjusted and design.reviewer_sd is not None
    shift = pd.Series(dict(design.leniency))
    truth = pd.Series(BIASES - BIASES.mean(), index=[f"r{r}" for r in range(6)])
    # rounding to 1-5 shrinks the biases a little; the order and size must come through
    assert np.corrcoef(shift[truth.index], truth)[0, 1] > 0.97
    assert design.reviewer_sd == pytest.approx(float(np.std(BIASES)), rel=0.25)


def test_every_format_shows_the_adjusted_design() -> None:
    from reviewer_app.reporting.formats import render

    rng = np.random.default_rng(11)
    ratings, outputs, rubric = _panel(rng, dict.fromkeys(MODELS, 3.0), _by_model(1.0), n_samples=40)
    report = _report(ratings, outputs, rubric)
    html, markdown = render(report, "html"), render(report, "md")
    for text in (html, markdown):
        assert "Reviewers did not rate the models evenly" in text and "adjusted for each reviewer" in text
    assert '"reviewer_design"' in render(report, "json")


@pytest.mark.slow
def test_the_new_panel_interval_covers_the_score_another_panel_would_give() -> None:
    # Equal models at 3.0 on a symmetric 1-5 scale and reviewers drawn from N(0, 0.4^2): the score of the
    # population of panels is exactly 3.0. This panel's interval covers only this panel's score (65-84% of the
    # time for 4-12 reviewers); the new panel's interval adds the reviewers' variance.
    rng = np.random.default_rng(44)
    models = ["m0", "m1", "m2", "m3"]
    plain, panel, n = 0, 0, 0
    for _ in range(40):
        ratings, outputs, rubric = rating_panel(
            rng, {"s": dict.fromkeys(models, 3.0)}, n_samples=40, biases=list(rng.normal(0, 0.4, 8)), overlap=2
        )
        report = build_report(ratings, outputs, rubric, batch="b", seed=1, rounds=100, diagnostics=False)
        for row in report.scenarios[0].ranking:
            if row.dimension != "correctness":
                continue
            assert row.ci_low is not None and row.ci_high is not None
            assert row.panel_ci_low is not None and row.panel_ci_high is not None
            n += 1
            plain += row.ci_low <= 3.0 <= row.ci_high
            panel += row.panel_ci_low <= 3.0 <= row.panel_ci_high
    print(f"coverage of a new panel's score: this panel's CI {plain / n:.1%}, the new panel's {panel / n:.1%}")
    assert plain / n < 0.85
    assert panel / n >= 0.9
