"""Signing out through the real app script (AppTest), on SQLite and PostgreSQL (issue 27, point 8): "Sign out"
asks first, says what it costs (the link stops working in this browser; who sends a new one) and can be
cancelled; afterwards, the signed-out screen and the page that Back brings say the same, never "open your
sign-in link" where that link no longer works."""

from __future__ import annotations

from sqlalchemy.engine import Engine

from reviewer_app.people.people import SIGNED_OUT_HERE, add_reviewer
from tests.support.apptest import app_for, sent_text


def _button(at, label: str):  # type: ignore[no-untyped-def]
    return next(b for b in at.sidebar.button if b.label == label)


def _labels(at) -> list[str]:  # type: ignore[no-untyped-def]
    return [b.label for b in at.sidebar.button]


def test_sign_out_asks_first_and_cancel_keeps_you_signed_in(engine: Engine, demo: dict[str, str]) -> None:
    at = app_for(demo["demo-reviewer"])
    at.run()
    _button(at, "Sign out").click()
    at.run()
    assert not at.success and at.query_params.get("session")  # nothing ended yet
    asked = sent_text(at.sidebar)
    assert "Sign out of this browser?" in asked and "new link from an admin" in asked
    assert _labels(at) == ["Yes, sign out", "Cancel, stay signed in"]
    _button(at, "Cancel, stay signed in").click()
    at.run()
    assert _labels(at) == ["Sign out", "Sign out on every device"] and not at.success
    at.run()  # another click on the page: still signed in
    assert not at.error and at.query_params.get("session")


def test_after_signing_out_the_page_says_who_sends_a_new_link(engine: Engine, demo: dict[str, str]) -> None:
    at = app_for(demo["demo-reviewer"])
    at.run()
    session = at.query_params["session"]
    _button(at, "Sign out").click()
    at.run()
    _button(at, "Yes, sign out").click()
    at.run()
    assert [s.value for s in at.success] == ["You are signed out of this browser."]
    (note,) = [i.value for i in at.info]
    assert "no longer works in this browser" in note and "ask an admin (**demo-admin**) for a new link" in note
    # Back to the session's address: the message says the link no longer works here and who to ask.
    at.query_params["session"] = session
    at.run()
    assert [e.value for e in at.error] == [SIGNED_OUT_HERE] and not at.radio
    assert "Open your sign-in link" not in SIGNED_OUT_HERE and "ask an admin for a new link" in SIGNED_OUT_HERE


def test_signing_out_everywhere_asks_first_too(engine: Engine) -> None:
    link = add_reviewer(engine, "ann")[1]
    laptop, phone = app_for(link), app_for(link)
    laptop.run()
    phone.run()
    _button(phone, "Sign out on every device").click()
    phone.run()
    assert "Sign out on every device?" in sent_text(phone.sidebar) and not phone.success
    laptop.run()
    assert not laptop.error  # asking ended nothing
    _button(phone, "Yes, sign out everywhere").click()
    phone.run()
    assert [s.value for s in phone.success] == ["You are signed out on every device."]
    laptop.run()
    # The laptop did not sign out itself: its link still works there, and the message says so.
    (error,) = [e.value for e in laptop.error]
    assert "Your sign-in link still works on this device: open it to sign in again." in error
