"""Automatic checks beside the panel in the report and on the lead's results page (AppTest, SQLite and
PostgreSQL): pass rates per scenario and model with CIs and tiers, who passes less often said first, check
names shown as typed; the JSON is valid by the schema; a batch without checks has no such section."""

from __future__ import annotations

import json
from html import escape
from pathlib import Path

import jsonschema
from sqlalchemy.engine import Engine

from reviewer_app.batches.loading import load_batch
from reviewer_app.people.people import add_reviewer
from reviewer_app.reporting.formats import load_schema, render
from reviewer_app.results.batch_reports import batch_report
from reviewer_app.review.assignment import assign
from reviewer_app.review.reviews import next_item, submit_review
from tests.helpers import RATING_RUBRIC, make_records, write_batch, write_rubric
from tests.support.apptest import app_for, open_tab

NAME = "<b>valid</b> *json*"


def _batch(engine: Engine, tmp_path: Path, *, checks: bool = True) -> None:
    """ "tidy" answers in JSON, "sloppy" in prose; one reviewer scores every item (tidy 5, sloppy 2)."""
    records = []
    for rec in make_records(16, ["sloppy", "tidy"], scenarios=("extract",)):
        text = json.dumps({"answer": rec["sample_id"]}) if rec["model"] == "tidy" else "The answer is probably 4."
        records.append({**rec, "output": text, **({"checks": [{"type": "json", "name": NAME}]} if checks else {})})
    rubric = write_rubric(tmp_path, RATING_RUBRIC.format(overlap=1))
    summary = load_batch(engine, [write_batch(tmp_path, records)], rubric, name="b", open_now=True)
    ann, _ = add_reviewer(engine, "ann")
    assign(engine, "b")
    while (view := next_item(engine, summary.batch_id, ann.id)) is not None:
        good = view.outputs[0].text.startswith("{")
        submit_review(engine, ann.id, view.assignment_id, {"correctness": "5" if good else "2", "follows_format": "1"})


def test_the_report_ranks_pass_rates_and_correlates_them_with_the_panel(engine: Engine, tmp_path: Path) -> None:
    _batch(engine, tmp_path)
    report = batch_report(engine, batch="b", rounds=200)
    [block] = report.scenarios
    assert block.checks is not None and block.checks_vs_panel is not None
    rows = {(r.check, r.model): r for r in block.checks}
    assert rows[(NAME, "tidy")].pass_rate == 1.0 and rows[(NAME, "sloppy")].pass_rate == 0.0
    assert (rows[(NAME, "tidy")].tier, rows[(NAME, "sloppy")].tier) == (1, 2)
    assert rows[("all", "sloppy")].n == 16
    [_all, panel] = block.checks_vs_panel
    assert panel.check == NAME and panel.correlation == 1.0  # passing is exactly the higher score here
    data = json.loads(render(report, "json"))
    jsonschema.validate(data, load_schema())
    assert data["scenarios"][0]["checks"][0].keys() >= {"model", "check", "pass_rate", "ci_low", "ci_high", "n",
                                                        "rank", "tier"}  # fmt: skip
    html = render(report, "html")
    assert escape(NAME) in html and NAME not in html
    assert "sloppy passes significantly less often than tidy" in render(report, "md")


def test_a_batch_without_checks_has_no_checks_section(engine: Engine, tmp_path: Path) -> None:
    _batch(engine, tmp_path, checks=False)
    report = batch_report(engine, batch="b", rounds=200)
    assert report.scenarios[0].checks is None
    assert "checks" not in json.loads(render(report, "json"))["scenarios"][0]
    assert "Automatic checks" not in render(report, "md")


def test_the_results_page_says_who_fails_first_and_shows_the_names_as_typed(engine: Engine, tmp_path: Path) -> None:
    _batch(engine, tmp_path)
    at = app_for(add_reviewer(engine, "leo", "lead")[1])
    at.run(timeout=120)
    assert not at.exception, at.exception
    tab = open_tab(at, "extract")
    assert any(m.value == "**Automatic checks** (pass rate, 95% CI)" for m in tab.markdown)
    warnings = [w.value for w in tab.warning]
    assert any(w.startswith(r"Check '\<b\>valid\</b\> \*json\*': sloppy passes significantly less often")
               for w in warnings), warnings  # fmt: skip
    tables = [f.value for f in tab.dataframe]
    checks = next(t for t in tables if "pass rate" in t.columns)
    assert set(checks["check"]) == {"all", NAME}  # a table cell: as typed
