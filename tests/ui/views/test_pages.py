"""Each page and role through the real app script (AppTest), on SQLite and PostgreSQL."""

from __future__ import annotations

import pytest
from sqlalchemy.engine import Engine

from reviewer_app.batches.catalog import set_batch_open
from reviewer_app.domain.views import Person
from reviewer_app.errors import AuthError
from reviewer_app.people.people import add_reviewer, revoke
from reviewer_app.ratings.export import export_rows
from reviewer_app.review import reviews
from reviewer_app.ui.views import admin, progress
from tests.support.apptest import app_for, sent_text


def choose(radio, i: int) -> None:  # type: ignore[no-untyped-def]
    """Pick the i-th option shown (widget values are stored answers; options are their display text)."""

    def shows(value: str) -> str | None:
        try:
            return str(radio.format_func(value))
        except KeyError:
            return None

    raw = [str(v) for v in range(10)] + ["left", "right", "tie", "both_bad"] + list(radio.options)
    radio.set_value(next(v for v in raw if shows(v) == radio.options[i]))


def _texts(at, kind: str) -> list[str]:  # type: ignore[no-untyped-def]
    return [e.value for e in getattr(at, kind)]


def test_without_a_link_only_the_sign_in_screen_shows(engine: Engine) -> None:
    at = app_for(None)
    at.run()
    assert "Sign in by opening the personal link" in sent_text(at)
    assert not at.radio and not at.sidebar.button


def test_a_wrong_or_revoked_link_gets_a_clear_message_and_nothing_else(engine: Engine, demo: dict[str, str]) -> None:
    at = app_for("not-a-real-token")
    at.run()
    assert _texts(at, "error") == ["This sign-in link is not valid or has been revoked. Ask your admin for a new link."]
    assert not at.radio and "Review" not in [p.value for p in at.title]
    revoke(engine, "demo-reviewer")
    at = app_for(demo["demo-reviewer"])
    at.run()
    assert "revoked" in _texts(at, "error")[0]
    assert "Item " not in sent_text(at)


def test_reviewer_sees_only_the_review_page_and_scores_an_item(engine: Engine, demo: dict[str, str]) -> None:
    at = app_for(demo["demo-reviewer"])
    at.run()
    assert not at.exception
    sidebar = sent_text(at.sidebar)
    assert "Review" in sidebar and "Admin" not in sidebar and "Progress" not in sidebar
    first = next(m.value for m in at.subheader if m.value.startswith("Item "))
    for radio in at.radio:
        choose(radio, 0)
    _submit(at)
    at.run()
    assert not at.exception
    assert any(s.startswith("Saved item") for s in _texts(at, "success"))
    assert next(m.value for m in at.subheader if m.value.startswith("Item ")) != first
    person_id = at.session_state["person_id"]
    batch = next(b for b in reviews.batches_for(engine, person_id) if b.batch_id == at.session_state["batch_id"])
    assert batch.done == 1


def _submit(at) -> None:  # type: ignore[no-untyped-def]
    next(b for b in at.button if b.label in ("Submit and next", "Save changes")).click()


def test_missing_answer_is_refused_and_nothing_is_saved(engine: Engine, demo: dict[str, str]) -> None:
    at = app_for(demo["demo-reviewer"])
    at.run()
    choose(at.radio[0], 0)
    _submit(at)
    at.run()
    assert any(e.startswith("Please answer:") for e in _texts(at, "error"))
    assert not [r for r in export_rows(engine, "demo") if r["reviewer"] == "demo-reviewer"]


def test_cant_judge_needs_a_reason_and_then_moves_on(engine: Engine, demo: dict[str, str]) -> None:
    at = app_for(demo["demo-reviewer"])
    at.run()
    first = next(m.value for m in at.subheader if m.value.startswith("Item "))
    at.checkbox[0].check()
    _submit(at)
    at.run()
    assert "Please say briefly why you can't judge this item." in _texts(at, "error")
    at.text_input[0].input("outside my expertise")
    _submit(at)
    at.run()
    assert next(m.value for m in at.subheader if m.value.startswith("Item ")) != first
    assert any("can't judge" in str(o) for o in at.selectbox[-1].options)


def test_resume_and_revise_a_previous_answer(engine: Engine, demo: dict[str, str]) -> None:
    at = app_for(demo["demo-reviewer"])
    at.run()
    first = next(m.value for m in at.subheader if m.value.startswith("Item "))
    for radio in at.radio:
        choose(radio, -1)
    _submit(at)
    at.run()
    second = next(m.value for m in at.subheader if m.value.startswith("Item "))
    # A new session (refresh, crash, another server) resumes at the same unfinished item.
    again = app_for(demo["demo-reviewer"])
    again.run()
    assert next(m.value for m in again.subheader if m.value.startswith("Item ")) == second
    # Go back to the first item: the answers are there and can be changed.
    again.selectbox(key="revise_pick").select(again.selectbox(key="revise_pick").options[0])
    again.run()
    next(b for b in again.button if b.label == "Open").click()
    again.run()
    assert next(m.value for m in again.subheader if m.value.startswith("Item ")) == first
    assert all(r.index == len(r.options) - 1 for r in again.radio)
    choose(again.radio[0], 0)
    _submit(again)
    again.run()
    assert next(m.value for m in again.subheader if m.value.startswith("Item ")) == second
    mine = [
        r
        for r in export_rows(engine, "demo") + export_rows(engine, "demo-pairwise")
        if r["reviewer"] == "demo-reviewer"
    ]
    assert len({(r["sample_id"], r["dimension"]) for r in mine}) == len(mine)  # revised, not duplicated


def test_closed_batch_shows_answers_read_only(engine: Engine, demo: dict[str, str]) -> None:
    at = app_for(demo["demo-reviewer"])
    at.run()
    set_batch_open(engine, "demo", False)
    set_batch_open(engine, "demo-pairwise", False)
    at.run()
    assert any("closed" in i for i in _texts(at, "info"))
    assert not at.radio


def test_lead_sees_progress_export_and_a_place_for_results(engine: Engine, demo: dict[str, str]) -> None:
    at = app_for(demo["demo-lead"])
    at.run(timeout=120)
    assert not at.exception
    page = sent_text(at)
    assert "Progress and results" in page and "By reviewer" in page and "Results: " in page and "Verdict" in page
    assert "demo-colleague-1" in page  # the per-reviewer table
    sidebar = sent_text(at.sidebar)
    assert "Admin" not in sidebar
    next(b for b in at.button if b.label == "Prepare export").click()
    at.run(timeout=120)
    assert "Download CSV (" in sent_text(at)


def test_admin_adds_a_person_and_sees_the_link(engine: Engine, demo: dict[str, str]) -> None:
    at = app_for(demo["demo-admin"])
    at.run()
    assert not at.exception
    name_box = next(t for t in at.text_input if t.label == "Name")
    name_box.input("new-expert")
    next(b for b in at.button if b.label == "Add and show sign-in link").click()
    at.run()
    assert any("Added reviewer 'new-expert'" in s for s in _texts(at, "success"))
    assert "?token=" in sent_text(at)


def test_admin_page_keeps_the_last_admin(engine: Engine) -> None:
    link = add_reviewer(engine, "root", "admin")[1]
    at = app_for(link)
    at.run()
    at.selectbox(key="admin_person_pick").select("root")
    at.run()
    next(b for b in at.button if b.label == "Revoke").click()
    at.run()
    assert not at.exception
    assert _texts(at, "error")[0].startswith("cannot revoke 'root': they are the last active admin")
    assert "Admin" in sent_text(at.sidebar)  # still signed in, still an admin


def test_admin_closes_a_batch(engine: Engine, demo: dict[str, str]) -> None:
    at = app_for(demo["demo-admin"])
    at.run()
    at.selectbox(key="admin_batch_pick").select("demo")
    at.run()
    next(b for b in at.button if b.label == "Close batch").click()
    at.run()
    assert any(w.startswith("Close 'demo'?") for w in _texts(at, "warning"))  # asks first
    next(b for b in at.button if b.label == "Yes, close it").click()
    at.run()
    assert any(
        t.startswith("Batch 'demo' is closed: it takes no new or revised ratings") for t in _texts(at, "success")
    )


def test_pages_check_the_role_themselves(engine: Engine) -> None:
    reviewer, _ = add_reviewer(engine, "rita")
    lead, _ = add_reviewer(engine, "leo", "lead")
    with pytest.raises(AuthError):
        admin.render(engine, reviewer)
    with pytest.raises(AuthError):
        admin.render(engine, lead)
    with pytest.raises(AuthError):
        progress.render(engine, reviewer)
    with pytest.raises(AuthError):
        progress.render(engine, Person(reviewer.id, reviewer.name, "reviewer"))


def test_sign_out_forgets_the_link(engine: Engine, demo: dict[str, str]) -> None:
    at = app_for(demo["demo-reviewer"])
    at.run()
    next(b for b in at.sidebar.button if b.label == "Sign out").click()
    at.run()
    next(b for b in at.sidebar.button if b.label == "Yes, sign out").click()
    at.run()
    assert "You are signed out of this browser." in " ".join(_texts(at, "success"))
    assert "token" not in at.query_params and not at.radio
    assert "person_id" not in at.session_state


def test_pairwise_item_shows_a_and_b_and_stores_the_shown_side(engine: Engine, demo: dict[str, str]) -> None:
    at = app_for(demo["demo-reviewer"])
    at.run()
    at.selectbox(key="batch_id").select(next(i for i in at.selectbox(key="batch_id").options if "pairwise" in i))
    at.run()
    page = sent_text(at)
    assert "**Answer A**" in page and "**Answer B**" in page
    assert [r.options for r in at.radio] == [["A is better", "B is better", "Tie", "Both bad"]] * 2
    choose(at.radio[0], 0)
    choose(at.radio[1], 3)
    _submit(at)
    at.run()
    person_id = at.session_state["person_id"]
    batch_id = at.session_state["batch_id"]
    done = [q for q in reviews.queue(engine, batch_id, person_id) if q.status == "done"]
    assert len(done) == 1
    assert reviews.item_view(engine, person_id, done[0].assignment_id).answers == {
        "correctness": "left",
        "clarity": "both_bad",
    }
