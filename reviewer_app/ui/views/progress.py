"""The lead's page: progress per batch, scenario and reviewer, the raw export, and the results report."""

from __future__ import annotations

import io
from typing import TYPE_CHECKING

import streamlit as st

from reviewer_app.batches.admin import batch_titles
from reviewer_app.batches.catalog import batch_list
from reviewer_app.batches.output_files import file_stem
from reviewer_app.domain.enums import BatchStatus, Role
from reviewer_app.domain.views import Person
from reviewer_app.errors import BlindReviewError
from reviewer_app.people.people import require
from reviewer_app.ratings.export import export_ratings
from reviewer_app.review.progress import ProgressRow, batch_progress
from reviewer_app.ui.components.safe_text import markdown_literal
from reviewer_app.ui.components.tables import MISSING, dash_missing

if TYPE_CHECKING:
    from sqlalchemy.engine import Engine


def render(engine: Engine, person: Person) -> None:
    require(person, Role.LEAD)
    st.title("Progress and results")
    batches = batch_list(engine)  # the picker's choices: no counts needed
    if not batches:
        st.info("No batches yet. An admin loads one on the Admin page or with `blind-review load-batch`.")
        return
    names = {b.id: f"{b.name} ({b.mode})" for b in batches if b.id is not None}
    ids = list(names)
    if st.session_state.get("lead_batch_id") not in ids:
        open_ids = [b.id for b in batches if b.status == BatchStatus.OPEN]
        st.session_state["lead_batch_id"] = (open_ids or ids)[0]
    batch_id = int(st.selectbox("Batch", ids, format_func=names.__getitem__, key="lead_batch_id"))
    batch_name = next(b.name for b in batches if b.id == batch_id)
    renamed = [r for r in batch_titles(engine, batch_name) if r.shown != r.name]
    if renamed:  # this page keeps the real names; say what reviewers read instead, so a lead can follow them
        st.caption(
            markdown_literal(
                "Reviewers see "
                + "; ".join(f"{r.kind} {r.name!r} as {r.shown!r}" for r in renamed)
                + " (an admin sets these titles on the Admin page)."
            )
        )
    report = batch_progress(engine, batch_id)
    _progress_line(report.total)
    _results(engine, batch_id)  # the verdict first: what a lead opens this page for
    with st.expander("Progress by scenario and by reviewer, and the raw ratings"):
        st.markdown("##### By scenario")
        st.dataframe(dash_missing(_table(report.by_scenario, "scenario")), hide_index=True, placeholder=MISSING,
                     width="stretch")  # fmt: skip
        st.markdown("##### By reviewer")
        st.dataframe(dash_missing(_table(report.by_reviewer, "reviewer")), hide_index=True, placeholder=MISSING,
                     width="stretch")  # fmt: skip
        _raw_ratings(engine, batch_id, batch_name)


def _progress_line(total: ProgressRow) -> None:
    """The batch's progress in one line and a bar, above the results (the tables are further down)."""
    median = "" if total.median_seconds is None else f" · median {total.median_seconds:.1f} s per item"
    st.progress(
        total.share_done,
        text=f"**{total.done} of {total.assigned}** assigned item showings done ({total.share_done:.0%}) · "
        f"{total.remaining} remaining · {total.skipped} can't judge{median}",
    )
    if not total.assigned:
        st.info(
            "Nothing is assigned in this batch yet: assign reviewers on the Admin page "
            "(or reviewers take items from the pool as they come)."
        )


def _raw_ratings(engine: Engine, batch_id: int, batch_name: str) -> None:
    st.markdown("##### Raw ratings (unblinded)")
    st.caption(
        'One row per rating, and one per "can\'t judge" answer with its reason, with the model names and '
        "reviewers' comments, for your own analysis. Do not share with reviewers."
    )
    if st.button("Prepare export", icon=":material/download:"):
        try:
            for fmt in ("csv", "jsonl"):
                buf = io.StringIO()
                n = export_ratings(engine, batch_name, fmt, None, stream=buf)
                st.session_state[f"export_{fmt}"] = (batch_id, buf.getvalue(), n)
        except BlindReviewError as exc:
            st.error(markdown_literal(str(exc)))
    for fmt, mime in (("csv", "text/csv"), ("jsonl", "application/x-ndjson")):
        prepared = st.session_state.get(f"export_{fmt}")
        if prepared and prepared[0] == batch_id:
            st.download_button(
                f"Download {fmt.upper()} ({prepared[2]} rows)",
                prepared[1],
                file_name=f"{file_stem(batch_name)}-ratings.{fmt}",
                mime=mime,
                key=f"dl_{fmt}",
            )


def _table(rows: list[ProgressRow], what: str) -> list[dict[str, object]]:
    return [
        {
            what: r.group,
            "done": r.done,
            "can't judge": r.skipped,
            "remaining": r.remaining,
            "assigned": r.assigned,
            "% done": round(100 * r.share_done),
            "median s/item": None if r.median_seconds is None else round(r.median_seconds, 1),
        }
        for r in rows
    ]


def _results(engine: Engine, batch_id: int) -> None:
    try:
        from reviewer_app.ui.views.results import render_results
    except ImportError:
        st.info("Agreement and ranking views arrive with the aggregation module.")
        return
    try:
        render_results(engine, batch_id)
    except BlindReviewError as exc:
        st.error(markdown_literal(str(exc)))
