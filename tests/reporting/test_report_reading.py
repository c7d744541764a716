"""The report reads right (issue 8 points 10-12): low agreement said first with its number in the typed report,
Markdown and HTML; numbers to 2-3 significant digits under the words people read; one colour per tier; axes
at the scale's bounds; the fast-reviewer flag in the reviewers' table.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from reviewer_app.analysis.report import build_report
from reviewer_app.domain.low_agreement import agreement_phrase, low_agreement_line
from reviewer_app.domain.report import Report, score_bounds
from reviewer_app.domain.report_rankings import AgreementRow, ReliabilityRow
from reviewer_app.reporting.formats import fmt, render
from reviewer_app.reporting.html import ci_chart, tier_colour
from tests.support.simulated_panels import likert, rating_panel

RANKING_WORDS = re.compile(r" (leads on|are tied on|are all tied on|is behind|are behind) ")


def _panel(biases: list[float], noise_sd: float, seed: int) -> Report:
    """Three models clearly apart on two 1-5 dimensions; reviewer biases and noise set the agreement."""
    ratings, outputs, rubric = rating_panel(
        np.random.default_rng(seed), {"s1": {"m1": 2.4, "m2": 3.0, "m3": 3.6}, "s2": {"m1": 2.6, "m2": 3.0, "m3": 3.4}},
        n_samples=40, biases=biases, overlap=2, noise_sd=noise_sd, sample_sd=0.1,
        dims=(likert("correctness"), likert("style")),
    )  # fmt: skip
    ratings.loc[ratings["reviewer"] == "r2", "seconds_spent"] = 3.0  # the others take 30 s an item
    return build_report(ratings, outputs, rubric, batch="b", seed=1, rounds=200)


# Opposite leniencies with little noise: reviewers disagree more than chance, yet the ranking is confident.
NEGATIVE = {"biases": [-1.5, 1.5, 0.0], "noise_sd": 0.3, "seed": 1}
# Moderate leniencies and noise: alpha near 0.1-0.2.
WEAK = {"biases": [-0.6, 0.6, 0.0], "noise_sd": 1.1, "seed": 3}


@pytest.fixture(scope="module", params=["negative", "weak"])
def low_report(request: pytest.FixtureRequest) -> Report:
    return _panel(**(NEGATIVE if request.param == "negative" else WEAK))  # type: ignore[arg-type]


def test_the_words_follow_the_number():
    less, barely = "agree less than chance on single items of", "barely agree on single items of"
    assert agreement_phrase("tone", -0.3, -0.5) == (less, "tone (alpha -0.30)")
    assert agreement_phrase("tone", 0.12, 0.02) == (barely, "tone (alpha 0.12)")
    assert agreement_phrase("tone", 0.12, -0.05) == (barely, "tone (alpha 0.12, 95% CI down to -0.05)")
    assert agreement_phrase("tone", 0.45, -0.02) == (
        "may not agree at all on single items of",
        "tone (alpha 0.45, but its 95% CI reaches -0.02)",
    )
    assert agreement_phrase("tone", 0.6, 0.2) is None and agreement_phrase("tone", None, None) is None
    assert agreement_phrase("tone", -0.004, -0.1) == (less, "tone (alpha -0.004)")  # not -0.00
    assert agreement_phrase("tone", 0.36, -6e-05) == (barely, "tone (alpha 0.36, 95% CI down to -0.00006)")


def _row(dimension: str, alpha: float | None, ci_low: float | None) -> AgreementRow:
    return AgreementRow(dimension=dimension, level="ordinal", alpha=alpha, ci_low=ci_low, ci_high=None, n_units=9,
                        n_ratings=18, n_reviewers=3, note=None, low_agreement=False)  # fmt: skip


def _reliability(dimension: str, value: float | None, lo: float | None, hi: float | None) -> ReliabilityRow:
    return ReliabilityRow(dimension=dimension, split_half=value, ci_low=lo, ci_high=hi, n_models=4, n_samples=80,
                          note=None if value is not None else "needs 3 or more models")  # fmt: skip


def test_one_sentence_names_every_low_dimension_grouped():
    rows = [_row("correctness", 0.12, 0.01), _row("style", -0.3, -0.5), _row("tone", 0.12, -0.01), _row("x", 0.8, 0.6)]
    assert low_agreement_line(rows) == (
        "Reviewers barely agree on single items of correctness (alpha 0.12) and tone (alpha 0.12, 95% CI down to "
        "-0.01) and agree less than chance on single items of style (alpha -0.30); the reliability of the models' "
        "means on correctness, style and tone is not known: treat their rankings as weak."
    )
    assert low_agreement_line(rows[:1]) == (
        "Reviewers barely agree on single items of correctness (alpha 0.12): treat this ranking as weak (the "
        "reliability of the models' means is not known)."
    )
    assert low_agreement_line(rows[3:]) is None


def test_the_sentence_says_what_alpha_and_the_means_reliability_each_measure():
    rows = [_row("correctness", 0.21, 0.1), _row("style", 0.12, 0.01), _row("tone", 0.1, 0.0)]
    means = [
        _reliability("correctness", 0.93, 0.85, 0.97),
        _reliability("style", 0.41, 0.1, 0.7),
        _reliability("tone", 0.85, 0.3, 0.95),  # high, but its CI reaches below 0.5: not enough to stand
    ]
    assert low_agreement_line(rows[:1], means) == (
        "Reviewers barely agree on single items of correctness (alpha 0.21), but the models' means are reliable "
        "(split-half 0.93, 95% CI 0.85 – 0.97): this ranking can stand."
    )
    assert low_agreement_line(rows[1:2], means) == (
        "Reviewers barely agree on single items of style (alpha 0.12), and the models' means are not reliable "
        "either (split-half 0.41, 95% CI 0.10 – 0.70): treat this ranking as weak."
    )
    assert low_agreement_line(rows, means, headline=True) == (
        "Reviewers barely agree on single items of correctness (alpha 0.21), style (alpha 0.12) and tone (alpha "
        "0.10); the models' means are reliable on correctness (split-half 0.93, 95% CI 0.85 – 0.97): its ranking "
        "can stand; not on style (split-half 0.41, 95% CI 0.10 – 0.70) and tone (split-half 0.85, 95% CI 0.30 – "
        "0.95): treat their rankings as weak."
    )


def test_every_summary_sentence_says_it_first(low_report: Report):
    for block in (*low_report.scenarios, low_report.overall):
        rows = {r.dimension: r for r in block.agreement}
        assert block.low_agreement and block.warnings[0].count("(alpha ") == len(block.low_agreement)
        for dim, line in block.summary.items():
            row = rows.get(dim)
            if row is None or not row.low_agreement:
                assert not line.startswith("Reviewers"), line
                continue
            assert row.alpha is not None and line.startswith("Reviewers ")
            assert f"{dim} (alpha {row.alpha:.2f}" in line
            assert line.index("(alpha") < RANKING_WORDS.search(line).start()  # type: ignore[union-attr]
    overall = next(r for r in low_report.overall.agreement if r.dimension == "overall")
    composite = low_report.overall.composite.summary
    assert composite.startswith("Reviewers ") and f"overall (alpha {overall.alpha:.2f}" in composite


def test_negative_and_weak_alpha_get_their_own_words():
    negative, weak = _panel(**NEGATIVE), _panel(**WEAK)  # type: ignore[arg-type]
    assert all(r.alpha is not None and r.alpha < 0 for r in negative.overall.agreement)
    assert "agree less than chance on single items of correctness" in negative.overall.summary["correctness"]
    assert all(r.alpha is not None and 0 <= r.alpha < 0.4 for r in weak.overall.agreement)
    assert "barely agree on single items of correctness" in weak.overall.summary["correctness"]


def _sections(text: str, heading: str) -> list[str]:
    return re.split(heading, text)[1:]


def test_markdown_and_html_say_it_before_any_ranking_sentence(low_report: Report):
    md, html = render(low_report, "md"), render(low_report, "html")
    # The headline: before the first section, with every low dimension's number.
    head = md.split("## Composite")[0]
    assert "⚠ Reviewers " in head and head.count("(alpha ") == len(low_report.overall.low_agreement)
    for section in _sections(md, r"\n## "):
        first_ranking = RANKING_WORDS.search(section)
        if first_ranking is not None and "Beside quality" not in section[:40]:
            assert 0 <= section.find("(alpha ") < first_ranking.start(), section[:300]
        bullets = [line for line in section.splitlines() if line.startswith("- ")]
        if section.startswith(("s1 ", "s2 ", "All scenarios")):  # cautions, then ranking sentences
            assert bullets[0].startswith("- ⚠ ") and "(alpha " in bullets[0]
    html_head = html.split('<p class="summary">')[0]
    assert '<p class="warn"><strong>Reviewers ' in html_head
    for section in _sections(html, "<h2>")[1:]:  # each scenario and "All scenarios": cautions, then sentences
        if '<p class="summary">' in section:
            assert section.index('<p class="warn">') < section.index('<p class="summary">')
            assert section.find("(alpha ") < RANKING_WORDS.search(section).start()  # type: ignore[union-attr]


def test_numbers_show_two_to_three_significant_digits():
    cases = {3.512: "3.51", 12.34: "12.3", 123.4: "123", 1234.4: "1234", 0.634: "0.63", 0.05: "0.050"}
    cases |= {0.0042: "0.0042", -0.057: "-0.057", 0.0: "0.00", -1.234: "-1.23", 0.996: "1.00"}
    assert {x: fmt(x) for x in cases} == cases
    assert fmt(0.123456, 3) == "0.123" and fmt(None) == "–" and fmt(7) == "7"


def test_tables_use_headings_not_field_names():
    report = _panel(**WEAK)  # type: ignore[arg-type]
    md, html = render(report, "md"), render(report, "html")
    for name in ("ci_low", "ci_high", "n_units", "n_ratings", "low_agreement", "median_seconds", "self_consistency"):
        assert f"<th>{name}</th>" not in html and f"| {name} |" not in md
    assert "<th>items</th>" in html and "<th>median seconds per item</th>" in html and "| s/item |" in md


def test_fast_reviewer_is_flagged_in_the_report():
    report = _panel(**WEAK)  # type: ignore[arg-type]
    rows = {r.reviewer: r for r in report.reviewers}
    assert rows["r2"].median_seconds == 3.0 and rows["r0"].median_seconds == 30.0
    reason = "answers implausibly fast: median 3.0 s per item against 30 s for the rest of the panel"
    assert any(reason in x for x in rows["r2"].reasons)
    assert not any("fast" in x for r in ("r0", "r1") for x in rows[r].reasons)
    assert reason in render(report, "md") and reason in render(report, "html")
    assert any("implausibly fast" in d for d in report.methods.definitions)


def test_axes_end_at_the_scale_bounds():
    report = _panel(**WEAK)  # type: ignore[arg-type]
    assert score_bounds(report, "correctness") == (1.0, 5.0)
    assert score_bounds(report, "overall") == score_bounds(report, "composite") == (0.0, 1.0)
    rows = [r for r in report.overall.ranking if r.dimension == "correctness"]
    svg = ci_chart(rows, "correctness", bounds=(1.0, 5.0))
    ticks = re.findall(r'fill="#666">(-?[0-9.]+)</text>', svg)
    assert ticks[0] == "1.00" and ticks[-1] == "5.00"
    html = render(report, "html")
    for title in ("s1: correctness", "all scenarios: overall", "Composite score (95% CI)"):
        chart = html[html.index(f'aria-label="{title}"') :].split("</svg>")[0]
        labels = re.findall(r'fill="#666">(-?[0-9.]+)</text>', chart)
        assert (labels[0], labels[-1]) == (("1.00", "5.00") if "correctness" in title else ("0.00", "1.00"))


def test_one_colour_per_tier_in_every_chart():
    report = _panel(**NEGATIVE)  # type: ignore[arg-type]
    html = render(report, "html")
    rankings = {"Composite score (95% CI)": list(report.overall.composite.ranking)}
    for label, block in [(b.scenario, b) for b in report.scenarios] + [("all scenarios", report.overall)]:
        for dim in {r.dimension for r in block.ranking}:
            rankings[f"{label}: {dim}"] = [r for r in block.ranking if r.dimension == dim]
    charts = re.findall(r'<svg class="chart ci".*?</svg>', html)
    assert len(charts) == len(rankings)
    seen: set[tuple[int, str]] = set()
    for chart in charts:
        title = re.search(r'aria-label="([^"]+)"', chart).group(1)  # type: ignore[union-attr]
        fills = re.findall(r'<circle [^>]*fill="(#[0-9a-f]{6})"', chart)
        assert fills == [tier_colour(r.tier) for r in rankings[title]], title  # one dot per model, best first
        seen |= {(r.tier, tier_colour(r.tier)) for r in rankings[title]}
    tiers = {t for t, _ in seen}
    assert len(tiers) >= 2 and len({c for _, c in seen}) == len(tiers)  # a colour per tier, the same everywhere
