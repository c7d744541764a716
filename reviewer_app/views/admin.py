"""The admin's page: batches (open / close), loading a batch with its rubric, people and links, assigning.

Layout only: every action is one service call, the same one the CLI makes, so the rules (the last admin
stays, a zip cannot write outside its folder) and the messages are the same. Loading goes through
:func:`load_uploaded_batch`, which is ``blind-review load-batch`` on the unpacked uploads.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import streamlit as st

from reviewer_app.components.safe_text import markdown_literal
from reviewer_app.domain.enums import BatchStatus, OnLeak, Role
from reviewer_app.domain.views import Person
from reviewer_app.errors import BlindReviewError, ValidationError
from reviewer_app.services.assignment import assign
from reviewer_app.services.batches import list_batches, set_batch_open
from reviewer_app.services.reviewers import ROLES, add_reviewer, list_people, new_link, require, revoke
from reviewer_app.services.uploads import UPLOAD_TYPES, Upload, load_uploaded_batch

if TYPE_CHECKING:
    from sqlalchemy.engine import Engine

# How this page names the arguments a service may find fault with (the CLI names them by its flags).
FIELD_LABELS = {
    "paths": "Batch files",
    "rubric": "Rubric",
    "name": "Batch name",
    "on_leak": "Outputs that name a model or vendor",
}
ON_LEAK_LABELS = {
    OnLeak.MASK: "mask the names (reviewers see [model name])",
    OnLeak.FLAG: "flag them (reviewed as written)",
    OnLeak.EXCLUDE: "exclude them",
    OnLeak.FAIL: "refuse the batch",
}


def render(engine: Engine, person: Person) -> None:
    require(person, Role.ADMIN)
    st.title("Admin")
    batches_tab, load_tab, people_tab, assign_tab = st.tabs(["Batches", "Load a batch", "People", "Assign"])
    with batches_tab:
        _batches(engine)
    with load_tab:
        _load(engine)
    with people_tab:
        _people(engine)
    with assign_tab:
        _assign(engine)


def _message(exc: BlindReviewError) -> str:
    return exc.worded(lambda f: FIELD_LABELS.get(f, f)) if isinstance(exc, ValidationError) else str(exc)


def _show_result(key: str) -> None:
    result = st.session_state.pop(key, None)
    if result is None:
        return
    ok, text = result
    first, _, rest = text.partition("\n")
    (st.success if ok else st.error)(markdown_literal(first))  # names and messages are shown as typed
    if rest.strip():
        st.code(rest, language=None, wrap_lines=True)


def _batches(engine: Engine) -> None:
    _show_result("admin_batches_msg")
    rows = list_batches(engine)
    if not rows:
        st.info("No batches yet: load one in the next tab.")
        return
    st.dataframe(
        [
            {
                "id": b.id,
                "name": b.name,
                "mode": b.mode,
                "status": b.status,
                "k": b.overlap,
                "samples": c.samples,
                "outputs": c.outputs,
                "items": c.items,
                "done": c.done,
                "ratings": c.ratings,
            }
            for b, c in rows
        ],
        hide_index=True,
        width="stretch",
    )
    names = [b.name for b, _c in rows]
    pick = st.selectbox("Batch", names, key="admin_batch_pick")
    is_open = next(b.status for b, _c in rows if b.name == pick) == BatchStatus.OPEN
    if st.button("Close batch" if is_open else "Open batch", key="admin_toggle"):
        try:
            batch = set_batch_open(engine, pick, not is_open)
            st.session_state["admin_batches_msg"] = (True, f"Batch {batch.name!r} is now {batch.status}.")
        except BlindReviewError as exc:
            st.session_state["admin_batches_msg"] = (False, _message(exc))
        st.rerun()


def _load(engine: Engine) -> None:
    _show_result("admin_load_msg")
    st.caption(
        "Batch files (.jsonl, .csv or AlpacaEval .json) with the images they name, or one .zip holding "
        "them with their folders; and the rubric (.toml). Same checks and messages as "
        "`blind-review load-batch`."
    )
    with st.form("load_batch", clear_on_submit=False):
        files = st.file_uploader(FIELD_LABELS["paths"], type=list(UPLOAD_TYPES), accept_multiple_files=True)
        rubric = st.file_uploader(FIELD_LABELS["rubric"], type=["toml"])
        name = st.text_input(FIELD_LABELS["name"], placeholder="e.g. support-v1")
        on_leak = st.selectbox(FIELD_LABELS["on_leak"], list(OnLeak), format_func=ON_LEAK_LABELS.__getitem__)
        pressed = st.form_submit_button("Check and load", type="primary")
    if not pressed:
        return
    if not files or rubric is None:
        st.error("Choose the batch file(s) and the rubric first.")
        return
    try:
        summary = load_uploaded_batch(
            engine,
            [Upload(f.name, f.getvalue()) for f in files],
            Upload(rubric.name, rubric.getvalue()),
            name=name,
            on_leak=on_leak or OnLeak.MASK,
        )
        st.session_state["admin_load_msg"] = (True, "\n".join(summary.lines()))
    except BlindReviewError as exc:
        st.session_state["admin_load_msg"] = (False, _message(exc))
    st.rerun()


def _people(engine: Engine) -> None:
    _show_result("admin_people_msg")
    people = list_people(engine)
    st.dataframe([{"name": p.name, "role": p.role} for p in people], hide_index=True, width="stretch")
    with st.form("add_person", clear_on_submit=True):
        st.markdown("**Add a person**")
        name = st.text_input("Name")
        role = st.selectbox("Role", ROLES)
        if st.form_submit_button("Add and show sign-in link"):
            try:
                added, link = add_reviewer(engine, name, role)
                st.session_state["admin_people_msg"] = (
                    True,
                    f"Added {added.role} {added.name!r}. Sign-in link (shown once; send it privately):\n\n`{link}`",
                )
            except BlindReviewError as exc:
                st.session_state["admin_people_msg"] = (False, _message(exc))
            st.rerun()
    if not people:
        return
    st.markdown("**Sign-in links**")
    pick = st.selectbox("Person", [p.name for p in people], key="admin_person_pick")
    left, right = st.columns(2)
    if left.button("New sign-in link", help="The old link stops working at once."):
        try:
            st.session_state["admin_people_msg"] = (
                True,
                f"New sign-in link for {pick!r} (the old one no longer works):\n\n`{new_link(engine, pick)}`",
            )
        except BlindReviewError as exc:
            st.session_state["admin_people_msg"] = (False, _message(exc))
        st.rerun()
    if right.button("Revoke", help="Their link stops working and their unfinished items go back to the pool."):
        try:
            released = revoke(engine, pick)
            st.session_state["admin_people_msg"] = (
                True,
                f"Revoked {pick!r}; {released} unfinished item(s) went back to the pool.",
            )
        except BlindReviewError as exc:
            st.session_state["admin_people_msg"] = (False, _message(exc))
        st.rerun()


def _assign(engine: Engine) -> None:
    _show_result("admin_assign_msg")
    batches = [b for b, _c in list_batches(engine) if b.status == BatchStatus.OPEN]
    people = {p.name: p.role for p in list_people(engine)}
    reviewers = [name for name, role in people.items() if role == Role.REVIEWER]
    if not batches:
        st.info("No open batch to assign.")
        return
    with st.form("assign"):
        batch = st.selectbox("Batch", [b.name for b in batches])
        chosen = st.multiselect(
            "Reviewers",
            list(people),
            default=reviewers,
            format_func=lambda name: name if people[name] == Role.REVIEWER else f"{name} ({people[name]})",
            help="Leads and admins have seen unblinded results: they take slots only when chosen here, and the "
            "report marks their ratings.",
        )
        rebalance = st.checkbox("Re-plan items nobody has opened yet (after adding reviewers)")
        if st.form_submit_button("Assign", type="primary"):
            try:
                summary = assign(engine, batch, chosen or None, rebalance=rebalance)
                st.session_state["admin_assign_msg"] = (True, "\n".join(summary.lines()))
            except BlindReviewError as exc:
                st.session_state["admin_assign_msg"] = (False, _message(exc))
            st.rerun()
