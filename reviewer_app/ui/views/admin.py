"""The admin's page: batches (open / close / archive / delete, the titles reviewers see, and each batch's
identity-leak list), loading a batch with its rubric, people and links, assigning.

Layout only: every action is one service call, the same one the CLI makes, so the rules (the last admin
stays, a zip cannot write outside its folder, a delete needs the batch's name typed) and the checks are the
same. Loading goes through :func:`load_uploads`, which is ``blind-review load-batch`` on the unpacked
uploads. Messages are worded for this page: where a service names a command or a flag,
``admin_messages.page_message`` names the tab or the field instead. The Batches tab is ``admin_batches``'.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import streamlit as st

from reviewer_app.batches.admin import assign_defaults, batch_table, preview_assign
from reviewer_app.batches.catalog import batch_rubric
from reviewer_app.batches.follow_up import DEFAULT_ANCHOR_SHARE
from reviewer_app.batches.uploads import UPLOAD_TYPES, Upload, load_uploads
from reviewer_app.domain.enums import BatchStatus, OnLeak, Role
from reviewer_app.domain.views import Person
from reviewer_app.people.people import ROLES, add_reviewer, list_people, new_link, require, revoke
from reviewer_app.review.assignment import assign
from reviewer_app.ui.components.safe_text import markdown_literal
from reviewer_app.ui.views.admin_batches import render_batches
from reviewer_app.ui.views.admin_messages import FIELD_LABELS, act, show_result
from reviewer_app.ui.views.admin_plan import render_plan
from reviewer_app.ui.views.admin_webhooks import render_webhooks

if TYPE_CHECKING:
    from sqlalchemy.engine import Engine


ON_LEAK_LABELS = {
    OnLeak.MASK: "mask the names (reviewers see [model name])",
    OnLeak.FLAG: "flag them (reviewed as written)",
    OnLeak.EXCLUDE: "exclude them",
    OnLeak.FAIL: "refuse the batch",
}


def render(engine: Engine, person: Person) -> None:
    require(person, Role.ADMIN)
    st.title("Admin")
    batches_tab, load_tab, people_tab, assign_tab, plan_tab, hooks_tab = st.tabs(
        ["Batches", "Load a batch", "People", "Assign", "Plan a study", "Webhooks"]
    )
    with batches_tab:
        render_batches(engine, person)
    with load_tab:
        _load(engine)
        _load_follow_up(engine)
    with people_tab:
        _people(engine)
    with assign_tab:
        _assign(engine)
    with plan_tab:
        render_plan(engine)
    with hooks_tab:
        render_webhooks(engine, person)


def _load(engine: Engine) -> None:
    show_result("admin_load_msg")
    st.caption(
        "Batch files (.jsonl, .csv or AlpacaEval .json) with the images they name, or one .zip holding "
        "them with their folders; and the rubric (.toml). Files may share a name (AlpacaEval's are all "
        "model_outputs.json): each is read. Same checks as `blind-review load-batch`."
    )
    with st.form("load_batch", clear_on_submit=False):
        files = st.file_uploader(FIELD_LABELS["paths"], type=list(UPLOAD_TYPES), accept_multiple_files=True)
        rubric = st.file_uploader(FIELD_LABELS["rubric"], type=["toml"])
        name = st.text_input(FIELD_LABELS["name"], placeholder="e.g. support-v1")
        on_leak = st.selectbox(FIELD_LABELS["on_leak"], list(OnLeak), format_func=ON_LEAK_LABELS.__getitem__)
        reviewers, open_now = _audience_fields(engine, "load")
        pressed = st.form_submit_button("Check and load", type="primary")
    if not pressed:
        return
    if not files or rubric is None:
        st.error("Choose the batch file(s) and the rubric first.")
        return
    uploads = [Upload(f.name, f.getvalue()) for f in files]
    act(
        "admin_load_msg",
        lambda: "\n".join(
            load_uploads(
                engine,
                uploads,
                Upload(rubric.name, rubric.getvalue()),
                name=name,
                on_leak=on_leak or OnLeak.MASK,
                open_now=open_now,
                reviewers=reviewers,
            ).lines()
        ),
    )


def _audience_fields(engine: Engine, key: str) -> tuple[list[str], bool]:
    """Who the batch being loaded is for, and whether it opens at once (by default it is loaded closed, so
    that its reviewers can be chosen or a plan made before anyone sees it)."""
    names = [p.name for p in list_people(engine)]
    reviewers = st.multiselect(
        FIELD_LABELS["reviewers"],
        names,
        key=f"{key}_reviewers",
        placeholder="Every active reviewer",
        help="Only these people see the batch and take its items; none chosen: every active reviewer. "
        "Change it later in the Batches tab.",
    )
    open_now = st.checkbox(
        "Open it for reviewing now",
        key=f"{key}_open_now",
        help="Otherwise it is loaded closed: nobody sees it until you open it in the Batches tab (after choosing "
        "its reviewers or assigning it, for example).",
    )
    return reviewers, open_now


def _load_follow_up(engine: Engine) -> None:
    """A new round on an earlier batch's samples (``load-batch --follow-up``): no rubric, a baseline."""
    show_result("admin_follow_up_msg")
    st.subheader("Load a follow-up batch")
    st.caption(
        "New outputs for the samples of an earlier batch (from `blind-review rerun`, for example), reviewed "
        "under its rubric. A share of its samples is shown again with the baseline's own outputs, blind and "
        "mixed in, so that a change of the panel is measured and not taken for a change of the models. Same "
        "checks as `blind-review load-batch --follow-up`."
    )
    baselines = [r.batch.name for r in batch_table(engine)]
    if not baselines:
        st.info("No batch to follow up yet: load one above first.")
        return
    with st.form("load_follow_up", clear_on_submit=False):
        files = st.file_uploader(
            FIELD_LABELS["paths"], type=list(UPLOAD_TYPES), accept_multiple_files=True, key="follow_up_files"
        )
        baseline = st.selectbox(FIELD_LABELS["follow_up"], baselines, key="follow_up_baseline")
        name = st.text_input(FIELD_LABELS["name"], placeholder="e.g. support-v2", key="follow_up_name")
        share = st.number_input(
            FIELD_LABELS["anchor_share"], min_value=0.0, max_value=1.0, value=DEFAULT_ANCHOR_SHARE, step=0.05,
            key="follow_up_share", help="0 shows none again (the panel's shift is then not measured).",
        )  # fmt: skip
        on_leak = st.selectbox(
            FIELD_LABELS["on_leak"], list(OnLeak), format_func=ON_LEAK_LABELS.__getitem__, key="follow_up_on_leak"
        )
        reviewers, open_now = _audience_fields(engine, "follow_up")
        pressed = st.form_submit_button("Check and load the follow-up", type="primary")
    if not pressed:
        return
    if not files or not baseline:
        st.error("Choose the batch file(s) and the baseline batch first.")
        return
    uploads = [Upload(f.name, f.getvalue()) for f in files]
    act(
        "admin_follow_up_msg",
        lambda: "\n".join(
            load_uploads(
                engine, uploads, None, name=name, on_leak=on_leak or OnLeak.MASK, follow_up=baseline,
                anchor_share=float(share), open_now=open_now, reviewers=reviewers,
            ).lines()
        ),
    )  # fmt: skip


def _people(engine: Engine) -> None:
    show_result("admin_people_msg")
    people = list_people(engine)
    st.dataframe([{"name": p.name, "role": p.role} for p in people], hide_index=True, width="stretch")
    with st.form("add_person", clear_on_submit=True):
        st.markdown("**Add a person**")
        name = st.text_input("Name")
        role = st.selectbox("Role", ROLES)
        if st.form_submit_button("Add and show sign-in link"):

            def added() -> str:
                person, link = add_reviewer(engine, name, role or Role.REVIEWER)
                return f"Added {person.role} {person.name!r}. Sign-in link (shown once; send it privately):\n{link}"

            act("admin_people_msg", added)
    if not people:
        return
    st.markdown("**Sign-in links**")
    pick = st.selectbox("Person", [p.name for p in people], key="admin_person_pick")
    left, right = st.columns(2)
    if left.button("New sign-in link", help="The old link stops working at once."):
        act(
            "admin_people_msg",
            lambda: f"New sign-in link for {pick!r} (the old one no longer works):\n{new_link(engine, pick)}",
        )
    if right.button("Revoke", help="Their link stops working and their unfinished items go back to the pool."):
        act(
            "admin_people_msg",
            lambda: f"Revoked {pick!r}; {revoke(engine, pick)} unfinished item(s) went back to the pool.",
        )


def _assign(engine: Engine) -> None:
    show_result("admin_assign_msg")
    batches = [r.batch for r in batch_table(engine) if r.batch.status == BatchStatus.OPEN]
    people = {p.name: p.role for p in list_people(engine)}
    if not batches:
        st.info("No open batch to assign.")
        return
    batch = st.selectbox("Batch", [b.name for b in batches], key="admin_assign_batch") or batches[0].name
    picked = next(b for b in batches if b.name == batch)
    if batch_rubric(picked).allocation.adaptive:
        st.info(
            f"{batch} allocates adaptively: its samples go to reviewers from the pool as the verdicts need them, "
            "so there is nothing to assign. Its reviewers just open their links; the Batches tab shows where the "
            "pool sends them next."
        )
        return
    # Nobody is chosen by default, or the people this batch was planned for before: choosing everyone with
    # the reviewer role once handed 845 items to each demo person.
    chosen = st.multiselect(
        "Reviewers",
        list(people),
        default=[p for p in assign_defaults(engine, batch) if p in people],
        key=f"admin_assign_people_{batch}",
        format_func=lambda name: name if people[name] == Role.REVIEWER else f"{name} ({people[name]})",
        placeholder="Choose who reviews this batch",
        help="Leads and admins have seen unblinded results: they take slots only when chosen here, and the "
        "report marks their ratings.",
    )
    rebalance = st.checkbox("Re-plan items nobody has opened yet (after adding reviewers)", key="admin_rebalance")
    if not chosen:
        st.caption("Choose the people first: the load each would get shows here before anything is assigned.")
        return
    preview = preview_assign(engine, batch, chosen)
    people_text = "1 person" if len(chosen) == 1 else f"{len(chosen)} people"
    if len(chosen) < preview.overlap:
        st.warning(f"Each item needs {preview.overlap} different reviewers: choose at least {preview.overlap} people.")
        return
    st.markdown(
        markdown_literal(
            f"{preview.free_slots} free slot(s) ({preview.items} items, {preview.overlap} reviewer(s) each) over "
            f"{people_text}: about {preview.per_person} new item(s) each"
            + (", plus the re-planned unopened ones" if rebalance else "")
            + " (repeats for self-consistency come on top)."
        )
    )
    st.dataframe(preview.rows(chosen), hide_index=True, width="stretch")
    if st.button(f"Assign to {people_text}", key="admin_assign_go", type="primary"):
        act("admin_assign_msg", lambda: "\n".join(assign(engine, batch, chosen, rebalance=rebalance).lines()))
