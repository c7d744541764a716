"""The reliability of the models' means (issue 28, point 3), on simulated panels with a known truth.

Alpha measures agreement on single items; a ranking rests on model means over many items. A panel whose
reviewers agree little on single items but whose models are well apart must not be called weak (the code
before this said "treat this ranking as weak" on alpha alone); a panel whose reviewers agree well on items
that do not tell the models apart has unreliable means.
"""

from __future__ import annotations

import numpy as np
import pytest

from reviewer_app.analysis.reliability import means_reliability, spearman_brown
from reviewer_app.analysis.report import build_report
from reviewer_app.reporting.verdict import verdicts
from tests.support.simulated_panels import continuous, estimate_from_scores, likert, pairwise_panel, rating_panel


def _low_alpha_apart() -> tuple[object, ...]:
    """Four models 0.6 apart on 1-5; reviewers add noise of sd 2 to every rating: alpha about 0.13."""
    return rating_panel(
        np.random.default_rng(1), {"s": {"A": 2.2, "B": 2.8, "C": 3.4, "D": 4.0}}, n_samples=150,
        biases=[0, 0.3, -0.3, 0.5, -0.5, 0.1], overlap=2, noise_sd=2.0, sample_sd=0.3, dims=(likert("correctness"),),
    )  # fmt: skip


def test_low_alpha_with_models_well_apart_is_not_called_weak():
    ratings, outputs, rubric = _low_alpha_apart()
    report = build_report(ratings, outputs, rubric, batch="b", seed=1, rounds=200)  # type: ignore[arg-type]
    block = report.scenarios[0]
    alpha = next(r for r in block.agreement if r.dimension == "correctness")
    assert alpha.low_agreement and alpha.alpha is not None and alpha.alpha < 0.25  # reviewers barely agree
    means = next(r for r in block.reliability if r.dimension == "correctness")
    assert means.split_half is not None and means.split_half > 0.95 and means.ci_low is not None and means.ci_low > 0.9
    for text in (*block.summary.values(), *block.warnings, *report.overall.summary.values()):
        assert "weak" not in text, text
    assert "but the models' means are reliable (split-half 0.98" in block.summary["correctness"]
    assert "can stand" in block.summary["correctness"] and "(alpha 0.13)" in block.summary["correctness"]
    line = verdicts(report)[0].sureness
    assert "agree little on single items (alpha 0.13), but the models' means are reliable" in line


def test_reliable_items_with_indistinguishable_models_have_unreliable_means():
    ratings, outputs, rubric = rating_panel(
        np.random.default_rng(2), {"s": {"A": 3.0, "B": 3.0, "C": 3.0, "D": 3.0}}, n_samples=150,
        biases=[0.0, 0.0, 0.0, 0.0], overlap=2, noise_sd=0.2, sample_sd=1.5, dims=(likert("correctness"),),
    )  # fmt: skip
    report = build_report(ratings, outputs, rubric, batch="b", seed=1, rounds=200)
    block = report.scenarios[0]
    alpha = next(r for r in block.agreement if r.dimension == "correctness")
    assert alpha.alpha is not None and alpha.alpha > 0.9 and not alpha.low_agreement  # reviewers agree well
    means = next(r for r in block.reliability if r.dimension == "correctness")
    assert means.split_half is not None and means.split_half < 0.3 and means.ci_low is not None and means.ci_low < 0


def _truth(target: float, n_models: int, n_samples: int, sd: float = 1.0) -> dict[str, float]:
    """Model means whose spread gives the means a reliability of ``target``: var(q) / (var(q) + sd^2 / S)."""
    err = sd**2 / n_samples
    q = np.linspace(0.0, 1.0, n_models)
    q *= np.sqrt(target / (1 - target) * err / np.var(q, ddof=1))
    return {f"m{i}": float(x) for i, x in enumerate(q)}


def test_split_half_estimates_the_known_reliability():
    # 8 models, 100 samples, truth 0.9: over 30 panels the estimate averages within 0.02 of it and its 95% CI
    # holds it in most (200 panels: mean 0.909, coverage 97.5%; 5 models at 0.7: 98%; 4 at 0.5: 90.5%).
    rng = np.random.default_rng(5)
    means = _truth(0.9, 8, 100)
    rows = [
        means_reliability(estimate_from_scores(rng, means, n_samples=100, noise_sd=1.0, rounds=10), "d", f"p{k}")
        for k in range(30)
    ]
    values = np.array([r.split_half for r in rows if r is not None])
    assert abs(values.mean() - 0.9) < 0.02
    held = sum(
        r is not None and r.ci_low is not None and r.ci_high is not None and r.ci_low <= 0.9 <= r.ci_high for r in rows
    )
    assert held >= 25


def test_spearman_brown_steps_halves_up_to_the_whole():
    assert spearman_brown(0.5) == pytest.approx(2 / 3)
    assert spearman_brown(0.5, 3.0) == pytest.approx(0.75)
    assert spearman_brown(1.0) == pytest.approx(1.0) and spearman_brown(-0.4) == pytest.approx(-0.4)


def test_undefined_reliability_says_why_and_the_ranking_stays_weak():
    est = estimate_from_scores(np.random.default_rng(0), {"A": 0.0, "B": 1.0}, n_samples=40, rounds=10)
    row = means_reliability(est, "d", "two")
    assert row is not None and row.split_half is None and row.note == "needs 3 or more models"


def test_pairwise_strengths_far_apart_are_reliable():
    strengths = {"x": {"A": -1.0, "B": 0.0, "C": 1.0, "D": 2.0}}
    ratings, outputs, rubric = pairwise_panel(np.random.default_rng(3), strengths, n_samples=60, n_reviewers=4)
    report = build_report(ratings, outputs, rubric, batch="b", seed=1, rounds=200, diagnostics=False)
    row = next(r for r in report.scenarios[0].reliability if r.dimension == "overall")
    assert row.split_half is not None and row.split_half > 0.95


def test_reliability_does_not_depend_on_the_seed_or_rounds():
    ratings, outputs, rubric = rating_panel(
        np.random.default_rng(4), {"s": {"A": 2.8, "B": 3.0, "C": 3.2}}, n_samples=50, biases=[0.0, 0.5, -0.2],
        overlap=2, dims=(continuous("score", 0, 10),),
    )  # fmt: skip
    one = build_report(ratings, outputs, rubric, batch="b", seed=1, rounds=200, diagnostics=False)
    two = build_report(ratings, outputs, rubric, batch="b", seed=2, rounds=300, diagnostics=False)
    assert one.scenarios[0].reliability == two.scenarios[0].reliability
    assert one.overall.reliability == two.overall.reliability
