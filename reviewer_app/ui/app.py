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
    st.query_params.clear()
    _reset_state()
    if link_hash:
        signed_out = set(st.session_state.get(signin.SIGNED_OUT_LINKS, ())) | {link_hash}
        st.session_state[signin.SIGNED_OUT_LINKS] = tuple(sorted(signed_out))
    st.session_state["signed_out"] = "everywhere" if everywhere else "here"
    signin.forget_grant()


def _sidebar(engine: Engine, person: Person, pages: list[st.Page], token: str) -> None:
    # Our own page links: Streamlit's navigation menu drops the query string, and with it the sign-in.
    with st.sidebar:
        for page in pages:
            st.page_link(
                page, label=page.title, icon=page.icon, query_params={signin.SESSION_PARAM: token}, width="stretch"
            )
        st.divider()
        st.markdown(f"Signed in as **{markdown_literal(person.name)}** ({person.role})")
        st.button("Sign out", icon=":material/logout:", on_click=_sign_out, args=(engine, token, False))
        st.button(
            "Sign out on every device",
            icon=":material/devices:",
            on_click=_sign_out,
            args=(engine, token, True),
            type="tertiary",
            help="Ends your sign-in in every browser. Your link still works on devices you have not signed out of.",
        )


def _pages(engine: Engine, person: Person) -> list[st.Page]:
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

    pages = [
        st.Page(
            review_page,
            title="Review",
            icon=":material/rate_review:",
            url_path="review",
            default=person.role == Role.REVIEWER,
        )
    ]
    if person.can(Role.LEAD):
        pages.append(
            st.Page(
                progress_page,
                title="Progress & results",
                icon=":material/monitoring:",
                url_path="progress",
                default=person.role == Role.LEAD,
            )
        )
        pages.append(st.Page(compare_page, title="Compare versions", icon=":material/compare:", url_path="compare"))
        pages.append(st.Page(history_page, title="Model history", icon=":material/timeline:", url_path="history"))
    if person.can(Role.ADMIN):
        pages.append(
            st.Page(
                admin_page,
                title="Admin",
                icon=":material/admin_panel_settings:",
                url_path="admin",
                default=person.role == Role.ADMIN,
            )
        )
    return pages


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
        signin.render(signed_out=st.session_state.pop("signed_out", None))
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
    pages = _pages(engine, person)
    page = st.navigation(pages, position="hidden")
    _sidebar(engine, person, pages, token)
    try:
        page.run()
    except BlindReviewError as exc:
        st.error(markdown_literal(str(exc)))


main()
