"""Two tabs on the same item (issue 27, point 2): the one drawn before the other saved is refused, says so
above its form, keeps what the reviewer put on it, and lets them keep the saved answer or save theirs."""

from __future__ import annotations

from sqlalchemy.engine import Engine

from reviewer_app.review import reviews
from tests.support.apptest import app_for, sent_text, state_text
from tests.ui.views.test_pages import _submit, choose


def _item(at) -> str:  # type: ignore[no-untyped-def]
    return str(next(m.value for m in at.subheader if m.value.startswith("Item ")))


def _tabs(demo: dict[str, str]):  # type: ignore[no-untyped-def]
    tab_a, tab_b = app_for(demo["demo-reviewer"]), app_for(demo["demo-reviewer"])
    tab_a.run()
    tab_b.run()
    assert not tab_a.exception and not tab_b.exception
    assert _item(tab_a) == _item(tab_b)
    for radio in tab_a.radio:
        choose(radio, 0)
    _submit(tab_a)
    tab_a.run()
    assert any(s.value.startswith("Saved item") for s in tab_a.success)
    for radio in tab_b.radio:  # the old tab, still on that item, gets other answers
        choose(radio, -1)
    label = _item(tab_b)
    _submit(tab_b)
    tab_b.run()
    assert not tab_b.exception, tab_b.exception
    return tab_a, tab_b, label


def _saved(engine: Engine, at) -> dict[str, str]:  # type: ignore[no-untyped-def]
    return reviews.item_view(engine, at.session_state["person_id"], at.session_state["form_assignment"]).answers


def test_a_stale_tab_is_refused_and_the_reviewer_keeps_the_saved_answer(engine: Engine, demo: dict[str, str]) -> None:
    tab_a, tab_b, label = _tabs(demo)
    warnings = [w.value for w in tab_b.warning]
    assert any("was saved from another tab or window" in w and "not saved" in w for w in warnings), warnings
    assert not any(s.value.startswith("Saved item") for s in tab_b.success)
    assert _item(tab_b) == label  # still on the item, with this tab's answers on the form
    assert all(r.index == len(r.options) - 1 for r in tab_b.radio)
    first = _saved(engine, tab_b)
    assert first
    next(b for b in tab_b.button if b.label == "Keep the saved answer").click()
    tab_b.run()
    assert _item(tab_b) == label and _saved(engine, tab_b) == first
    assert all(r.index == 0 for r in tab_b.radio)  # the form now shows the saved answer
    assert not any("another tab or window" in w.value for w in tab_b.warning)
    assert "answer_conflict" not in state_text(tab_b)


def test_a_stale_tab_may_save_its_form_in_place_of_the_other(engine: Engine, demo: dict[str, str]) -> None:
    _tab_a, tab_b, label = _tabs(demo)
    before = _saved(engine, tab_b)
    next(b for b in tab_b.button if b.label == "Save this form instead").click()
    tab_b.run()
    assert any(s.value == f"Saved item {label.removeprefix('Item ')}." for s in tab_b.success)
    assert _item(tab_b) != label  # on to the next item
    after = reviews.item_view(engine, tab_b.session_state["person_id"], _assignment_of(engine, tab_b, label)).answers
    assert after != before and set(after) == set(before)
    assert "Saved there" not in sent_text(tab_b)


def _assignment_of(engine: Engine, at, label: str) -> int:  # type: ignore[no-untyped-def]
    entries = reviews.queue(engine, at.session_state["batch_id"], at.session_state["person_id"])
    return next(e.assignment_id for e in entries if f"Item {e.label}" == label)
