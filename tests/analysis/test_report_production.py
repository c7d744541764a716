"""A batch report says whether production feedback agrees with the panel, for the batch's models that have
feedback (SQLite and PostgreSQL): absent without feedback, there after an import (the page's cached report
too), valid by the schema, said in Markdown and HTML; the results page has a Production tab."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
from sqlalchemy.engine import Engine

from reviewer_app.batches.loading import load_batch
from reviewer_app.people.people import add_reviewer
from reviewer_app.production.feedback import import_feedback
from reviewer_app.reporting.formats import load_schema, render
from reviewer_app.results.batch_reports import batch_report
from reviewer_app.results.report_cache import ReportCache
from reviewer_app.review.assignment import assign
from reviewer_app.review.reviews import next_item, submit_review
from tests.helpers import RATING_RUBRIC, make_records, write_batch, write_rubric
from tests.support.apptest import app_for, open_tab


def _batch(engine: Engine, tmp_path: Path) -> int:
    """One reviewer rates every output of "strong" and "weak" on 16 samples (scores set by ``_panel_scores``)."""
    records = make_records(16, ["strong", "weak"], scenarios=("qa",))
    rubric = write_rubric(tmp_path, RATING_RUBRIC.format(overlap=1))
    summary = load_batch(engine, [write_batch(tmp_path, records)], rubric, name="b", open_now=True)
    ann, _ = add_reviewer(engine, "ann")
    assign(engine, "b")
    while (view := next_item(engine, summary.batch_id, ann.id)) is not None:
        submit_review(engine, ann.id, view.assignment_id, {"correctness": "3", "follows_format": "1"})
    return summary.batch_id


def _panel_scores(engine: Engine, batch_id: int) -> None:
    """Make the panel's order certain: strong's ratings 5, weak's 1 (the view hides which is which)."""
    from sqlalchemy import text

    with engine.begin() as conn:
        conn.execute(
            text(
                "UPDATE rating SET value = CASE WHEN item_id IN (SELECT i.id FROM item i JOIN output o ON "
                "o.id = i.output_a_id JOIN model m ON m.id = o.model_id WHERE m.name = 'strong') THEN '5' ELSE '1' "
                "END WHERE dimension = 'correctness' AND batch_id = :b"
            ),
            {"b": batch_id},
        )


def _feedback(path: Path, rates: dict[str, float], n: int = 400) -> Path:
    lines = []
    for model, rate in rates.items():
        for i in range(n):
            up = i < rate * n
            lines.append(json.dumps({"model": model, "timestamp": 1_772_409_600 + i, "feedback": 1 if up else -1,
                                     "request_id": f"{model}-{i}"}))  # fmt: skip
    path.write_text("\n".join(lines) + "\n")
    return path


def test_the_report_says_whether_production_agrees(engine: Engine, tmp_path: Path) -> None:
    batch_id = _batch(engine, tmp_path)
    _panel_scores(engine, batch_id)
    cache = ReportCache()
    before = cache.report(engine, batch_id, rounds=200)
    assert before.production is None and "production" not in json.loads(render(before, "json"))
    import_feedback(engine, _feedback(tmp_path / "fb.jsonl", {"weak": 0.8, "strong": 0.5, "elsewhere": 0.9}))
    after = cache.report(engine, batch_id, rounds=200)  # the import is a new revision: not the cached report
    assert after.production is not None
    assert [m.model for m in after.production.models] == ["strong", "weak"]  # "elsewhere" is not in the batch
    [pair] = after.production.pairs
    assert pair.agreement == "disagree"
    assert pair.sentence.startswith("Production feedback puts weak above strong (significant")
    assert pair.sentence.endswith("your reviewers rank strong above weak: they disagree.")
    data = json.loads(render(after, "json"))
    jsonschema.validate(data, load_schema())
    assert data["production"]["pairs"][0]["agreement"] == "disagree"
    assert pair.sentence.replace("<", "&lt;") in render(after, "md")  # Markdown: "<" written as an entity
    assert "Panel and production" in render(after, "html")
    assert batch_report(engine, batch_id=batch_id, rounds=200).production == after.production


def test_the_results_page_has_a_production_tab(engine: Engine, tmp_path: Path) -> None:
    batch_id = _batch(engine, tmp_path)
    _panel_scores(engine, batch_id)
    import_feedback(engine, _feedback(tmp_path / "fb.jsonl", {"weak": 0.8, "strong": 0.5}))
    at = app_for(add_reviewer(engine, "leo", "lead")[1])
    at.run(timeout=120)
    assert not at.exception, at.exception
    tab = open_tab(at, "Production")
    warnings = [w.value for w in tab.warning]
    assert any("they disagree" in w for w in warnings), warnings
