"""The review form as people really fill it: a half-filled form survives a refresh (a draft per assignment in
the database, cleared on submit), a missing answer is named as the form shows the question and marked,
every previous item is reachable (paged, numbered as the progress bar counts), the image caption is true
on a phone too. On SQLite and PostgreSQL."""

from __future__ import annotations

import json
import statistics
import time

import pytest
from sqlalchemy import inspect
from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from reviewer_app.batches.admin import delete_batch
from reviewer_app.domain.enums import AssignmentStatus
from reviewer_app.errors import AuthError
from reviewer_app.review import drafts, finished_items, reviews
from reviewer_app.ui.views.review import PER_PAGE
from storage.models import ReviewDraft
from tests.support.apptest import app_for, sent_text
from tests.ui.views.test_pages import _submit, _texts, choose


def _label(at) -> str:  # type: ignore[no-untyped-def]
    return next(m.value for m in at.subheader if m.value.startswith("Item "))


def test_a_half_filled_form_survives_a_refresh_and_goes_on_submit(engine: Engine, demo: dict[str, str]) -> None:
    at = app_for(demo["demo-reviewer"])
    at.run()
    item = _label(at)
    choose(at.radio[0], 2)
    at.run()
    at.text_area[0].input("the second paragraph is wrong")
    at.run()
    chosen = at.radio[0].value
    drafts.wait_for_drafts()
    # A refresh, a crash or another server: a new session finds the same item with the form as it was.
    again = app_for(demo["demo-reviewer"])
    again.run()
    assert _label(again) == item
    assert again.radio[0].value == chosen
    assert all(r.value is None for r in again.radio[1:])
    assert again.text_area[0].value == "the second paragraph is wrong"
    person_id = again.session_state["person_id"]
    assignment = reviews.next_item(engine, int(again.session_state["batch_id"]), person_id)
    assert assignment is not None
    assert drafts.load_draft(engine, person_id, assignment.assignment_id) is not None
    # Ticking "can't judge" is kept too, with its reason.
    again.checkbox[0].check()
    again.run()
    again.text_input[0].input("outside my expertise")
    again.run()
    drafts.wait_for_drafts()
    third = app_for(demo["demo-reviewer"])
    third.run()
    assert third.checkbox[0].value and third.text_input[0].value == "outside my expertise"
    # Submitted: the draft is gone, with the answer saved.
    _submit(third)
    third.run()
    assert _label(third) != item
    assert drafts.load_draft(engine, person_id, assignment.assignment_id) is None


def test_a_draft_is_the_reviewers_own_and_holds_only_their_answers(engine: Engine, demo: dict[str, str]) -> None:
    at = app_for(demo["demo-reviewer"])
    at.run()
    me = at.session_state["person_id"]
    view = reviews.next_item(engine, int(at.session_state["batch_id"]), me)
    assert view is not None
    drafts.save_draft(engine, me, view.assignment_id, drafts.Draft({"correctness": "4"}, "hm", False, ""))
    other = app_for(demo["demo-colleague-1"])
    other.run()
    colleague = other.session_state["person_id"]
    assert drafts.load_draft(engine, colleague, view.assignment_id) is None
    with pytest.raises(AuthError):
        drafts.save_draft(engine, colleague, view.assignment_id, drafts.Draft({"correctness": "1"}))
    assert drafts.load_draft(engine, me, view.assignment_id) == drafts.Draft({"correctness": "4"}, "hm", False, "")
    # Nothing in the table can name a model, an output or a file: these columns and no others.
    columns = {c["name"] for c in inspect(engine).get_columns("review_draft")}
    assert columns == {
        "assignment_id", "batch_id", "reviewer_id", "answers_json", "comment", "cant_judge", "reason", "updated_at"
    }  # fmt: skip
    with Session(engine) as session:
        row = session.exec(select(ReviewDraft)).one()
    assert json.loads(row.answers_json) == {"correctness": "4"}


def test_a_deleted_batch_takes_its_drafts(engine: Engine, demo: dict[str, str]) -> None:
    at = app_for(demo["demo-reviewer"])
    at.run()
    me = at.session_state["person_id"]
    batch = next(b for b in reviews.batches_for(engine, me) if b.name == "demo")
    view = reviews.next_item(engine, batch.batch_id, me)
    assert view is not None
    drafts.save_draft(engine, me, view.assignment_id, drafts.Draft({"correctness": "2"}))
    delete_batch(engine, "demo-v2", confirm="demo-v2")  # its follow-up first: it shows demo's outputs
    delete_batch(engine, "demo", confirm="demo")
    with Session(engine) as session:
        assert session.exec(select(ReviewDraft)).all() == []


def test_saving_a_draft_adds_little_to_an_answer(engine: Engine, demo: dict[str, str]) -> None:
    """Each answer chosen re-runs the form and hands its draft to the background writer: the re-run waits
    for no commit (the commit itself is ~20 ms on SQLite with synchronous=FULL)."""
    at = app_for(demo["demo-reviewer"])
    at.run()
    me = at.session_state["person_id"]
    view = reviews.next_item(engine, int(at.session_state["batch_id"]), me)
    assert view is not None
    queued, written = [], []
    for i in range(30):
        draft = drafts.Draft({"correctness": str(1 + i % 5)}, "x" * i)
        start = time.perf_counter()
        drafts.save_draft_soon(engine, me, view.assignment_id, draft)
        queued.append(time.perf_counter() - start)
        drafts.wait_for_drafts()
        written.append(time.perf_counter() - start)
    print(
        f"draft per change: page waits {statistics.median(queued) * 1000:.2f} ms (median), "
        f"written after {statistics.median(written) * 1000:.1f} ms"
    )
    assert statistics.median(queued) < 0.002
    assert drafts.load_draft(engine, me, view.assignment_id) == drafts.Draft({"correctness": "5"}, "x" * 29)


def test_a_missing_answer_is_named_as_the_form_shows_it_and_marked(engine: Engine, demo: dict[str, str]) -> None:
    at = app_for(demo["demo-reviewer"])
    at.run()
    view = reviews.item_view(engine, at.session_state["person_id"], at.session_state["form_assignment"])
    assert len(view.dimensions) > 1
    choose(at.radio[0], 0)
    _submit(at)
    at.run()
    errors = _texts(at, "error")
    assert len(errors) == 1
    assert errors[0].startswith("Please answer:")
    for dim in view.dimensions[1:]:  # as the form words them (its description), never the rubric's name
        assert reviews.question_words(dim) in errors[0]
        assert dim.description.strip() and dim.name not in errors[0].lower().replace(dim.description.lower(), "")
    marked = [r for r in at.radio if "Not answered yet" in r.label]
    assert len(marked) == len(at.radio) - 1 and "Not answered yet" not in at.radio[0].label
    assert at.radio[0].value is not None  # what was chosen is still there


def test_every_previous_item_is_reachable_numbered_as_the_progress_bar(engine: Engine, demo: dict[str, str]) -> None:
    at = app_for(demo["demo-colleague-1"])
    at.run()
    me = at.session_state["person_id"]
    batch_id = int(at.session_state["batch_id"])
    places = {e.assignment_id: e for e in reviews.queue(engine, batch_id, me)}
    finished = [e for e in places.values() if e.status != AssignmentStatus.PENDING]
    assert len(finished) > PER_PAGE  # more than one page
    shown_texts: list[str] = []
    while True:
        shown_texts += [str(o) for o in at.selectbox(key="revise_pick").options]
        older = [b for b in at.button if b.label == "Older"]
        if not older or older[0].disabled:
            break
        older[0].click()
        at.run()
    assert len(shown_texts) == len(set(shown_texts)) == len(finished)
    # "#N" is the item's place as the progress bar counts it ("item N of M"), and the prompt starts the entry.
    for entry in finished[:3]:
        view = reviews.item_view(engine, me, entry.assignment_id)
        text = next(t for t in shown_texts if f"item {view.label} " in t)
        assert text.startswith(f"#{view.position} · item {view.label}")
        assert finished_items.prompt_snippet(view.prompt)[:20] in text.replace("\u2060", "").replace("\\", "")


def test_the_image_caption_is_true_with_a_mouse_and_on_a_phone(engine: Engine, demo: dict[str, str]) -> None:
    at = app_for(demo["demo-reviewer"])
    at.run()
    me = at.session_state["person_id"]
    batch_id = int(at.session_state["batch_id"])
    entry = next(
        e for e in reviews.queue(engine, batch_id, me) if reviews.item_view(engine, me, e.assignment_id).images
    )
    at.session_state["assignment_id"] = entry.assignment_id
    at.run()
    text = sent_text(at)
    assert "imgs" in text
    assert "hover and use the expand button" not in text
    assert "pinch to zoom" in text and "expand button" in text


def test_previous_item_walks_back_through_the_finished_items(engine: Engine, demo: dict[str, str]) -> None:
    at = app_for(demo["demo-colleague-1"])
    at.run()
    me = at.session_state["person_id"]
    batch_id = int(at.session_state["batch_id"])
    finished = [e for e in reviews.queue(engine, batch_id, me) if e.status != AssignmentStatus.PENDING]
    finished.sort(key=lambda e: e.position)
    assert finished_items.previous_item(engine, batch_id, me, None) == finished[-1].assignment_id
    assert finished_items.previous_item(engine, batch_id, me, finished[-1].assignment_id) == finished[-2].assignment_id
    assert finished_items.previous_item(engine, batch_id, me, finished[0].assignment_id) is None
    # Through the page: the button opens the item before the one being revised.
    at.session_state["assignment_id"] = finished[2].assignment_id
    at.run()
    at.button(key="previous_item").click()
    at.run()
    assert at.session_state["assignment_id"] == finished[1].assignment_id
    assert _label(at) == f"Item {finished[1].label}"


def test_reopening_a_finished_item_shows_what_was_saved(engine: Engine, demo: dict[str, str]) -> None:
    """Seen in Chromium: "can't judge" reopened with B showed an empty reason box (a value left over from
    the item's first showing), though the reason was saved."""
    at = app_for(demo["demo-reviewer"])
    at.run()
    at.text_area[0].input("1 thought")
    at.run()
    at.checkbox[0].check()
    at.run()
    at.text_input[0].input("outside my expertise")
    at.run()
    _submit(at)
    at.run()
    drafts.wait_for_drafts()
    at.button(key="previous_item").click()
    at.run()
    assert [c.value for c in at.checkbox] == [True]
    assert [t.value for t in at.text_input] == ["outside my expertise"]
    assert [t.value for t in at.text_area] == ["1 thought"]
