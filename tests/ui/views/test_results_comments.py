"""The lead's results page lists reviewers' comments and can't-judge reasons per scenario and model, as typed;
none of it reaches another reviewer's page (AppTest, on SQLite and PostgreSQL)."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy.engine import Engine

from reviewer_app.batches.loading import load_batch
from reviewer_app.people.people import add_reviewer
from reviewer_app.review.assignment import assign
from reviewer_app.review.reviews import next_item, submit_review
from tests.helpers import RATING_RUBRIC, make_records, write_batch, write_rubric
from tests.support.apptest import app_for, open_tab, sent_text, state_text

MODELS = ["acme-large", "zeta-small"]
ANN_SAYS = "ann: <img src=x onerror=alert(1)> | [see](javascript:alert(2)) **really**"
BOB_REASON = "bob: the output is cut off <script>alert(3)</script>"


def _batch(engine: Engine, tmp_path: Path) -> tuple[str, str]:
    """A batch where ann scores her items with a comment and bob cannot judge his; returns their links."""
    batch = load_batch(
        engine,
        [write_batch(tmp_path, make_records(2, MODELS))],
        write_rubric(tmp_path, RATING_RUBRIC.format(overlap=1)),
        name="b",
        open_now=True,
    )
    (ann, ann_link), (bob, bob_link) = add_reviewer(engine, "ann"), add_reviewer(engine, "bob")
    assign(engine, "b")
    view = next_item(engine, batch.batch_id, ann.id)
    assert view is not None
    submit_review(engine, ann.id, view.assignment_id, {"correctness": "2", "follows_format": "1"}, comment=ANN_SAYS)
    view = next_item(engine, batch.batch_id, bob.id)
    assert view is not None
    submit_review(engine, bob.id, view.assignment_id, {}, cant_judge=BOB_REASON)
    return ann_link, bob_link


def test_the_lead_reads_comments_and_reasons_per_scenario_and_model(engine: Engine, tmp_path: Path) -> None:
    _batch(engine, tmp_path)
    lead_link = add_reviewer(engine, "leo", "lead")[1]
    at = app_for(lead_link)
    at.run(timeout=120)
    assert not at.exception, at.exception
    tab = open_tab(at, "Comments (2)")
    labels = [e.label for e in tab.expander]
    assert len(labels) == 2
    assert all(" · acme-large: " in label or " · zeta-small: " in label for label in labels)
    assert sorted(label.split(": ", 1)[1] for label in labels) == [
        "1 answer: 0 can't judge, 1 scored with a comment.",
        "1 answer: 1 can't judge, 0 scored with a comment.",
    ]
    tables = [frame.value for frame in tab.dataframe]
    comments = [c for t in tables for c in t["comment"].tolist()]
    reasons = [c for t in tables if "reason" in t for c in t["reason"].tolist()]
    assert ANN_SAYS in comments and reasons == [BOB_REASON]  # in table cells, as typed: nothing rendered
    assert {r for t in tables for r in t["reviewer"].tolist()} == {"ann", "bob"}
    # Headings (Markdown) show the text as it is: no tag, link or emphasis can form.
    headings = [m.value for m in tab.markdown]
    assert headings and all("<" not in h and "](" not in h for h in headings)


def test_no_other_reviewers_words_reach_a_reviewers_page(engine: Engine, tmp_path: Path) -> None:
    ann_link, _ = _batch(engine, tmp_path)
    at = app_for(ann_link)
    at.run()
    assert not at.exception
    page = sent_text(at) + state_text(at)
    assert "Item " in page  # her review page, with her next item
    assert "bob:" not in page and "cut off" not in page
    assert not any(m in page for m in MODELS)
