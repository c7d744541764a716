"""The Streamlit app: the sign-in gate and the router (`blind-review serve` runs this file).

Opening a sign-in link (``?token=...``) makes a sign-in session for this browser, and the address bar then
carries the session's token (``?session=...``) instead of the link's (see ``services.reviewers``). Every run
re-verifies that session against the database, so a revoked person or an ended session stops working at
the next click, a refresh keeps the person signed in, and any number of server processes can serve the
same people. The pages offered are chosen from the server-side person, and every
page checks the role again itself: typing the URL of a page you may not see gets you the default page.

Nothing that goes wrong reaches the page as a traceback: an error a person can act on
(:class:`BlindReviewError`) is shown as its message, anything else (the database down, a corrupt file) as
one clear sentence with an error id, the details in the log under the same id.
"""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st
from sqlalchemy.engine import Engine

from reviewer_app.domain.enums import Role
from reviewer_app.domain.views import Person
from reviewer_app.errors import AuthError, BlindReviewError
from reviewer_app.people.people import SIGNED_OUT_HERE, authenticate_session, hash_token, sign_in, sign_out
from reviewer_app.settings import configure_logging, database_url
from reviewer_app.ui.components.failure import show_unexpected_error
from reviewer_app.ui.components.safe_text import markdown_literal
from reviewer_app.ui.views import admin, progress, review, signin

# An emoji icon is drawn by the browser itself; a ":material/...:" one would be fetched from Google's servers.
st.set_page_config(page_title="Blind Review", page_icon="🕶️", layout="wide")


@st.cache_resource(show_spinner=False)
def _engine(url: str) -> Engine:
    from storage.engine import get_engine
    from storage.migrate import migrate

    engine = get_engine(url)
    migrate(engine)
    return engine


def _reset_state() -> None:
    """Forget everything this tab had chosen, but not the links it signed out of."""
    signed_out = st.session_state.get(signin.SIGNED_OUT_LINKS, ())
    st.session_state.clear()
    if signed_out:
        st.session_state[signin.SIGNED_OUT_LINKS] = signed_out


def _sign_out(engine: Engine, token: str, everywhere: bool) -> None:
    link_hash = sign_out(engine, token, everywhere=everywhere)
    admins = signin.admins_to_ask(engine)
    st.query_params.clear()
    _reset_state()
    if link_hash:
        signed_out = set(st.session_state.get(signin.SIGNED_OUT_LINKS, ())) | {link_hash}
        st.session_state[signin.SIGNED_OUT_LINKS] = tuple(sorted(signed_out))
    st.session_state["signed_out"] = ("everywhere" if everywhere else "here", admins)
    signin.forget_grant()


def _ask_sign_out(which: str | None) -> None:
    if which is None:
        st.session_state.pop(signin.CONFIRM_SIGN_OUT, None)
    else:
        st.session_state[signin.CONFIRM_SIGN_OUT] = which


def _sidebar(engine: Engine, person: Person, pages: list[st.Page], token: str) -> None:
    # Our own page links: Streamlit's navigation menu drops the query string, and with it the sign-in.
    with st.sidebar:
        for page in pages:
            st.page_link(
                page, label=page.title, icon=page.icon, query_params={signin.SESSION_PARAM: token}, width="stretch"
            )
        st.divider()
        st.markdown(f"Signed in as **{markdown_literal(person.name)}** ({person.role})")
        asking = st.session_state.get(signin.CONFIRM_SIGN_OUT)
        if asking in signin.CONFIRM_TEXT:
            # Signing out locks this browser out until an admin sends a new link: a second step, said plainly.
            with st.container(border=True, key="confirm_sign_out"):
                st.markdown(signin.CONFIRM_TEXT[asking])
                st.button(
                    signin.CONFIRM_BUTTON[asking],
                    type="primary",
                    on_click=_sign_out,
                    args=(engine, token, asking == "everywhere"),
                    width="stretch",
                )
                st.button("Cancel, stay signed in", on_click=_ask_sign_out, args=(None,), width="stretch")
            return
        st.button("Sign out", icon=":material/logout:", on_click=_ask_sign_out, args=("here",))
        st.button(
            "Sign out on every device",
            icon=":material/devices:",
            on_click=_ask_sign_out,
            args=("everywhere",),
            type="tertiary",
            help="Ends your sign-in in every browser. Your link still works on devices you have not signed out of.",
        )


def _pages(engine: Engine, person: Person) -> tuple[list[st.Page], list[st.Page]]:
    """The pages for the sidebar (``person``'s own, the first of them their start page, served at ``/``) and
    every page for the router: those, plus hidden ones so that every page's own address (``/review``,
    ``/progress``, ``/admin``, ...) opens without Streamlit's "Page not found". Streamlit serves the start page
    at ``/`` only, so its address gets a hidden twin; a page this person may not see gets its address too,
    where it says whose page it is and shows their start page (the pages check the role themselves as well)."""

    def review_page() -> None:
        review.render(engine, person)

    def progress_page() -> None:
        progress.render(engine, person)

    def admin_page() -> None:
        admin.render(engine, person)

    def compare_page() -> None:
        from reviewer_app.ui.views import compare  # lead-only: the review page never imports it

        compare.render(engine, person)

    def history_page() -> None:
        from reviewer_app.ui.views import history  # lead-only, as compare

        history.render(engine, person)

    def adjudicate_page() -> None:
        from reviewer_app.ui.views import adjudicate  # leads and designated senior reviewers: not the review page's

        adjudicate.render(engine, person)

    # (function, title, icon, address, the role that may open it); the sidebar's order.
    every = [
        (review_page, "Review", ":material/rate_review:", "review", Role.REVIEWER),
        (progress_page, "Progress & results", ":material/monitoring:", "progress", Role.LEAD),
        (compare_page, "Compare versions", ":material/compare:", "compare", Role.LEAD),
        (history_page, "Model history", ":material/timeline:", "history", Role.LEAD),
        (adjudicate_page, "Adjudicate", ":material/gavel:", "adjudicate", _adjudicator_role(engine, person)),
        (admin_page, "Admin", ":material/admin_panel_settings:", "admin", Role.ADMIN),
    ]
    start = {Role.REVIEWER: "review", Role.LEAD: "progress", Role.ADMIN: "admin"}[person.role]
    start_page = next(fn for fn, _t, _i, path, _r in every if path == start)
    shown: list[st.Page] = []
    hidden: list[st.Page] = []
    for fn, title, icon, path, role in every:
        if not person.can(role):
            hidden.append(
                st.Page(_not_yours(title, role, start_page), title=title, icon=icon, url_path=path, visibility="hidden")
            )
        elif path == start:
            # Served at "/" under another internal name, so that its own address is free for the twin below.
            shown.append(st.Page(fn, title=title, icon=icon, url_path=f"{path}-start", default=True))
            hidden.append(st.Page(fn, title=title, icon=icon, url_path=path, visibility="hidden"))
        else:
            shown.append(st.Page(fn, title=title, icon=icon, url_path=path))
    return shown, shown + hidden


def _adjudicator_role(engine: Engine, person: Person) -> Role:
    """Who may open "Adjudicate": leads, and a reviewer some batch's rubric names as an adjudicator (one small
    query on the batches with an [adjudication] table, for a reviewer only)."""
    if person.can(Role.LEAD):
        return Role.LEAD
    from reviewer_app.adjudication import adjudicable_batches

    return Role.REVIEWER if adjudicable_batches(engine, person) else Role.LEAD


def _not_yours(title: str, role: Role, start_page: Callable[[], None]) -> Callable[[], None]:
    def page() -> None:
        st.info(f"{title} is for {role}s: here is your own start page.")
        start_page()

    return page


def _authenticate(engine: Engine, token: str) -> Person:
    """The person this session token signs in, verified against the database once per run.

    A Submit's callback runs at the start of this same run and has just verified the session (see
    ``review._save``); its one-shot result is taken instead of a second query. Any other run asks the
    database, so an ended session or a revoked person stops working at the next click either way."""
    checked = st.session_state.pop(review.SIGNIN_CHECKED, None)
    if checked is not None and checked[0] == hash_token(token) and isinstance(checked[1], Person):
        return checked[1]
    return authenticate_session(engine, token, signin.browser_id(), require_browser=signin.browser_required())


def _sign_in(engine: Engine, link: str) -> tuple[Person, str]:
    """A sign-in link opened in this tab: the person and the session token for the address bar.

    A link this tab signed out of is refused even without the browser cookie (AppTest, cookies off); the
    same link coming back while its session is still on (Back, a second click) reuses that session."""
    link_hash = hash_token(link)
    if link_hash in st.session_state.get(signin.SIGNED_OUT_LINKS, ()):
        raise AuthError(SIGNED_OUT_HERE)
    remembered = st.session_state.get(signin.TAB_SIGNIN)
    if remembered is not None and remembered[0] == link_hash:
        try:
            person = authenticate_session(
                engine, remembered[1], signin.browser_id(), require_browser=signin.browser_required()
            )
            return person, str(remembered[1])
        except AuthError:
            pass
    return sign_in(engine, link, signin.browser_id(), require_browser=signin.browser_required())


def main() -> None:
    try:
        _run()
    except BlindReviewError as exc:
        signin.forget_grant()
        st.error(markdown_literal(str(exc)))
    except Exception as exc:  # noqa: BLE001 - the page's last line of defence: one message, details logged
        signin.forget_grant()
        show_unexpected_error(exc)


def _run() -> None:
    configure_logging()
    engine = _engine(database_url())
    link = st.query_params.get(signin.LINK_PARAM)
    token = st.query_params.get(signin.SESSION_PARAM)
    if not link and not token:
        st.session_state.pop(review.SIGNIN_CHECKED, None)
        signin.forget_grant()
        signed_out = st.session_state.pop("signed_out", None)
        if isinstance(signed_out, tuple):
            signin.render(signed_out=signed_out[0], admins=signed_out[1])
        else:
            signin.render()
        return
    try:
        if link:
            person, token = _sign_in(engine, link)
        else:
            assert token is not None
            person = _authenticate(engine, token)
    except AuthError as exc:
        _reset_state()
        signin.forget_grant()
        signin.render(str(exc))
        return
    if link:
        # The link leaves the address bar: what a refresh, a bookmark or the page links carry from now on is
        # this browser's session, which signing out ends.
        st.query_params.clear()
        st.query_params[signin.SESSION_PARAM] = token
    if st.session_state.get("person_id") != person.id:
        # Someone else's link opened in this tab: forget everything the previous person had chosen.
        _reset_state()
        st.session_state["person_id"] = person.id
    if link:
        st.session_state[signin.TAB_SIGNIN] = (hash_token(link), token)
    st.session_state["role"] = person.role
    signin.record_grant(person)
    pages, routes = _pages(engine, person)
    page = st.navigation(routes, position="hidden")
    _sidebar(engine, person, pages, token)
    try:
        page.run()
    except BlindReviewError as exc:
        st.error(markdown_literal(str(exc)))


main()
