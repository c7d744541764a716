"""Sign-in sessions: a link becomes one session per browser; signing out ends it and refuses the link in
that browser only; sessions are bound to their browser; the admin's revoke and new link end them all;
links can expire."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy import update
from sqlalchemy.engine import Engine

from reviewer_app.errors import AuthError
from reviewer_app.people.people import (
    add_reviewer,
    authenticate,
    authenticate_session,
    new_link,
    revoke,
    sign_in,
    sign_out,
)
from storage.engine import write_session
from storage.models import Reviewer, utcnow

LAPTOP, PHONE = "a" * 64, "b" * 64  # browser cookie hashes


def token_of(link: str) -> str:
    return link.split("token=")[-1]


def test_a_link_becomes_a_session_bound_to_its_browser(engine: Engine) -> None:
    person, link = add_reviewer(engine, "ann")
    signed_in, session = sign_in(engine, token_of(link), LAPTOP)
    assert signed_in == person and session != token_of(link)
    assert authenticate_session(engine, session, LAPTOP) == person
    with pytest.raises(AuthError, match="belongs to a sign-in made in another browser"):
        authenticate_session(engine, session, PHONE)
    with pytest.raises(AuthError, match="belongs to a sign-in made in another browser"):
        authenticate_session(engine, session, None)  # no cookie at all
    with pytest.raises(AuthError):
        authenticate_session(engine, token_of(link), LAPTOP)  # a link is not a session


def test_signing_out_refuses_the_link_in_that_browser_only(engine: Engine) -> None:
    _, link = add_reviewer(engine, "ann")
    _, laptop = sign_in(engine, token_of(link), LAPTOP)
    _, phone = sign_in(engine, token_of(link), PHONE)
    sign_out(engine, laptop)
    with pytest.raises(AuthError, match="no longer sign you in here") as back:
        authenticate_session(engine, laptop, LAPTOP)  # going Back to the session address
    assert "ask an admin for a new link" in str(back.value) and "Open your sign-in link" not in str(back.value)
    with pytest.raises(AuthError, match="You signed out of this browser"):
        sign_in(engine, token_of(link), LAPTOP)  # going Back to the link, or finding it in the history
    assert authenticate_session(engine, phone, PHONE).name == "ann"  # the other device stays signed in
    assert sign_in(engine, token_of(link), "c" * 64)[0].name == "ann"  # and the link works elsewhere
    assert authenticate(engine, token_of(link)).name == "ann"
    # A new link from the admin signs in again on the laptop.
    fresh = new_link(engine, "ann")
    assert sign_in(engine, token_of(fresh), LAPTOP)[0].name == "ann"


def test_signing_out_everywhere_ends_every_session_but_keeps_the_link(engine: Engine) -> None:
    _, link = add_reviewer(engine, "ann")
    _, laptop = sign_in(engine, token_of(link), LAPTOP)
    _, phone = sign_in(engine, token_of(link), PHONE)
    sign_out(engine, laptop, everywhere=True)
    # The laptop signed out: its link no longer works there. The phone was signed out from the laptop: its
    # link still works there, and the message says so.
    with pytest.raises(AuthError, match="You signed out of this browser"):
        authenticate_session(engine, laptop, LAPTOP)
    with pytest.raises(AuthError, match="Your sign-in link still works on this device"):
        authenticate_session(engine, phone, PHONE)
    assert sign_in(engine, token_of(link), PHONE)[0].name == "ann"  # the phone did not sign out itself
    with pytest.raises(AuthError, match="You signed out of this browser"):
        sign_in(engine, token_of(link), LAPTOP)


def test_revoke_and_new_link_end_every_session(engine: Engine) -> None:
    _, link = add_reviewer(engine, "ann")
    _, first = sign_in(engine, token_of(link), LAPTOP)
    new_link(engine, "ann")  # the old link leaked: what it opened closes too
    with pytest.raises(AuthError, match="not valid or has been revoked"):
        authenticate_session(engine, first, LAPTOP)
    with pytest.raises(AuthError, match="not valid or has been revoked"):
        sign_in(engine, token_of(link), PHONE)
    _, bob_link = add_reviewer(engine, "bob")
    _, bob = sign_in(engine, token_of(bob_link), None)  # a browser without the cookie: an unbound session
    assert authenticate_session(engine, bob, None).name == "bob"
    revoke(engine, "bob")
    with pytest.raises(AuthError, match="not valid or has been revoked"):
        authenticate_session(engine, bob, None)


def test_links_expire_after_the_configured_days(engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    _, link = add_reviewer(engine, "ann")
    _, session = sign_in(engine, token_of(link), LAPTOP)
    monkeypatch.setenv("BLIND_REVIEW_LINK_DAYS", "7")
    assert sign_in(engine, token_of(link), PHONE)[0].name == "ann"  # a fresh link works
    with write_session(engine) as s:
        s.exec(update(Reviewer).values(link_issued_at=utcnow() - timedelta(days=8)))
    with pytest.raises(AuthError, match=r"This sign-in link has expired \(links work for 7 days\)"):
        sign_in(engine, token_of(link), "c" * 64)
    with pytest.raises(AuthError, match="has expired"):
        authenticate(engine, token_of(link))
    assert authenticate_session(engine, session, LAPTOP).name == "ann"  # a session already made goes on
    monkeypatch.delenv("BLIND_REVIEW_LINK_DAYS")
    assert authenticate(engine, token_of(link)).name == "ann"  # unset: links never expire
    monkeypatch.setenv("BLIND_REVIEW_LINK_DAYS", "7")
    fresh = new_link(engine, "ann")  # a new link is dated now
    assert sign_in(engine, token_of(fresh), "c" * 64)[0].name == "ann"


def test_unknown_session_tokens_are_refused(engine: Engine) -> None:
    for token in (None, "", "x" * 500, "no-such-session"):
        with pytest.raises(AuthError):
            authenticate_session(engine, token, LAPTOP)
    assert sign_out(engine, "no-such-session") is None


def test_a_session_from_a_replaced_link_is_refused_even_if_new_link_missed_it(engine: Engine) -> None:
    """The race: a session created from the old link just after `new-link` ended the person's sessions (on
    PostgreSQL a sign-in reads the old link before the new one commits). Simulated by putting the old link
    back after the session is made, then replacing it without ending sessions."""
    _, link = add_reviewer(engine, "ann")
    _, session = sign_in(engine, token_of(link), LAPTOP)
    with write_session(engine) as s:  # the link is replaced, and nothing ended this session
        s.execute(update(Reviewer).values(token_hash="0" * 64))
    with pytest.raises(AuthError):
        authenticate_session(engine, session, LAPTOP)


def test_signing_out_of_a_session_already_ended_elsewhere_still_refuses_the_link_here(engine: Engine) -> None:
    _, link = add_reviewer(engine, "ann")
    _, on_laptop = sign_in(engine, token_of(link), LAPTOP)
    _, on_phone = sign_in(engine, token_of(link), PHONE)
    sign_out(engine, on_phone, everywhere=True)  # ends the laptop's session too
    sign_out(engine, on_laptop)  # the laptop's stale page: "Sign out"
    with pytest.raises(AuthError):
        sign_in(engine, token_of(link), LAPTOP)  # going Back to the link on the laptop
    assert sign_in(engine, token_of(link), "c" * 64)[0].name == "ann"  # a third browser still may


def test_where_every_browser_gets_a_cookie_a_page_without_one_is_signed_in_nowhere(engine: Engine) -> None:
    """Issue 33: under ``blind-review serve`` (``require_browser``) a link opened without the browser cookie made
    a session bound to no browser, whose address then signed in from any client."""
    person, link = add_reviewer(engine, "ann")
    with pytest.raises(AuthError, match="did not send the cookie"):
        sign_in(engine, token_of(link), None, require_browser=True)
    _, unbound = sign_in(engine, token_of(link), None)  # made where no cookie is given (AppTest, bare runs)
    assert authenticate_session(engine, unbound, LAPTOP) == person  # accepted there, as before
    with pytest.raises(AuthError, match="not tied to a browser"):
        authenticate_session(engine, unbound, LAPTOP, require_browser=True)
    with pytest.raises(AuthError, match="did not send the cookie"):
        authenticate_session(engine, unbound, None, require_browser=True)
    _, bound = sign_in(engine, token_of(link), LAPTOP, require_browser=True)
    assert authenticate_session(engine, bound, LAPTOP, require_browser=True) == person
