"""The Streamlit app: the sign-in gate and the router (`blind-review serve` runs this file).

Every run re-verifies the sign-in token from the URL (``?token=...``) against the database, so a revoked
link stops working at the next click, a refresh keeps the person signed in, and any number of server
processes can serve the same people. The pages offered are chosen from the server-side person, and every
page checks the role again itself: typing the URL of a page you may not see gets you the default page.
"""

from __future__ import annotations

import streamlit as st
from sqlalchemy.engine import Engine

from reviewer_app.domain.enums import Role
from reviewer_app.domain.views import Person
from reviewer_app.errors import AuthError, BlindReviewError
from reviewer_app.services.reviewers import authenticate, hash_token
from reviewer_app.settings import configure_logging, database_url
from reviewer_app.views import admin, progress, review, signin

st.set_page_config(page_title="Blind Review", page_icon=":material/visibility_off:", layout="wide")


@st.cache_resource(show_spinner=False)
def _engine(url: str) -> Engine:
    from storage.engine import get_engine
    from storage.migrate import migrate

    engine = get_engine(url)
    migrate(engine)
    return engine


def _sign_out() -> None:
    st.query_params.clear()
    st.session_state.clear()
    st.session_state["signed_out"] = True


def _sidebar(person: Person, pages: list[st.Page], token: str) -> None:
    # Our own page links: Streamlit's navigation menu drops the query string, and with it the sign-in.
    with st.sidebar:
        for page in pages:
            st.page_link(page, label=page.title, icon=page.icon, query_params={"token": token}, width="stretch")
        st.divider()
        st.markdown(f"Signed in as **{person.name}** ({person.role})")
        st.button("Sign out", icon=":material/logout:", on_click=_sign_out)


def _pages(engine: Engine, person: Person) -> list[st.Page]:
    def review_page() -> None:
        review.render(engine, person)

    def progress_page() -> None:
        progress.render(engine, person)

    def admin_page() -> None:
        admin.render(engine, person)

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
    """The signed-in person, verified against the database once per run.

    A Submit's callback runs at the start of this same run and has just verified the token (see
    ``review._save``); its one-shot result is taken instead of a second query. Any other run asks the
    database, so a revoked link stops working at the next click either way."""
    checked = st.session_state.pop(review.SIGNIN_CHECKED, None)
    if checked is not None and checked[0] == hash_token(token) and isinstance(checked[1], Person):
        return checked[1]
    return authenticate(engine, token)


def main() -> None:
    try:
        configure_logging()
        engine = _engine(database_url())
    except BlindReviewError as exc:  # a bad setting: say which, rather than show a trace
        st.error(str(exc))
        return
    token = st.query_params.get("token")
    if not token:
        st.session_state.pop(review.SIGNIN_CHECKED, None)
        signin.render(signed_out=bool(st.session_state.pop("signed_out", False)))
        return
    try:
        person = _authenticate(engine, token)
    except AuthError as exc:
        st.session_state.clear()
        signin.render(str(exc))
        return
    if st.session_state.get("person_id") != person.id:
        # Someone else's link opened in this tab: forget everything the previous person had chosen.
        st.session_state.clear()
        st.session_state["person_id"] = person.id
    st.session_state["role"] = person.role
    pages = _pages(engine, person)
    page = st.navigation(pages, position="hidden")
    _sidebar(person, pages, token)
    try:
        page.run()
    except BlindReviewError as exc:
        st.error(str(exc))


main()
