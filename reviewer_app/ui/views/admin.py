"""The admin's page: batches (open / close / archive / delete, the titles reviewers see, and each batch's
identity-leak list), loading a batch with its rubric, people and links, assigning.

Layout only: every action is one service call, the same one the CLI makes, so the rules (the last admin
stays, a zip cannot write outside its folder, a delete needs the batch's name typed) and the checks are the
same. Loading goes through :func:`load_uploads`, which is ``blind-review load-batch`` on the unpacked
uploads. Messages are worded for this page: where a service names a command or a flag, :func:`_message`
names the tab or the field instead.
"""

from __future__ import annotations

import io
import re
from collections.abc import Callable
from typing import TYPE_CHECKING

import streamlit as st

from reviewer_app.batches.admin import (
    BatchRow,
    TitleRow,
    archive_batch,
    assign_defaults,
    batch_table,
    batch_titles,
    delete_batch,
    preview_assign,
    restore_batch,
    set_titles,
)
from reviewer_app.batches.follow_up import DEFAULT_ANCHOR_SHARE
from reviewer_app.batches.leak_list import leaks_for, write_leaks
from reviewer_app.batches.loading import set_batch_open
from reviewer_app.batches.output_files import file_stem
from reviewer_app.batches.uploads import UPLOAD_TYPES, Upload, load_uploads
from reviewer_app.domain.enums import BatchStatus, OnLeak, Role
from reviewer_app.domain.views import Person
from reviewer_app.errors import BlindReviewError, ValidationError
from reviewer_app.people.people import ROLES, add_reviewer, list_people, new_link, require, revoke
from reviewer_app.review.assignment import assign
from reviewer_app.ui.components.safe_text import markdown_literal

if TYPE_CHECKING:
    from sqlalchemy.engine import Engine

# How this page names the arguments a service may find fault with (the CLI names them by its flags).
FIELD_LABELS = {
    "paths": "Batch files",
    "rubric": "Rubric",
    "name": "Batch name",
    "on_leak": "Outputs that name a model or vendor",
    "confirm": "Batch name to confirm",
    "display_name": "Batch title for reviewers",
    "scenario": "Scenario titles",
    "follow_up": "Baseline batch",
    "anchor_share": "Share of samples shown again",
}
# Where a service's message names a command or a flag, this page names its own tab or field (the checks and
# the file:line detail stay the service's).
PAGE_WORDS = [
    (re.compile(r"Fix these and run the command again\."), "Fix these and load again."),
    (
        re.compile(r"or load with --on-leak mask, flag or exclude\."),
        'or load again with another choice under "Outputs that name a model or vendor".',
    ),
    (re.compile(r"; see --on-leak\)"), ")"),
    (re.compile(r" ?\(?see `blind-review list-batches`\)?"), " (see the Batches tab)"),
    (re.compile(r"use `blind-review new-link [^`]*` for a new sign-in link"), "make them a new sign-in link below"),
    (re.compile(r"\(`blind-review add-reviewer NAME --role admin`\)"), "(Add a person, with the role admin)"),
    (re.compile(r"add them with `blind-review add-reviewer [^`]*`"), "add them under People"),
]

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
        _batches(engine, person)
    with load_tab:
        _load(engine)
        _load_follow_up(engine)
    with people_tab:
        _people(engine)
    with assign_tab:
        _assign(engine)


def _message(exc: BlindReviewError) -> str:
    text = exc.worded(lambda f: FIELD_LABELS.get(f, f)) if isinstance(exc, ValidationError) else str(exc)
    for pattern, words in PAGE_WORDS:
        text = pattern.sub(words, text)
    return text


def _show_result(key: str) -> None:
    result = st.session_state.pop(key, None)
    if result is None:
        return
    ok, text = result
    first, _, rest = text.partition("\n")
    (st.success if ok else st.error)(markdown_literal(first))  # names and messages are shown as typed
    if rest.strip():
        # A code block shows the text as it is, with a copy button that copies exactly that (a sign-in link).
        st.code(rest.strip("\n"), language=None, wrap_lines=True)


def _act(key: str, action: Callable[[], str]) -> None:
    """Run one service call, keep its message for the next run, and rerun."""
    try:
        st.session_state[key] = (True, action())
    except BlindReviewError as exc:
        st.session_state[key] = (False, _message(exc))
    st.rerun()


def _batches(engine: Engine, person: Person) -> None:
    _show_result("admin_batches_msg")
    rows = batch_table(engine)
    if not rows:
        st.info("No batches yet: load one in the next tab.")
    else:
        st.dataframe(
            [
                {
                    "id": r.batch.id,
                    "name": r.batch.name,
                    "reviewers see": r.title,
                    "mode": r.batch.mode,
                    "status": r.batch.status,
                    "k": r.batch.overlap,
                    "samples": r.counts.samples,
                    "outputs": r.counts.outputs,
                    "items": r.counts.items,
                    "done": r.counts.done,
                    "ratings": r.counts.ratings,
                    "models (outputs)": r.models_text,
                    "follow-up of": r.follow_up_of or "",
                }
                for r in rows
            ],
            hide_index=True,
            width="stretch",
        )
        names = [r.batch.name for r in rows]
        pick = st.selectbox("Batch", names, key="admin_batch_pick")
        row = next(r for r in rows if r.batch.name == pick)
        _batch_actions(engine, person, row)
        _titles(engine, person, row)
        _leaks(engine, person, row)
    _archived(engine, person)


def _batch_actions(engine: Engine, person: Person, row: BatchRow) -> None:
    name = row.batch.name
    is_open = row.batch.status == BatchStatus.OPEN
    toggle, archive = st.columns(2)
    if is_open:
        if toggle.button("Close batch", key="admin_toggle", width="stretch"):
            st.session_state["admin_confirm_close"] = name
    elif toggle.button("Open batch", key="admin_toggle", width="stretch"):
        _act("admin_batches_msg", lambda: f"Batch {set_batch_open(engine, name, True).name!r} is now open.")
    if archive.button(
        "Archive batch",
        key="admin_archive",
        width="stretch",
        help="Closes the batch and takes it out of every list, keeping its ratings; you can restore it below.",
    ):
        _act(
            "admin_batches_msg",
            lambda: (
                f"Batch {archive_batch(engine, name, by=person).name!r} is archived: closed and out of "
                "every list. Restore it under Archived batches."
            ),
        )
    if is_open and st.session_state.get("admin_confirm_close") == name:
        with st.container(border=True):
            st.warning(
                markdown_literal(
                    f"Close {name!r}? Reviewers can no longer submit or change answers in it (you can open it again)."
                )
            )
            yes, no = st.columns(2)
            if yes.button("Yes, close it", key="admin_close_yes", type="primary", width="stretch"):
                st.session_state.pop("admin_confirm_close", None)
                _act("admin_batches_msg", lambda: f"Batch {set_batch_open(engine, name, False).name!r} is now closed.")
            if no.button("Cancel", key="admin_close_no", width="stretch"):
                st.session_state.pop("admin_confirm_close", None)
                st.rerun()
    with st.expander("Delete this batch for good"):
        st.markdown(
            markdown_literal(
                f"Deletes {name!r} with its {row.counts.ratings} rating(s), its assignments, items, "
                f"{row.counts.outputs} output(s) and samples, and the images no other batch shows. This cannot "
                "be undone: to keep the data, archive the batch instead."
            )
        )
        typed = st.text_input(FIELD_LABELS["confirm"], key=f"admin_delete_confirm_{row.batch.id}", placeholder=name)
        if st.button(
            "Delete batch and its ratings", key="admin_delete", type="primary", disabled=typed.strip() != name
        ):
            _act("admin_batches_msg", lambda: "\n".join(delete_batch(engine, name, confirm=typed, by=person).lines()))


def _titles(engine: Engine, person: Person, row: BatchRow) -> None:
    """What reviewers see for the batch's name and its scenario names, and a form to set other titles."""
    name = row.batch.name
    rows = batch_titles(engine, name)
    neutral = sum(r.why.startswith("neutral") for r in rows)
    with st.expander(f"Titles reviewers see{f' ({neutral} name(s) hidden: they name a model)' if neutral else ''}"):
        st.caption(
            "Reviewers see the batch's name and the scenario names unless they name one of the batch's models; "
            "then they see a neutral title (Batch 3, Scenario 2) until you set one here. A title that names a model "
            "is refused. You, leads and reports keep the real names. Leave a title empty to go back to the default."
        )
        st.dataframe(
            [{"": r.kind, "name": r.name, "reviewers see": r.shown, "why": r.why} for r in rows],
            hide_index=True,
            width="stretch",
        )
        with st.form(f"admin_titles_{row.batch.id}"):
            batch_title = st.text_input(
                FIELD_LABELS["display_name"], value=rows[0].display_name or "", placeholder=rows[0].shown, max_chars=80
            )
            typed = {
                r.name: st.text_input(
                    markdown_literal(f"Scenario {r.name!r}"),
                    value=r.display_name or "",
                    placeholder=r.shown,
                    max_chars=80,
                    key=f"admin_title_{row.batch.id}_{i}",
                )
                for i, r in enumerate(rows[1:])
            }
            if st.form_submit_button("Save titles"):
                _act(
                    "admin_batches_msg",
                    lambda: _titles_message(
                        set_titles(engine, name, display_name=batch_title, scenarios=typed, by=person)
                    ),
                )


def _titles_message(rows: list[TitleRow]) -> str:
    shown = "; ".join(f"{r.name!r} as {r.shown!r}" for r in rows)
    return f"Saved. Reviewers see {shown}."


def _leaks(engine: Engine, person: Person, row: BatchRow) -> None:
    assert row.batch.id is not None
    entries = leaks_for(engine, person, row.batch.id)
    st.markdown(f"##### Identity leaks ({len(entries)})")
    if not entries:
        st.caption("The load's scan found no output of this batch that names a model or vendor.")
        return
    st.caption(
        "Every output of this batch whose text names a model or vendor, with the words that matched and what the "
        "load did: masked (reviewers see [model name]), excluded (not reviewed) or flagged (reviewed as written)."
    )
    st.dataframe(
        [{**e.__dict__, "sample": e.sample_id} for e in entries],
        column_order=["scenario", "sample", "model", "repeat", "words", "handling"],
        hide_index=True,
        width="stretch",
    )
    for column, fmt in zip(st.columns(2), ("csv", "jsonl"), strict=True):
        buf = io.StringIO()
        write_leaks(entries, fmt, buf)
        column.download_button(
            f"Download as {fmt.upper()}",
            buf.getvalue(),
            file_name=f"{file_stem(row.batch.name)}-leaks.{fmt}",
            key=f"admin_leaks_{fmt}",
            width="stretch",
        )


def _archived(engine: Engine, person: Person) -> None:
    archived = batch_table(engine, archived=True)
    if not archived:
        return
    with st.expander(f"Archived batches ({len(archived)})"):
        st.dataframe(
            [
                {"id": r.batch.id, "name": r.batch.name, "ratings": r.counts.ratings, "archived": r.batch.archived_at}
                for r in archived
            ],
            hide_index=True,
            width="stretch",
        )
        pick = st.selectbox("Archived batch", [r.batch.name for r in archived], key="admin_archived_pick")
        if st.button("Restore", key="admin_restore", help="Back into every list, closed: open it to take ratings."):
            _act(
                "admin_batches_msg",
                lambda: (
                    f"Batch {restore_batch(engine, pick, by=person).name!r} is back, closed: open it to take ratings."
                ),
            )


def _load(engine: Engine) -> None:
    _show_result("admin_load_msg")
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
        pressed = st.form_submit_button("Check and load", type="primary")
    if not pressed:
        return
    if not files or rubric is None:
        st.error("Choose the batch file(s) and the rubric first.")
        return
    uploads = [Upload(f.name, f.getvalue()) for f in files]
    _act(
        "admin_load_msg",
        lambda: "\n".join(
            load_uploads(
                engine, uploads, Upload(rubric.name, rubric.getvalue()), name=name, on_leak=on_leak or OnLeak.MASK
            ).lines()
        ),
    )


def _load_follow_up(engine: Engine) -> None:
    """A new round on an earlier batch's samples (``load-batch --follow-up``): no rubric, a baseline."""
    _show_result("admin_follow_up_msg")
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
        pressed = st.form_submit_button("Check and load the follow-up", type="primary")
    if not pressed:
        return
    if not files or not baseline:
        st.error("Choose the batch file(s) and the baseline batch first.")
        return
    uploads = [Upload(f.name, f.getvalue()) for f in files]
    _act(
        "admin_follow_up_msg",
        lambda: "\n".join(
            load_uploads(
                engine, uploads, None, name=name, on_leak=on_leak or OnLeak.MASK, follow_up=baseline,
                anchor_share=float(share),
            ).lines()
        ),
    )  # fmt: skip


def _people(engine: Engine) -> None:
    _show_result("admin_people_msg")
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

            _act("admin_people_msg", added)
    if not people:
        return
    st.markdown("**Sign-in links**")
    pick = st.selectbox("Person", [p.name for p in people], key="admin_person_pick")
    left, right = st.columns(2)
    if left.button("New sign-in link", help="The old link stops working at once."):
        _act(
            "admin_people_msg",
            lambda: f"New sign-in link for {pick!r} (the old one no longer works):\n{new_link(engine, pick)}",
        )
    if right.button("Revoke", help="Their link stops working and their unfinished items go back to the pool."):
        _act(
            "admin_people_msg",
            lambda: f"Revoked {pick!r}; {revoke(engine, pick)} unfinished item(s) went back to the pool.",
        )


def _assign(engine: Engine) -> None:
    _show_result("admin_assign_msg")
    batches = [r.batch for r in batch_table(engine) if r.batch.status == BatchStatus.OPEN]
    people = {p.name: p.role for p in list_people(engine)}
    if not batches:
        st.info("No open batch to assign.")
        return
    batch = st.selectbox("Batch", [b.name for b in batches], key="admin_assign_batch") or batches[0].name
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
        _act("admin_assign_msg", lambda: "\n".join(assign(engine, batch, chosen, rebalance=rebalance).lines()))
