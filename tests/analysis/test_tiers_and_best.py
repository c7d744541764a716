"""Tiers without gaps and the probability of being the best (issue 28, point 6).

Tiers were a model's best letter as a number, so a letter held only beside a better one ("cde" next to a
model whose best is "c") left a number out: 1, 1, 2, 2, 3, 5. They are now numbered consecutively. Each
ranking row also carries P(best): the share of bootstrap replicates in which the model has the top score.
"""

from __future__ import annotations

import numpy as np
import pytest

from reviewer_app.analysis.decisions import ranking_rows
from reviewer_app.analysis.letters import letters_and_tiers
from reviewer_app.analysis.report import build_report
from reviewer_app.reporting.formats import render
from tests.support.simulated_panels import estimate_from_scores, likert, rating_panel


def _uneven_panel(seed: int = 1008):
    """Six models, some rated precisely and some noisily: separations that do not follow the order of the
    means, the kind of ranking whose tiers skipped (found by search; the old code gave 1, 1, 2, 2, 3, 5)."""
    rng = np.random.default_rng(seed)
    means = {f"m{i}": float(x) for i, x in enumerate(np.sort(rng.uniform(0, 1.2, 6))[::-1])}
    sds = {k: float(rng.choice([0.2, 1.5])) for k in means}
    return estimate_from_scores(rng, means, n_samples=30, noise_sd=sds, sample_sd=0.3, rounds=200)


def test_tiers_are_numbered_without_gaps():
    rows = ranking_rows(_uneven_panel(), "d").rows
    assert [r.letters for r in rows] == ["ab", "ac", "bc", "bd", "cde", "e"]  # "d" is no model's best letter
    assert [r.tier for r in rows] == [1, 1, 2, 2, 3, 4]


def test_tiers_follow_the_best_letters_in_order():
    # Separations that are not transitive (from a search over separation matrices): best letters a, a, c, b, e, f.
    separated = np.array(
        [[0, 0, 1, 0, 1, 1], [0, 0, 0, 1, 1, 1], [1, 0, 0, 0, 1, 1], [0, 1, 0, 0, 0, 1], [1, 1, 1, 0, 0, 0],
         [1, 1, 1, 1, 0, 0]], dtype=bool,
    )  # fmt: skip
    letters, tiers = letters_and_tiers(list(range(6)), separated)
    assert letters == ["ab", "ac", "cd", "bde", "ef", "f"]
    assert tiers.tolist() == [1, 1, 3, 2, 4, 5]  # was 1, 1, 3, 2, 5, 6
    assert sorted(set(tiers.tolist())) == list(range(1, 6))


def test_p_best_sums_to_one_and_finds_a_clear_leader():
    # A leader 0.5 above three others (noise 0.5, 80 samples): its mean is 4+ standard errors clear.
    est = estimate_from_scores(np.random.default_rng(3), {"A": 1.5, "B": 1.0, "C": 0.95, "D": 0.9}, n_samples=80)
    rows = ranking_rows(est, "d").rows
    shares = {r.model: r.p_best for r in rows}
    assert sum(v for v in shares.values() if v is not None) == pytest.approx(1.0)
    assert shares["A"] is not None and shares["A"] > 0.99
    # Three equal models: the probability spreads over them, none near 1.
    est = estimate_from_scores(np.random.default_rng(4), {"A": 1.0, "B": 1.0, "C": 1.0}, n_samples=80)
    shares = {r.model: r.p_best for r in ranking_rows(est, "d").rows}
    assert sum(v for v in shares.values() if v is not None) == pytest.approx(1.0)
    assert all(v is not None and 0.05 < v < 0.8 for v in shares.values())


def test_every_ranking_of_a_report_carries_p_best_summing_to_one():
    ratings, outputs, rubric = rating_panel(
        np.random.default_rng(6), {"s1": {"A": 3.8, "B": 3.0, "C": 2.9}, "s2": {"A": 3.6, "B": 3.1, "C": 3.0}},
        n_samples=40, biases=[0.0, 0.3, -0.3], overlap=2, dims=(likert("correctness"),),
    )  # fmt: skip
    report = build_report(ratings, outputs, rubric, batch="b", seed=1, rounds=300, diagnostics=False)
    blocks = [*report.scenarios, report.overall]
    rankings = [r for b in blocks for r in b.ranking] + list(report.overall.composite.ranking)
    by_ranking: dict[tuple[str, str], float] = {}
    for name, rows in [(b.scenario, b.ranking) for b in report.scenarios] + [
        ("(overall)", report.overall.ranking),
        ("(composite)", report.overall.composite.ranking),
    ]:
        for r in rows:
            assert r.p_best is not None
            by_ranking[(name, r.dimension)] = by_ranking.get((name, r.dimension), 0.0) + r.p_best
    assert by_ranking and all(v == pytest.approx(1.0) for v in by_ranking.values())
    assert all(r.p_best is not None for r in rankings)
    top = next(r for r in report.overall.composite.ranking if r.model == "A")
    assert top.p_best is not None and top.p_best > 0.95
    assert "P(best)" in render(report, "md") and "probability of being the best" in render(report, "html")
    assert "p_best" in render(report, "csv").splitlines()[0]
