"""The Batches tab of the admin's page: every batch with its counts, and for the one picked its actions (open,
close, archive, delete), the titles reviewers see, its identity-leak list; the archived batches to restore.

Layout only: every action is one service call (``batches.admin``, ``batches.catalog``, ``batches.leak_list``),
the same one the CLI makes, run through ``admin_messages.act``.
"""

from __future__ import annotations

import io
from typing import TYPE_CHECKING

import streamlit as st

from reviewer_app.batches.admin import (
    BatchRow,
    TitleRow,
    archive_batch,
    batch_table,
    batch_titles,
    delete_batch,
    restore_batch,
    set_titles,
)
from reviewer_app.batches.audience import batch_audience, set_batch_reviewers
from reviewer_app.batches.catalog import batch_rubric, set_batch_open
from reviewer_app.batches.leak_list import leaks_for, write_leaks
from reviewer_app.batches.output_files import file_stem
from reviewer_app.domain.enums import BatchStatus
from reviewer_app.domain.views import Person
from reviewer_app.people.people import list_people
from reviewer_app.ui.components.safe_text import markdown_literal
from reviewer_app.ui.views.admin_messages import FIELD_LABELS, HOW_TO_OPEN, act, show_result

if TYPE_CHECKING:
    from sqlalchemy.engine import Engine


def render_batches(engine: Engine, person: Person) -> None:
    """The Batches tab: the table, the picked batch's actions, titles and leaks, then the archived batches."""
    show_result("admin_batches_msg")
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
        _adaptive_pool(engine, row)
        _titles(engine, person, row)
        _leaks(engine, person, row)
    _archived(engine, person)


def _opened(engine: Engine, name: str) -> str:
    return batch_audience(engine, set_batch_open(engine, name, True).name).line(how_to_open=HOW_TO_OPEN)


def _closed(engine: Engine, name: str) -> str:
    return batch_audience(engine, set_batch_open(engine, name, False).name).line()


def _audience(engine: Engine, row: BatchRow) -> None:
    """Who the batch is for: its status in one sentence, and its own reviewers to change."""
    name = row.batch.name
    audience = batch_audience(engine, name)
    st.markdown(markdown_literal(audience.line(how_to_open="Open batch below")))
    names = sorted({*(p.name for p in list_people(engine)), *audience.reviewers})
    with st.form(f"admin_reviewers_{row.batch.id}", border=False):
        chosen = st.multiselect(
            FIELD_LABELS["reviewers"],
            names,
            default=list(audience.reviewers),
            placeholder="Every active reviewer",
            help="Only these people see the batch and take its free items; none: every active reviewer. Taking "
            "someone off keeps their answers and the items planned for them.",
        )
        if st.form_submit_button("Save reviewers"):
            had = set(audience.reviewers)
            act(
                "admin_batches_msg",
                lambda: set_batch_reviewers(
                    engine, name, add=[n for n in chosen if n not in had], remove=[n for n in had if n not in chosen]
                ).line(how_to_open=HOW_TO_OPEN),
            )


def _batch_actions(engine: Engine, person: Person, row: BatchRow) -> None:
    name = row.batch.name
    is_open = row.batch.status == BatchStatus.OPEN
    _audience(engine, row)
    toggle, archive = st.columns(2)
    if is_open:
        if toggle.button("Close batch", key="admin_toggle", width="stretch"):
            st.session_state["admin_confirm_close"] = name
    elif toggle.button("Open batch", key="admin_toggle", width="stretch"):
        act("admin_batches_msg", lambda: _opened(engine, name))
    if archive.button(
        "Archive batch",
        key="admin_archive",
        width="stretch",
        help="Closes the batch and takes it out of every list, keeping its ratings; you can restore it below.",
    ):
        act(
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
                act("admin_batches_msg", lambda: _closed(engine, name))
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
            act("admin_batches_msg", lambda: "\n".join(delete_batch(engine, name, confirm=typed, by=person).lines()))


def _adaptive_pool(engine: Engine, row: BatchRow) -> None:
    """For a batch whose rubric allocates adaptively: where its pool sends reviewers next (the states the last
    refresh wrote, as ``blind-review allocation --show`` prints them), and a button to refresh them now."""
    if not batch_rubric(row.batch).allocation.adaptive:
        return
    from reviewer_app.results.allocation import pool_state, refresh_allocation  # unblinded: this page only

    name = row.batch.name
    with st.expander("Adaptive pool: where reviewers go next"):
        lines = pool_state(engine, name).lines()
        st.markdown(markdown_literal(lines[0]))
        st.markdown("\n".join(f"- {markdown_literal(line.strip())}" for line in lines[1:]))
        st.caption(
            "Refreshed from the ratings in the background while the app runs; a sample is released whole, a share "
            "of them at random."
        )
        if st.button("Refresh now", key=f"admin_pool_refresh_{row.batch.id}"):
            act("admin_batches_msg", lambda: refresh_allocation(engine, name).summary())


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
                act(
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
            act(
                "admin_batches_msg",
                lambda: (
                    f"Batch {restore_batch(engine, pick, by=person).name!r} is back, closed: open it to take ratings."
                ),
            )
