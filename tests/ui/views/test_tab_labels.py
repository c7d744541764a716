"""Scenario names in the lead's results tabs are shown as typed (issue 33): Streamlit reads a tab label as
Markdown with its colour directives, so a scenario named ``<b>scen</b> :red[x]`` turned red there."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy.engine import Engine

from reviewer_app.batches.loading import load_batch
from reviewer_app.people.people import add_reviewer
from reviewer_app.review.assignment import assign
from reviewer_app.review.reviews import next_item, submit_review
from reviewer_app.ui.components.safe_text import markdown_literal
from tests.helpers import RATING_RUBRIC, make_records, write_batch, write_rubric
from tests.support.apptest import app_for

SCENARIO = "<b>scen</b> :red[x] **bold**"


def test_a_scenario_tab_shows_its_name_literally(engine: Engine, tmp_path: Path) -> None:
    records = make_records(6, ["m1", "m2"], scenarios=(SCENARIO,))
    rubric = write_rubric(tmp_path, RATING_RUBRIC.format(overlap=1))
    summary = load_batch(engine, [write_batch(tmp_path, records)], rubric, name="b", open_now=True)
    ann, _ = add_reviewer(engine, "ann")
    assign(engine, "b")
    while (view := next_item(engine, summary.batch_id, ann.id)) is not None:
        submit_review(engine, ann.id, view.assignment_id, {"correctness": "4", "follows_format": "1"})
    at = app_for(add_reviewer(engine, "leo", "lead")[1])
    at.run(timeout=120)
    assert not at.exception, at.exception
    labels = [t.label for t in at.tabs]
    assert markdown_literal(SCENARIO) in labels
    assert SCENARIO not in labels  # the raw name, which Streamlit would render as Markdown
