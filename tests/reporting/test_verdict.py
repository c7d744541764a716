"""The verdict (issue 27, point 11): one line per scenario and for the composite, read from the report's own
ranks, letters and pair tests, on simulated panels whose truth is known.

A clear leader is named as leading and "clear"; equal models are never called settled (their letters are one
group in at least 95% of panels, so the verdict says "tied" there too); and on every panel the verdict agrees
with the tables beneath it: the models it names first are the tier-1 models, and "clear" is said exactly when
the leader's every pair is separated.
"""

from __future__ import annotations

import numpy as np
import pytest

from reviewer_app.analysis.report import build_report
from reviewer_app.domain.report import Report
from reviewer_app.reporting.verdict import before_acting, verdicts
from tests.support.simulated_panels import likert, rating_panel


def _report(quality: dict[str, dict[str, float]], seed: int, n_samples: int = 30) -> Report:
    ratings, outputs, rubric = rating_panel(
        np.random.default_rng(seed), quality, n_samples=n_samples, biases=[0.0, 0.2, -0.2, 0.1], overlap=2,
        noise_sd=0.6, sample_sd=0.3, dims=(likert("correctness"), likert("style")),
    )  # fmt: skip
    return build_report(ratings, outputs, rubric, batch="b", seed=1, rounds=200, diagnostics=False)


CLEAR = {"s1": {"m1": 2.0, "m2": 2.8, "m3": 4.2}, "s2": {"m1": 2.2, "m2": 3.0, "m3": 4.0}}
EQUAL = {"s1": {"m1": 3.0, "m2": 3.0, "m3": 3.0}, "s2": {"m1": 3.2, "m2": 3.2, "m3": 3.2}}


def test_a_clear_leader_is_named_and_called_clear() -> None:
    report = _report(CLEAR, seed=1)
    lines = verdicts(report)
    assert [v.where for v in lines] == ["Composite", "s1", "s2"]
    for v in lines:
        assert v.standing.startswith("m3 leads; then m2; then m1"), v
        assert v.settled and v.sureness.startswith("clear: the leader is separated from every other model")
    assert "m3 comes first in" in lines[0].sureness  # the weightings of the scenarios
    assert [v.samples for v in lines] == [None, 30, 30]


def test_equal_models_are_never_called_settled() -> None:
    settled = 0
    for seed in range(20):
        for v in verdicts(_report(EQUAL, seed=seed, n_samples=20)):
            settled += v.settled
            if not v.settled:
                assert v.sureness.startswith("not settled")
    assert settled <= 0.05 * 20 * 3  # Holm at 5% family-wise over each ranking's pairs


@pytest.mark.parametrize("seed", range(6))
def test_the_verdict_says_what_the_tables_say(seed: int) -> None:
    """Random qualities: the names said first are the tier-1 models, "clear" exactly when every pair of the
    leader is separated, and the order of the groups is the tiers'."""
    rng = np.random.default_rng(100 + seed)
    quality = {s: {m: float(rng.uniform(2.5, 3.7)) for m in ("m1", "m2", "m3", "m4")} for s in ("s1", "s2")}
    report = _report(quality, seed=seed)
    blocks = {b.scenario: (b.ranking, b.pairs) for b in report.scenarios}
    blocks["Composite"] = (report.overall.composite.ranking, report.overall.composite.pairs)
    for v in verdicts(report):
        ranking, pairs = blocks[v.where]
        dimension = "composite" if v.where == "Composite" else "overall"
        rows = [r for r in ranking if r.dimension == dimension]
        top = sorted(r.model for r in rows if r.tier == 1)
        said = v.standing.split(" leads")[0].split(" are ")[0].split("; then")[0]
        assert sorted(said.replace(" and ", ", ").split(", ")) == top, (v, top)
        leader_pairs = [p for p in pairs if p.dimension == dimension and top[0] in (p.model_a, p.model_b)]
        expected = len(top) == 1 and len(leader_pairs) == len(rows) - 1 and all(p.separated for p in leader_pairs)
        assert v.settled == expected, v
        tiers = [sorted(r.model for r in rows if r.tier == t) for t in sorted({r.tier for r in rows})]
        groups = [sorted(g.replace(" and ", ", ").split(", ")) for g in v.standing.split("; then ")[1:]]
        assert groups == tiers[1:]


def test_before_acting_names_flagged_reviewers() -> None:
    ratings, outputs, rubric = rating_panel(
        np.random.default_rng(3), CLEAR, n_samples=30, biases=[0.0, 0.1, -0.1], overlap=2, noise_sd=0.6,
    )  # fmt: skip
    ratings.loc[ratings["reviewer"] == "r2", "seconds_spent"] = 2.0
    ratings.loc[ratings["reviewer"] != "r2", "seconds_spent"] = 30.0
    report = build_report(ratings, outputs, rubric, batch="b", seed=1, rounds=200)
    flagged = [r.reviewer for r in report.reviewers if r.flag]
    assert "r2" in flagged  # answers implausibly fast
    assert before_acting(report) == [f"{len(flagged)} flagged reviewers ({' and '.join(flagged)}): see Reviewers"]
