"""The reviewer's page: one blind item at a time, progress, and going back to revise an answer.

Where the reviewer is lives in the database, not in this process: the current item is always "the first
unfinished one in my queue", so a refresh, a crash or a second server resumes at the same place. The
session state holds only the chosen batch id, the assignment id of an item being revised, and a one-shot
"Saved" note.

Blind by structure: this page and its components import only the domain, the errors, the settings, the
sign-in view and the reviewer-facing services (reviews, progress, reviewers), never storage, reporting, the
ratings export or aggregation, so nothing that can read a model's name is within reach (an import-graph
test keeps it so).

Everything the batch supplies (prompt, answers, reference, criteria, instructions, scenario) is untrusted
text: it is rendered by ``components.safe_text``, never by Streamlit's own Markdown.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import streamlit as st

from reviewer_app.components.conversation import render_prompt
from reviewer_app.components.keyboard import KEYS_HELP, install_keys
from reviewer_app.components.output_card import render_outputs
from reviewer_app.components.rating_form import Submission, rating_form
from reviewer_app.components.safe_text import install_styles, markdown_literal, render_markdown
from reviewer_app.domain.enums import AssignmentStatus, BatchStatus, Role
from reviewer_app.domain.views import BatchProgress, Person, ReviewItemView
from reviewer_app.errors import AuthError, BatchClosedError, BlindReviewError, NotFoundError, SlotTakenError
from reviewer_app.services import reviews
from reviewer_app.services.progress import recent_finished
from reviewer_app.services.reviewers import authenticate_session, hash_token, require
from reviewer_app.views import signin

if TYPE_CHECKING:
    from sqlalchemy.engine import Engine

RECENT = 50  # previous items offered for revision
SIGNIN_CHECKED = "signin_checked"  # set by the Submit callback, taken by app.main in the same run


def render(engine: Engine, person: Person) -> None:
    require(person, Role.REVIEWER)
    st.title("Review")
    batches = reviews.batches_for(engine, person.id)
    if not batches:
        st.info("No batch is open for you yet. Your admin will tell you when there is work.")
        return
    batch_id = _pick_batch(batches)
    flash = st.session_state.pop("flash", None)
    if flash:
        st.success(flash, icon=":material/check_circle:")
    taken = st.session_state.pop("flash_warning", None)
    if taken:
        st.warning(markdown_literal(taken), icon=":material/info:")
    revising = st.session_state.get("assignment_id")
    view: ReviewItemView | None
    try:
        if revising is not None:
            view = reviews.item_view(engine, person.id, int(revising))
        else:
            view = reviews.next_item(engine, batch_id, person.id)
    except NotFoundError:
        st.session_state.pop("assignment_id", None)
        st.rerun()
    except BatchClosedError as exc:
        st.info(markdown_literal(str(exc)))
        _previous_items(engine, batch_id, person, current=None)
        return
    if view is None:
        mine = next(b for b in batches if b.batch_id == batch_id)
        if mine.assigned:
            st.progress(min(1.0, mine.done / mine.assigned), text=f"{mine.done} of {mine.assigned} done")
            st.success("You have finished every item of this batch. Thank you!", icon=":material/celebration:")
        else:
            st.info("Nothing in this batch is waiting for you: every item already has its reviewers.")
        _previous_items(engine, batch_id, person, current=None)
        return
    _item(engine, person, view)
    _previous_items(engine, batch_id, person, current=view.assignment_id)


def _pick_batch(batches: list[BatchProgress]) -> int:
    ids = [b.batch_id for b in batches]
    if st.session_state.get("batch_id") not in ids:
        # Start where there is work: own unfinished items first, then open batches with a free pool.
        started = [b.batch_id for b in batches if b.status == BatchStatus.OPEN and b.done < b.assigned]
        fresh = [b.batch_id for b in batches if b.status == BatchStatus.OPEN and not b.assigned]
        st.session_state["batch_id"] = (started + fresh + ids)[0]
    if len(batches) > 1:
        # Static option texts: Streamlit treats a selectbox whose options change as a new widget and would
        # jump back to the first batch, so progress is shown under the picker, not in it.
        names = {b.batch_id: b.name for b in batches}
        st.selectbox(
            "Batch",
            ids,
            format_func=names.__getitem__,
            key="batch_id",
            on_change=lambda: st.session_state.pop("assignment_id", None),
        )
    return int(st.session_state["batch_id"])


def _item(engine: Engine, person: Person, view: ReviewItemView) -> None:
    install_styles()
    error = st.session_state.pop("form_error", None)
    share = view.done / view.total if view.total else 0.0
    st.progress(min(share, 1.0), text=f"{view.done} of {view.total} done · item {view.position} of {view.total}")
    head, back = st.columns([4, 1])
    with head:
        state = "revising a submitted answer" if view.submitted else "new"
        st.subheader(f"Item {view.label}")
        st.caption(f"Scenario: {markdown_literal(view.scenario)} · {state}")
    if st.session_state.get("assignment_id") is not None:
        with back:
            if st.button("Back to my next item", icon=":material/arrow_forward:"):
                st.session_state.pop("assignment_id", None)
                st.rerun()
    if not view.editable:
        st.warning("This batch is closed: you can read your answers but not change them.")
    if view.instructions:
        with st.expander("Instructions", expanded=False):
            render_markdown(view.instructions)
    st.markdown("##### Prompt")
    render_prompt(view.prompt)
    if view.images:
        columns = st.columns(min(len(view.images), 3))
        for i, name in enumerate(view.images):
            with columns[i % len(columns)]:
                try:
                    data = reviews.image_bytes(name)
                except BlindReviewError:
                    st.warning(f'Image {i + 1} cannot be shown; tick "can\'t judge" if you need it.')
                    continue
                st.image(data, caption=f"Image {i + 1} (hover and use the expand button for full size)")
    if view.criteria or view.reference:
        with st.container(border=True):
            if view.criteria:
                st.markdown("**Acceptance criteria**")
                render_markdown(view.criteria)
            if view.reference:
                st.markdown("**Reference answer**")
                render_markdown(view.reference)
    st.markdown("##### " + ("Answers" if len(view.outputs) > 1 else "Answer to judge"))
    render_outputs(view.outputs, key=f"a{view.assignment_id}")
    st.markdown("##### Your judgement")
    rating_form(view, lambda submission: _save(engine, person, submission, view.label))
    if error is not None and error[0] == view.assignment_id:
        st.error(markdown_literal(error[1]))
    st.caption(KEYS_HELP)
    install_keys(view.assignment_id)


def _save(engine: Engine, person: Person, submission: Submission, label: str) -> None:
    """The submit button's callback (runs before the script): save, then let the run draw the next item."""
    try:
        # The sign-in is checked again at the moment of saving: a sign-in ended meanwhile saves nothing.
        token = st.query_params.get(signin.SESSION_PARAM)
        signed_in = authenticate_session(engine, token, signin.browser_id())
        if signed_in.id != person.id:
            raise AuthError("You are signed in as someone else in this tab; reload the page.")
        # This run's sign-in check is the one just made: app.main takes it instead of asking the database
        # again a few milliseconds later. One-shot, and valid only for this same token.
        st.session_state[SIGNIN_CHECKED] = (hash_token(token or ""), signed_in)
        reviews.submit_review(
            engine,
            person.id,
            submission.assignment_id,
            submission.answers,
            comment=submission.comment,
            cant_judge=submission.cant_judge,
        )
    except SlotTakenError as exc:
        # The item is no longer this reviewer's: say what happened at the top of whatever page comes next.
        st.session_state["flash_warning"] = str(exc)
        st.session_state.pop("assignment_id", None)
        return
    except BlindReviewError as exc:
        st.session_state["form_error"] = (submission.assignment_id, str(exc))
        return
    # submit_review has committed when it returns: only now is "Saved" true.
    st.session_state["flash"] = f"Saved item {label}."
    st.session_state.pop("assignment_id", None)


def _previous_items(engine: Engine, batch_id: int, person: Person, current: int | None) -> None:
    entries = recent_finished(engine, batch_id, person.id, limit=RECENT)
    if not entries:
        return
    with st.expander(
        f"Your previous items (the latest {RECENT}) — open one to revise your answer"
        if len(entries) == RECENT
        else f"Your previous items ({len(entries)}) — open one to revise your answer"
    ):
        labels = {
            q.assignment_id: f"#{q.position} · item {q.label} · "
            + ("can't judge" if q.status == AssignmentStatus.SKIPPED else "done")
            for q in entries
        }
        ids = [q.assignment_id for q in entries]
        pick = st.selectbox("Item", ids, format_func=labels.__getitem__, key="revise_pick")
        if st.button("Open", disabled=pick == current):
            st.session_state["assignment_id"] = pick
            st.rerun()
