"""What someone who is not signed in sees, and what the web server is told about who is signed in where.

The server in front of Streamlit (``reviewer_app.ui.http_guard``) lets a browser upload files only from a
page where an admin is signed in, and download the lead's export only when a lead or admin is signed in
in it. It learns that from :func:`record_grant`, called on every signed-in run, and :func:`forget_grant`,
called on every other run (signed out, refused, or never signed in).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from reviewer_app.domain.enums import Role
from reviewer_app.domain.views import Person
from reviewer_app.people.people import list_people
from reviewer_app.ui.components.safe_text import markdown_literal
from reviewer_app.ui.http_guard import BROWSER_COOKIE, GRANTS, browser_key, cookies_issued

if TYPE_CHECKING:
    from sqlalchemy.engine import Engine

LINK_PARAM = "token"  # a sign-in link: https://HOST/?token=...
SESSION_PARAM = "session"  # what the address bar carries once signed in
SIGNED_OUT_LINKS = "signed_out_links"  # hashes of the links this tab signed out of (kept across sign-outs)
TAB_SIGNIN = "tab_signin"  # (link hash, session token) of this tab's sign-in, to reuse when the link comes back

CONFIRM_SIGN_OUT = "confirm_sign_out"  # "here" or "everywhere" while the sidebar asks before signing out

CONFIRM_TEXT = {
    "here": (
        "**Sign out of this browser?** Your sign-in link will stop working here: to sign in on this browser "
        "again you will need a new link from an admin. It keeps working on your other devices."
    ),
    "everywhere": (
        "**Sign out on every device?** Every browser you are signed in on is signed out. Your link stops working "
        "in this browser (a new one from an admin is needed here); on your other devices, open it again."
    ),
}
CONFIRM_BUTTON = {"here": "Yes, sign out", "everywhere": "Yes, sign out everywhere"}

SIGNED_OUT = {
    "here": "You are signed out of this browser.",
    "everywhere": "You are signed out on every device.",
}
SIGNED_OUT_NOTE = (
    "Your old sign-in link no longer works in this browser, so going Back or opening it from the history signs "
    "nobody in as you. It still works on devices you have not signed out of. To sign in here again, ask {who} "
    "for a new link."
)


def admins_to_ask(engine: Engine) -> tuple[str, ...]:
    """The names of the admins, who can send a new link (at most three, for the signed-out message)."""
    return tuple(p.name for p in list_people(engine, Role.ADMIN))[:3]


def who_to_ask(admins: Sequence[str]) -> str:
    """ "an admin (ann or bo)" for the signed-out messages; "your admin" when there is none to name."""
    if not admins:
        return "your admin"
    names = [f"**{markdown_literal(name)}**" for name in admins]
    return "an admin (" + (" or ".join(names) if len(names) < 3 else ", ".join(names[:-1]) + " or " + names[-1]) + ")"


def render(message: str | None = None, *, signed_out: str | None = None, admins: Sequence[str] = ()) -> None:
    """The sign-in screen; ``message`` is why the last attempt failed (a wrong, revoked or expired link),
    ``signed_out`` is ``"here"`` or ``"everywhere"`` right after signing out, ``admins`` who can send a new
    link then."""
    st.title("Blind Review")
    if signed_out:
        st.success(SIGNED_OUT.get(signed_out, SIGNED_OUT["here"]))
        st.info(SIGNED_OUT_NOTE.format(who=who_to_ask(admins)))
    if message:
        st.error(message)
    st.markdown(
        "Sign in by opening the personal link your admin sent you "
        "(it looks like `https://…/?token=…`). Keep the link private: it signs you in."
    )


def browser_id() -> str | None:
    """This browser's identity for the server (the hash of its ``blind_review_browser`` cookie), or None
    where there is no such cookie (AppTest, or a server without the guard)."""
    return browser_key(st.context.cookies.get(BROWSER_COOKIE))


def browser_required() -> bool:
    """Whether sign-ins here must come from a browser with its cookie: always when served by
    ``blind-review serve`` (``http_guard.cookies_issued``)."""
    return cookies_issued()


def _session_id() -> str | None:
    ctx = get_script_run_ctx()
    session_id = getattr(ctx, "session_id", None)
    return session_id if isinstance(session_id, str) else None


def record_grant(person: Person) -> None:
    """Tell the web server that ``person`` is signed in in this Streamlit session and browser."""
    session, browser = _session_id(), browser_id()
    if session is not None and browser is not None:
        GRANTS.grant(session, browser, person.role)


def forget_grant() -> None:
    """Tell the web server that nobody is signed in in this Streamlit session."""
    session = _session_id()
    if session is not None:
        GRANTS.drop(session)
