"""The 0-1 overall must not depend on a continuous scale's arbitrary max.

A continuous dimension's share of its scale, (value - min) / (max - min), moves with a max the rubric chose (an
MQM score capped at 25 or at 250). Averaged with a Likert dimension, that number would set how much it weighs:
here A is a point better on the Likert dimension and B has 8 fewer errors, so a cap of 25 put B first overall
and a cap of 250 put A first. The overall now leaves a continuous dimension out wherever a scenario has a Likert
or binary one, and ranks it on its own.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from reviewer_app.analysis.report import build_report
from tests.support.simulated_panels import continuous, likert, rating_panel


def _batch():
    ratings, outputs, rubric = rating_panel(
        np.random.default_rng(8), {"s": {"A": 4.0, "B": 3.0}}, n_samples=30, biases=[0.0, 0.1], overlap=2,
        noise_sd=0.5, dims=(likert("correctness"), continuous("mqm", 0.0, 25.0, higher_is_better=False)),
    )  # fmt: skip
    mqm = (ratings["dimension"] == "mqm").to_numpy()
    errors = np.where(ratings["model_a"] == "A", 10.0, 2.0) + np.random.default_rng(9).normal(0, 1.5, len(ratings))
    ratings.loc[mqm, "value"] = np.round(np.clip(errors[mqm], 0.0, 25.0), 2).astype(str)
    return ratings, outputs, rubric


def _with_max(rubric, hi):
    dims = tuple(replace(d, max=hi) if d.name == "mqm" else d for d in rubric.dimensions)
    return replace(rubric, dimensions=dims)


def _scores(report, dimension):
    block = report.scenarios[0]
    return {r.model: r.score for r in block.ranking if r.dimension == dimension}


@pytest.mark.parametrize("hi", [25.0, 250.0, 2500.0])
def test_overall_does_not_move_with_a_continuous_max(hi):
    ratings, outputs, rubric = _batch()
    base = build_report(ratings, outputs, _with_max(rubric, 25.0), batch="b", seed=1, rounds=200, diagnostics=False)
    scaled = build_report(ratings, outputs, _with_max(rubric, hi), batch="b", seed=1, rounds=200, diagnostics=False)
    overall, overall_scaled = _scores(base, "overall"), _scores(scaled, "overall")
    assert overall == pytest.approx(overall_scaled)  # the same scores, so the same order
    assert overall["A"] > overall["B"]  # the Likert dimension's order, which no max can now overturn
    correctness = _scores(base, "correctness")
    assert overall == pytest.approx({m: (v - 1) / 4 for m, v in correctness.items()})
    mqm = _scores(scaled, "mqm")  # still ranked on its own, in its own units
    assert mqm["B"] < mqm["A"] and [r.model for r in scaled.scenarios[0].ranking if r.dimension == "mqm"][0] == "B"


def test_a_continuous_dimension_alone_is_the_overall():
    # With no Likert or binary dimension in the scenario it is the overall: its order whatever its max.
    ratings, outputs, rubric = rating_panel(
        np.random.default_rng(4), {"s": {"A": 40.0, "B": 60.0}}, n_samples=20, biases=[0.0, 3.0], overlap=2,
        noise_sd=10.0, dims=(continuous("da", 0.0, 100.0),),
    )  # fmt: skip
    report = build_report(ratings, outputs, rubric, batch="b", seed=1, rounds=200, diagnostics=False)
    overall, da = _scores(report, "overall"), _scores(report, "da")
    assert overall == pytest.approx({m: v / 100 for m, v in da.items()})
