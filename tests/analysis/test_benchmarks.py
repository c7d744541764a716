"""Public benchmark scores beside the blind ranking: Spearman's rho against hand-computed values, a simulated
panel that reverses the benchmark, a tie within the margin, and what the report does with odd inputs."""

from __future__ import annotations

import jsonschema
import numpy as np
import pandas as pd
import pytest

from reviewer_app.analysis.benchmarks import average_ranks, competition_ranks, spearman
from reviewer_app.analysis.report import build_report
from reviewer_app.domain.benchmarks import BenchmarkScores, BenchmarkSection
from reviewer_app.domain.report import Report, report_to_dict
from reviewer_app.reporting.formats import load_schema, render
from tests.support.simulated_panels import pairwise_panel, rating_panel

# The panel clearly ranks C > B > A; the benchmark says A > B > C.
REVERSED = {"extraction": {"A": 2.0, "B": 3.0, "C": 4.2}, "summary": {"A": 2.0, "B": 3.0, "C": 4.2}}
BENCH = {"A": 90.0, "B": 80.0, "C": 70.0}


def _panel(quality: dict[str, dict[str, float]], seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame, object]:
    return rating_panel(np.random.default_rng(seed), quality, n_samples=30, biases=[0.0, 0.1, -0.1, 0.2])


def _report(quality, scores: BenchmarkScores | None, *, seed: int = 5, rounds: int = 400) -> Report:
    ratings, outputs, rubric = _panel(quality)
    return build_report(
        ratings, outputs, rubric, batch="b", seed=seed, rounds=rounds, diagnostics=False, benchmarks=scores
    )


def _scores(scores: dict[str, dict[str, float]], **kw) -> BenchmarkScores:
    return BenchmarkScores(source="scores.csv", scores=scores, **kw)


def _only(sections: tuple[BenchmarkSection, ...] | None) -> BenchmarkSection:
    assert sections is not None and len(sections) == 1
    return sections[0]


# Spearman's rho by hand.


def test_spearman_matches_hand_computed_values():
    # d = ranks differ by 1 in two places: 1 - 6 * 2 / (4 * 15) = 0.8
    assert spearman(np.array([1, 2, 3, 4]), np.array([1, 3, 2, 4]))[0] == pytest.approx(0.8)
    assert spearman(np.array([1, 2, 3, 4]), np.array([40, 30, 20, 10]))[0] == pytest.approx(-1.0)
    # Ties take their average rank: x ranks (1, 2.5, 2.5, 4) against (1, 2, 3, 4): 4.5 / sqrt(4.5 * 5) = 3/sqrt(10)
    assert spearman(np.array([1, 2, 2, 3]), np.array([1, 2, 3, 4]))[0] == pytest.approx(3 / np.sqrt(10))
    assert list(average_ranks(np.array([5.0, 1.0, 5.0, 3.0]))) == [3.5, 1.0, 3.5, 2.0]


def test_spearman_per_row_leaves_out_missing_and_flat_rows():
    rows = np.array([[1.0, 3.0, 2.0, 4.0], [1.0, np.nan, 2.0, 3.0], [2.0, 2.0, 2.0, 2.0]])
    rho = spearman(np.array([1, 2, 3, 4]), rows)
    assert rho[0] == pytest.approx(0.8) and np.isnan(rho[1]) and np.isnan(rho[2])


def test_benchmark_ranks_share_a_rank_on_equal_scores():
    assert competition_ranks({"a": 70.0, "b": 80.0, "c": 80.0, "d": 60.0}, True) == {"a": 3, "b": 1, "c": 1, "d": 4}
    assert competition_ranks({"a": 0.1, "b": 0.3}, False) == {"a": 1, "b": 2}


# A known reversal.


@pytest.fixture(scope="module")
def reversed_report() -> Report:
    return _report(REVERSED, _scores({"MMLU": BENCH}))


def test_a_panel_that_reverses_the_benchmark_gives_rho_near_minus_one(reversed_report: Report):
    for block, scope in [*((s, f"on {s.scenario}") for s in reversed_report.scenarios), (reversed_report.overall, "")]:
        section = _only(block.benchmarks)
        assert section.n_models == 3
        assert section.spearman == pytest.approx(-1.0)
        assert section.ci_low is not None and section.ci_high is not None
        assert section.ci_low <= section.spearman and section.ci_high < 0  # the whole interval below 0
        assert [m.model for m in section.models] == ["C", "B", "A"]  # the blind order
        assert [m.benchmark_rank for m in section.models] == [3, 2, 1]
        assert [m.blind_rank for m in section.models] == [1, 2, 3]
        # Every pair is separated the other way: all three are reversed, whatever the 10-point gaps.
        assert {(p.model_a, p.model_b, p.verdict) for p in section.pairs} == {
            ("A", "B", "reversed"),
            ("B", "C", "reversed"),
            ("A", "C", "reversed"),
        }
        assert len(section.disagreements) == 3
        for line in section.disagreements:
            assert line.endswith(": reversed (significant).") and scope in line
    extraction = _only(reversed_report.scenarios[0].benchmarks)
    assert extraction.disagreements[0] == (
        "The benchmark puts A 20 points above C; on extraction your reviewers rank C above A: reversed (significant)."
    )
    overall = _only(reversed_report.overall.benchmarks).disagreements
    assert all("across all scenarios your reviewers" in line for line in overall)


def test_a_lower_is_better_benchmark_is_turned_round():
    errors = {"err": {"A": 30.0, "B": 20.0, "C": 10.0}}  # C makes the fewest errors: agrees with the panel
    report = _report(REVERSED, _scores(errors, higher_is_better={"err": False}, margin=100.0))
    section = _only(report.scenarios[0].benchmarks)
    assert section.spearman == pytest.approx(1.0) and not section.higher_is_better
    assert {p.verdict for p in section.pairs} == {"agrees"}
    assert (
        "The benchmark puts C 10 points ahead of B (lower is better); on extraction your reviewers also rank C "
        "above B: agrees (significant)."
    ) in section.disagreements


# A tie within the margin.


def test_a_one_point_gap_the_panel_does_not_separate_is_tied():
    quality = {"qa": {"A": 3.0, "B": 3.0, "C": 4.5}}
    report = _report(quality, _scores({"Arena": {"A": 71.0, "B": 70.0, "C": 95.0}}))
    section = _only(report.scenarios[0].benchmarks)
    ab = next(p for p in report.scenarios[0].pairs if p.dimension == "overall" and {p.model_a, p.model_b} == {"A", "B"})
    assert not ab.separated  # the panel's own decision
    assert [(p.model_a, p.model_b, p.verdict) for p in section.pairs] == [("A", "B", "tied")]
    assert section.disagreements == (
        "The benchmark puts A 1 point above B; on qa your reviewers do not separate them: tied.",
    )
    # The C pairs are 24-25 points apart and the panel agrees: no sentence. A smaller margin drops the tie too.
    narrow = _report(quality, _scores({"Arena": {"A": 71.0, "B": 70.0, "C": 95.0}}, margin=0.5))
    assert _only(narrow.scenarios[0].benchmarks).pairs == ()
    wide = _report(quality, _scores({"Arena": {"A": 71.0, "B": 70.0, "C": 95.0}}, margin=30.0))
    assert {p.verdict for p in _only(wide.scenarios[0].benchmarks).pairs} == {"tied", "agrees"}


# Odd inputs.


def test_models_outside_the_batch_are_noted_and_missing_ones_listed_without_scores():
    scores = _scores({"MMLU": {"A": 90.0, "B": 80.0, "Z-model": 99.0}})
    section = _only(_report(REVERSED, scores).scenarios[0].benchmarks)
    assert "Not in this batch, so left out: Z-model." in section.notes
    assert "Z-model" not in {m.model for m in section.models}
    c = next(m for m in section.models if m.model == "C")
    assert c.benchmark_score is None and c.benchmark_rank is None and c.blind_rank == 1
    # Two models with both scores: no rho, and the note says why.
    assert section.n_models == 2 and section.spearman is None and section.ci_low is None
    assert any("Spearman's rho needs at least 3" in n for n in section.notes)
    assert any("No MMLU score in the file for C" in n for n in section.notes)


def test_several_benchmarks_each_get_a_section():
    scores = _scores({"MMLU": BENCH, "Arena": {"A": 1000.0, "B": 1100.0, "C": 1200.0}})
    sections = _report(REVERSED, scores).overall.benchmarks
    assert sections is not None and [s.benchmark for s in sections] == ["MMLU", "Arena"]
    assert sections[1].spearman == pytest.approx(1.0) and sections[1].pairs == ()  # 100-point gaps, all agree


def test_no_benchmarks_no_section_and_the_json_is_unchanged(reversed_report: Report):
    plain = _report(REVERSED, None)
    as_dict = report_to_dict(plain)
    assert all("benchmarks" not in s for s in as_dict["scenarios"]) and "benchmarks" not in as_dict["overall"]
    for fmt in ("md", "html"):
        assert "Public benchmarks" not in render(plain, fmt)
        assert "Public benchmarks" in render(reversed_report, fmt)
    with_section = report_to_dict(reversed_report)
    jsonschema.Draft202012Validator(load_schema()).validate(with_section)
    assert with_section["overall"]["benchmarks"][0]["spearman"] == pytest.approx(-1.0)


def test_verdicts_and_rho_do_not_depend_on_the_seed():
    a = _report(REVERSED, _scores({"MMLU": {"A": 90.0, "B": 89.0, "C": 70.0}}), seed=1)
    b = _report(REVERSED, _scores({"MMLU": {"A": 90.0, "B": 89.0, "C": 70.0}}), seed=2)
    again = _report(REVERSED, _scores({"MMLU": {"A": 90.0, "B": 89.0, "C": 70.0}}), seed=1)
    sections = [s.benchmarks for s in [*a.scenarios, a.overall]]
    assert sections == [s.benchmarks for s in [*again.scenarios, again.overall]]  # same seed: to the last digit
    assert sections != [s.benchmarks for s in [*b.scenarios, b.overall]]  # another seed: other intervals
    for x, y in zip([*a.scenarios, a.overall], [*b.scenarios, b.overall], strict=True):
        sx, sy = _only(x.benchmarks), _only(y.benchmarks)
        assert sx.spearman == sy.spearman and sx.pairs == sy.pairs and sx.disagreements == sy.disagreements


def test_pairwise_mode_compares_bradley_terry_strengths():
    ratings, outputs, rubric = pairwise_panel(
        np.random.default_rng(3), {"x": {"A": -1.5, "B": 0.0, "C": 1.5}}, n_samples=40, n_reviewers=4
    )
    report = build_report(
        ratings, outputs, rubric, batch="duel", seed=5, rounds=300, diagnostics=False, benchmarks=_scores({"M": BENCH})
    )
    section = _only(report.scenarios[0].benchmarks)
    assert section.spearman == pytest.approx(-1.0) and section.ci_high is not None and section.ci_high < 0
    assert any(line.endswith("reversed (significant).") for line in section.disagreements)
    jsonschema.Draft202012Validator(load_schema()).validate(report_to_dict(report))
