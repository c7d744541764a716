"""What someone who is not signed in sees, and what the web server is told about who is signed in where.

The server in front of Streamlit (``reviewer_app.ui.http_guard``) lets a browser upload files only from a
page where an admin is signed in, and download the lead's export only when a lead or admin is signed in
in it. It learns that from :func:`record_grant`, called on every signed-in run, and :func:`forget_grant`,
called on every other run (signed out, refused, or never signed in).
"""

from __future__ import annotations

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from reviewer_app.domain.views import Person
from reviewer_app.ui.http_guard import BROWSER_COOKIE, GRANTS, browser_key, cookies_issued

LINK_PARAM = "token"  # a sign-in link: https://HOST/?token=...
SESSION_PARAM = "session"  # what the address bar carries once signed in
SIGNED_OUT_LINKS = "signed_out_links"  # hashes of the links this tab signed out of (kept across sign-outs)
TAB_SIGNIN = "tab_signin"  # (link hash, session token) of this tab's sign-in, to reuse when the link comes back

SIGNED_OUT = {
    "here": "You are signed out of this browser.",
    "everywhere": "You are signed out on every device.",
}
SIGNED_OUT_NOTE = (
    "Your sign-in link no longer works in this browser, so going Back or opening it from the history signs "
    "nobody in as you. It still works on devices you have not signed out of; to sign in here again, ask your "
    "admin for a new link."
)


def render(message: str | None = None, *, signed_out: str | None = None) -> None:
    """The sign-in screen; ``message`` is why the last attempt failed (a wrong, revoked or expired link),
    ``signed_out`` is ``"here"`` or ``"everywhere"`` right after signing out."""
    st.title("Blind Review")
    if signed_out:
        st.success(SIGNED_OUT.get(signed_out, SIGNED_OUT["here"]))
        st.info(SIGNED_OUT_NOTE)
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
