"""The "Adjudicate" page: a lead, an admin or a designated senior reviewer rules on the items the panel disputes.

Blind like the review page: the item as a reviewer sees it (answers under "A"/"B" on sides drawn for this
adjudicator), the panel's answers and comments as "Reviewer 1, 2, ...", never a name, a model or a file. The
page keeps only the batch id and an opaque case token in its state. Layout only: the work is
``reviewer_app.adjudication``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import streamlit as st

from reviewer_app.adjudication import AdjudicationQueue, CaseView, adjudicable_batches, open_case, rule
from reviewer_app.errors import AdjudicationError
from reviewer_app.review.reviews import image_bytes
from reviewer_app.ui.components.item_context import render_item_context
from reviewer_app.ui.components.output_card import render_outputs
from reviewer_app.ui.components.safe_text import markdown_literal

if TYPE_CHECKING:
    from sqlalchemy.engine import Engine

    from reviewer_app.domain.views import Person

BATCH_KEY = "adjudicate_batch"
CASE_KEY = "adjudicate_case"
SAVED_KEY = "adjudicate_saved"
NOTHING = (
    "You adjudicate no batch. Leads and admins rule on every batch; a reviewer rules on the batches whose rubric "
    "names them under [adjudication] adjudicators."
)


def render(engine: Engine, person: Person) -> None:
    st.title("Adjudicate")
    st.caption(
        "Items the reviewers disagreed on beyond the rubric's threshold. Read the item and the panel's answers, "
        "then record your ruling and why. You see it blind, as the reviewers did; items you reviewed yourself are "
        "left to another adjudicator."
    )
    batches = adjudicable_batches(engine, person)
    if not batches:
        st.info(NOTHING)
        return
    ids = [b for b, _ in batches]
    titles = dict(batches)
    if st.session_state.get(BATCH_KEY) not in ids:
        st.session_state[BATCH_KEY] = ids[0]
    batch_id = st.selectbox("Batch", ids, format_func=lambda b: titles[b], key=BATCH_KEY)
    q, case = open_case(engine, person, batch_id, st.session_state.get(CASE_KEY))
    st.caption(markdown_literal(f"Disputed when: {q.rule}."))
    saved = st.session_state.pop(SAVED_KEY, None)
    if saved:
        st.success(saved)
    if case is None:
        st.success("Nothing to adjudicate in this batch: no disagreement beyond the threshold (yet).")
        return
    st.session_state[CASE_KEY] = case.token
    total = len(q.tokens)
    st.progress(q.ruled / total, text=f"{q.ruled} of {total} ruled, {q.open} open")
    _navigation(q, case)
    _item(case)
    _panel(case)
    _ruling_form(engine, person, batch_id, q, case)


def _navigation(q: AdjudicationQueue, case: CaseView) -> None:
    left, middle, right = st.columns([1, 2, 1])
    n = case.position - 1
    left.button("← Previous", key="adjudicate_prev", disabled=n == 0, on_click=_go, args=(q.tokens[n - 1],),
                width="stretch")  # fmt: skip
    middle.markdown(f"**Disagreement {case.position} of {case.total}** · {markdown_literal(case.item.scenario)}")
    last = n + 1 >= len(q.tokens)
    right.button("Next →", key="adjudicate_next", disabled=last, on_click=_go,
                 args=(q.tokens[min(n + 1, len(q.tokens) - 1)],), width="stretch")  # fmt: skip


def _go(token: str) -> None:
    st.session_state[CASE_KEY] = token


def _item(case: CaseView) -> None:
    view = case.item
    render_item_context(view, image_bytes, "Image {n} cannot be shown.")
    st.markdown("##### " + ("Answers" if len(view.outputs) > 1 else "Answer"))
    render_outputs(view.outputs, key=f"adjudicate_{case.token}")


def _panel(case: CaseView) -> None:
    dim = case.dimension
    st.markdown(f"##### The question: {markdown_literal(dim.name)}")
    if dim.description:
        st.caption(markdown_literal(dim.description))
    with st.container(border=True, key="adjudicate_panel"):
        st.markdown("**What the reviewers answered**")
        for line in case.panel:
            st.markdown(f"**{line.reviewer}**: {markdown_literal(line.answer)}")
            if line.comment:
                st.caption(markdown_literal(f"“{line.comment}”"))


def _ruling_form(engine: Engine, person: Person, batch_id: int, q: AdjudicationQueue, case: CaseView) -> None:
    values = [v for v, _ in case.choices]
    labels = dict(case.choices)
    if case.ruled_value is not None:
        when = case.ruled_at.strftime("%Y-%m-%d %H:%M UTC") if case.ruled_at else ""
        shown = labels.get(case.ruled_value, case.ruled_value)
        st.info(markdown_literal(f"Ruled by {case.ruled_by} {when}: {shown}. A new ruling replaces it."))
    with st.form(key=f"adjudicate_form_{case.token}", border=True):
        value: str | None
        if values:
            index = values.index(case.ruled_value) if case.ruled_value in values else None
            value = st.radio("Your ruling", values, index=index, format_func=lambda v: labels[v], horizontal=True)
        else:  # a continuous scale: its answers cannot be listed, the number is typed
            typed = st.text_input(f"Your ruling ({case.dimension.value_hint()})", value=case.ruled_value or "")
            value = typed.strip() or None
        reason = st.text_area("Why", value=case.reason, max_chars=2000,
                              placeholder="What decides it: the reviewers' points you accept or reject.")  # fmt: skip
        submitted = st.form_submit_button("Record ruling", type="primary")
    if submitted:
        if value is None:
            st.error("Pick your ruling first.")
            return
        try:
            rule(engine, person, batch_id, case.token, str(value), reason)
        except AdjudicationError as exc:
            st.error(str(exc))
            return
        still_open = q.open - (case.ruled_value is None)
        st.session_state[SAVED_KEY] = (
            "Ruling saved. Here is the next open disagreement."
            if still_open
            else "Ruling saved. Every disagreement in this batch is ruled."
        )
        st.session_state.pop(CASE_KEY, None)  # the queue puts open disagreements first
        st.rerun()
