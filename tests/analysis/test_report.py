"""The report: documented schema, determinism, diagnostics on planted problems, renderers, the browser."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import jsonschema
import numpy as np
import pandas as pd
import pytest

from reviewer_app.analysis.report import build_report
from reviewer_app.domain.report import Report
from reviewer_app.domain.rubric import GoldItem, Rubric
from reviewer_app.reporting.formats import load_schema, render
from tests.support.chromium import CHROMIUM, CHROMIUM_ARGS
from tests.support.simulated_panels import likert, pairwise_panel, rating_panel

QUALITY = {"extraction": {"A": 3.6, "B": 3.6, "C": 2.6}, "summary": {"A": 3.0, "B": 3.8, "C": 3.0}}


def _rating_batch(seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame, Rubric]:
    rng = np.random.default_rng(seed)
    ratings, outputs, rubric = rating_panel(
        rng,
        QUALITY,
        n_samples=40,
        biases=[0.0, 0.1, -0.1, 1.2],
        overlap=3,
        dims=(likert("correctness"), likert("style")),
        repeats=2,
    )
    # Gold: r0 answers correctly, r1 wrongly; repeats: r2 consistent, r3 not.
    gold_rows, repeat_rows = [], []
    base = ratings.iloc[0].to_dict()
    for k in range(4):
        for reviewer, value in (("r0", "5"), ("r1", "1")):
            gold_rows.append(
                {
                    **base,
                    "sample_id": f"gold{k}",
                    "item_id": 10_000 + k,
                    "is_gold": True,
                    "reviewer": reviewer,
                    "dimension": "correctness",
                    "value": value,
                    "model_a": "A",
                }
            )
    for reviewer in ("r2", "r3"):
        mine = ratings[(ratings["reviewer"] == reviewer) & (ratings["dimension"] == "correctness")].head(5)
        again = mine.assign(occurrence=1)
        if reviewer == "r3":
            again["value"] = (6 - again["value"].astype(int)).astype(str).where(again["value"] != "3", "1")
        repeat_rows.append(again)
    ratings = pd.concat([ratings, pd.DataFrame(gold_rows), *repeat_rows], ignore_index=True)
    gold = tuple(GoldItem(sample_id=f"gold{k}", models=("A",), expected={"correctness": "5"}) for k in range(4))
    rubric = Rubric(
        mode="rating", overlap=3, dimensions=rubric.dimensions, gold=gold, scenario_weights={"extraction": 2.0}, seed=5
    )
    return ratings, outputs, rubric


@pytest.fixture(scope="module")
def rating_report() -> Report:
    ratings, outputs, rubric = _rating_batch()
    return build_report(ratings, outputs, rubric, batch="pilot", seed=5, rounds=1000)


@pytest.fixture(scope="module")
def pairwise_report() -> Report:
    rng = np.random.default_rng(1)
    ratings, outputs, rubric = pairwise_panel(
        rng, {"x": {"A": 0.5, "B": 0.5, "C": -0.6}, "y": {"A": 0.0, "B": 0.6, "C": -0.3}}, n_samples=40, n_reviewers=4
    )
    return build_report(ratings, outputs, rubric, batch="duel", seed=5, rounds=1000)


@pytest.mark.parametrize("which", ["rating_report", "pairwise_report"])
def test_json_validates_against_documented_schema(which, request):
    report = json.loads(render(request.getfixturevalue(which), "json"))
    jsonschema.Draft202012Validator(load_schema()).validate(report)
    assert {r["dimension"] for r in report["overall"]["ranking"]} >= {"overall"}
    assert {b["scenario"] for b in report["scenarios"]} == (
        {"extraction", "summary"} if which == "rating_report" else {"x", "y"}
    )


def test_schema_rejects_a_report_missing_a_documented_field(rating_report):
    broken = json.loads(render(rating_report, "json"))
    del broken["scenarios"][0]["ranking"][0]["tier"]
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(broken, load_schema())


def test_report_is_deterministic_for_a_seed():
    ratings, outputs, rubric = _rating_batch()
    a = build_report(ratings, outputs, rubric, batch="p", seed=9, rounds=200, generated_at=pd.Timestamp(0))
    b = build_report(ratings, outputs, rubric, batch="p", seed=9, rounds=200, generated_at=pd.Timestamp(0))
    assert render(a, "json") == render(b, "json")


def test_gold_and_repeats_stay_out_of_rankings(rating_report):
    counts = rating_report.methods.counts
    assert counts.gold_ratings == 8 and counts.repeat_ratings == 10
    extraction = next(b for b in rating_report.scenarios if b.scenario == "extraction")
    # 40 samples x 3 models x 2 repeats x 3 reviewers per dimension.
    assert all(r.n == 240 for r in extraction.ranking)


def test_reviewer_diagnostics_flag_planted_problems(rating_report):
    by = {r.reviewer: r for r in rating_report.reviewers}
    assert by["r3"].leniency > 0.15 and any("higher than the others" in s for s in by["r3"].reasons)
    assert by["r0"].gold_accuracy == 1.0 and by["r1"].gold_accuracy == 0.0
    assert any("gold checks" in s for s in by["r1"].reasons)
    assert by["r2"].self_consistency == 1.0 and by["r3"].self_consistency < 0.6
    assert not by["r0"].flag and by["r3"].flag


def test_composite_uses_rubric_weights_and_sensitivity_adds_up(rating_report):
    comp = rating_report.overall.composite
    assert comp.weights == {"extraction": 2.0, "summary": 1.0}
    overall = {
        (b.scenario, r.model): r.score for b in rating_report.scenarios for r in b.ranking if r.dimension == "overall"
    }
    for row in comp.ranking:
        expected = (2 * overall[("extraction", row.model)] + overall[("summary", row.model)]) / 3
        assert row.score == pytest.approx(expected)
    ws = rating_report.overall.weight_sensitivity
    assert sum(r.share_first for r in ws.models) == pytest.approx(1.0)
    assert all(r.rank_best <= r.rank_median <= r.rank_worst for r in ws.models)


def test_rating_overall_is_mean_of_rescaled_dimensions(rating_report):
    ex = next(b for b in rating_report.scenarios if b.scenario == "extraction")
    score = {(r.dimension, r.model): r.score for r in ex.ranking}
    for m in ("A", "B", "C"):
        # Complete ratings (every rating has both dimensions): overall = mean of (score - 1) / 4.
        assert score[("overall", m)] == pytest.approx(
            ((score[("correctness", m)] - 1) / 4 + (score[("style", m)] - 1) / 4) / 2
        )


def test_beside_quality_sections(rating_report, pairwise_report):
    b = rating_report.beside
    assert {o.model for o in b.outputs} == {"A", "B", "C"}
    assert b.outputs[0].latency_ms.median <= b.outputs[0].latency_ms.p95
    assert b.position_effect.ci_low <= b.position_effect.slope_per_100 <= b.position_effect.ci_high
    assert b.position_bias is None
    assert {s.model for s in b.stability} == {"A", "B", "C"}
    p = pairwise_report.beside.position_bias
    assert p.ci_low <= 0.5 <= p.ci_high  # the simulation has no position bias
    assert pairwise_report.beside.position_effect is None


def test_pairwise_win_rates_are_complementary(pairwise_report):
    rates = {(r.model, r.opponent): r.win_rate for r in pairwise_report.scenarios[0].win_rates}
    for (a, b), v in rates.items():
        assert v + rates[(b, a)] == pytest.approx(1.0)


def test_csv_and_markdown_carry_the_rankings(rating_report):
    csv_text = render(rating_report, "csv")
    frame = pd.read_csv(__import__("io").StringIO(csv_text))
    assert set(frame["section"]) == {"ranking", "agreement", "reliability", "composite", "pairs"}
    md = render(rating_report, "md")
    assert "## extraction (40 samples)" in md and "## Methods" in md


@pytest.mark.browser
def test_html_opens_in_chromium_with_charts(tmp_path: Path, rating_report, pairwise_report):
    playwright = pytest.importorskip("playwright.sync_api")
    if not Path(CHROMIUM).exists():
        pytest.skip(f"Debian chromium is not installed at {CHROMIUM}")
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            for name, report in (("rating", rating_report), ("pairwise", pairwise_report)):
                page_file = tmp_path / f"{name}.html"
                page_file.write_text(render(report, "html"), encoding="utf-8")
                page = browser.new_page(viewport={"width": 1100, "height": 900})
                requests: list[str] = []
                page.on("request", lambda req, seen=requests: seen.append(req.url))
                page.goto(page_file.as_uri())
                assert page.locator("svg.chart.ci circle").count() >= 9
                box = page.locator("svg.chart.ci").first.bounding_box()
                assert box is not None and box["width"] > 300 and box["height"] > 50
                if name == "pairwise":
                    assert page.locator("svg.chart.winrate rect").count() >= 9
                else:
                    assert page.locator("svg.chart.latency circle").count() == 3
                assert page.get_by_text("Methods").count() >= 1
                assert all(u.startswith("file://") for u in requests)  # self-contained: nothing fetched
                page.screenshot(path=str(tmp_path / f"{name}.png"), full_page=True)
                assert (tmp_path / f"{name}.png").stat().st_size > 20_000
        finally:
            browser.close()


def test_names_cannot_become_markup_or_formulas_in_markdown_and_csv() -> None:
    """A model named like an HTML payload or a spreadsheet formula is shown as text in the Markdown report
    and cannot run as a formula from the CSV (OWASP's CSV-injection rule)."""
    ratings, outputs, rubric = _rating_batch()
    evil = {"A": "<img src=x onerror=alert(1)>", "B": '=HYPERLINK("http://x")|B'}
    ratings = ratings.replace({"model_a": evil})
    outputs = outputs.replace({"model": evil})
    report = build_report(ratings, outputs, rubric, batch="<b>batch</b>", seed=1, rounds=100, diagnostics=False)
    md = render(report, "md")
    assert "<img" not in md and "<b>" not in md
    assert "&lt;img src=x onerror=alert(1)>" in md and "&lt;b>batch&lt;/b>" in md
    assert '=HYPERLINK("http://x")\\|B' in md  # the pipe does not split a table cell
    cells = [c for row in csv.reader(io.StringIO(render(report, "csv"))) for c in row]
    assert '\'=HYPERLINK("http://x")|B' in cells and not any(c.startswith("=") for c in cells)


LINKING_NAMES = {
    "A": "![m](http://host/x.png)",  # an image that a Markdown viewer would fetch
    "B": "[click](http://host/phish) \\\\![n](http://host/y.png)",  # a link, and an image after an escaped "\"
}


def test_names_cannot_become_links_or_images_in_markdown() -> None:
    """Issue 33: a model named like a Markdown image was a live image in the summary and the tables. Rendered
    by a CommonMark renderer (markdown-it-py, with tables), the report holds no image and no link, and every
    name reads as written."""
    from markdown_it import MarkdownIt

    ratings, outputs, rubric = _rating_batch()
    ratings = ratings.replace({"model_a": LINKING_NAMES})
    outputs = outputs.replace({"model": LINKING_NAMES})
    report = build_report(ratings, outputs, rubric, batch="[b](http://host/)", seed=1, rounds=100, diagnostics=False)
    html = MarkdownIt("commonmark").enable("table").render(render(report, "md"))
    assert "<img" not in html and "<a " not in html
    assert "![m](http://host/x.png)" in html
    assert "[click](http://host/phish) \\![n](http://host/y.png)" in html
