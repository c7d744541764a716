"""A page drawn before the reviewer's answer was saved elsewhere (their other tab or window) cannot overwrite
that answer silently (issue 27, point 2): its submit is refused with AnswerChangedError, nothing is saved,
and a submit from a page drawn after the save goes through. On both databases."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy.engine import Engine

from reviewer_app.batches.loading import load_batch
from reviewer_app.errors import AnswerChangedError, ConflictError
from reviewer_app.people.people import add_reviewer
from reviewer_app.review import drafts, reviews
from reviewer_app.review.assignment import assign
from tests.helpers import RATING_RUBRIC, make_records, write_batch, write_rubric

FIRST = {"correctness": "2", "follows_format": "0"}
SECOND = {"correctness": "5", "follows_format": "1"}


def _open_item(engine: Engine, tmp_path: Path) -> tuple[int, int, int]:
    summary = load_batch(
        engine,
        [write_batch(tmp_path, make_records(2, ["m1"]))],
        write_rubric(tmp_path, RATING_RUBRIC.format(overlap=1)),
        name="stale",
        open_now=True,
    )
    person = add_reviewer(engine, "tabs")[0]
    assign(engine, "stale", ["tabs"])
    view = reviews.next_item(engine, summary.batch_id, person.id)
    assert view is not None and view.saved_at is None
    return summary.batch_id, person.id, view.assignment_id


def test_a_stale_tab_cannot_overwrite_a_new_answer(engine: Engine, tmp_path: Path) -> None:
    batch_id, me, item = _open_item(engine, tmp_path)
    tab_a = reviews.item_view(engine, me, item)
    tab_b = reviews.item_view(engine, me, item)  # the same new item, open in a second tab
    reviews.submit_review(engine, me, item, FIRST, saved_at=tab_a.saved_at)
    with pytest.raises(AnswerChangedError) as refused:
        reviews.submit_review(engine, me, item, SECOND, comment="from tab B", saved_at=tab_b.saved_at)
    assert isinstance(refused.value, ConflictError)
    assert f"item {tab_a.label}" in str(refused.value) and "not saved" in str(refused.value)
    kept = reviews.item_view(engine, me, item)
    assert kept.answers == FIRST and kept.comment == "" and kept.saved_at is not None
    # Tab B, redrawn after the save (it now shows the saved answer), may replace it: that is a choice.
    reviews.submit_review(engine, me, item, SECOND, saved_at=kept.saved_at)
    assert reviews.item_view(engine, me, item).answers == SECOND
    # Its progress counted the item once.
    assert next(b for b in reviews.batches_for(engine, me) if b.batch_id == batch_id).done == 1


def test_a_stale_revision_cannot_overwrite_a_newer_one(engine: Engine, tmp_path: Path) -> None:
    _batch_id, me, item = _open_item(engine, tmp_path)
    reviews.submit_review(engine, me, item, FIRST, saved_at=None)
    tab_a = reviews.item_view(engine, me, item)  # both tabs revise the submitted answer
    tab_b = reviews.item_view(engine, me, item)
    reviews.submit_review(engine, me, item, {}, cant_judge="not my field", saved_at=tab_a.saved_at)
    with pytest.raises(AnswerChangedError, match="can't judge"):
        reviews.submit_review(engine, me, item, SECOND, saved_at=tab_b.saved_at)
    view = reviews.item_view(engine, me, item)
    assert view.cant_judge == "not my field" and view.answers == {}


def test_a_refused_submit_keeps_its_draft_until_the_reviewer_chooses(engine: Engine, tmp_path: Path) -> None:
    _batch_id, me, item = _open_item(engine, tmp_path)
    tab_b = reviews.item_view(engine, me, item)
    reviews.submit_review(engine, me, item, FIRST)  # without saved_at: saved whatever was there (scripts)
    drafts.save_draft(engine, me, item, drafts.Draft(SECOND, "typed in tab B"))
    with pytest.raises(AnswerChangedError):
        reviews.submit_review(engine, me, item, SECOND, saved_at=tab_b.saved_at)
    assert drafts.load_draft(engine, me, item) == drafts.Draft(SECOND, "typed in tab B")
    drafts.discard_draft(engine, me, item)  # "Keep the saved answer"
    assert drafts.load_draft(engine, me, item) is None
