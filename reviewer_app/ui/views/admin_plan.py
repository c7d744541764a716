"""The Admin page's "Plan a study" tab: ``blind-review plan`` as a form, with the power curve as a chart.

Layout only: the plan is :func:`reviewer_app.results.plans.plan_from_pilot` or ``plan_from_assumptions``, the
same calls the command makes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import altair as alt
import pandas as pd
import streamlit as st

from reviewer_app.batches.admin import batch_table
from reviewer_app.domain.plans import Plan, PlanRow
from reviewer_app.domain.report import records
from reviewer_app.errors import BlindReviewError
from reviewer_app.results.plans import parse_components, parse_ks, plan_from_assumptions, plan_from_pilot
from reviewer_app.ui.components.safe_text import markdown_literal
from reviewer_app.ui.views.admin_messages import page_message
from reviewer_app.ui.views.results_tables import report_table

if TYPE_CHECKING:
    from sqlalchemy.engine import Engine

PILOT, STATED = "From a pilot batch's ratings", "From stated variance components"


def render_plan(engine: Engine) -> None:
    """The form, then the last plan made (kept for the session, so other tabs' reruns do not lose it)."""
    st.caption(
        "How many samples per scenario a study needs for the report to separate the best model from the worst "
        "when they differ by the gap, at each number of reviewers per output: simulated with the report's own "
        "test (2,000 panels per step, a fixed seed). Same as `blind-review plan`."
    )
    names = [row.batch.name for row in batch_table(engine) if row.batch.mode == "rating"]
    with st.form("plan_study"):
        source = st.radio("Variance components", [PILOT, STATED], horizontal=True)
        pilot = st.selectbox("Pilot batch (rating mode)", names, index=None, placeholder="choose a batch")
        dimension = st.text_input(
            "Question measured on the pilot", value="overall", help="a numeric question, or overall (0-1)"
        )
        stated = st.text_input("Stated components", placeholder="output=0.4,reviewer=0.1,residual=0.6")
        left, mid, right = st.columns(3)
        models = left.number_input("Models", min_value=2, value=4, step=1)
        gap = mid.number_input("Gap to separate (points)", min_value=0.001, value=0.1, format="%.3f")
        target = right.number_input("Power", min_value=0.5, max_value=0.99, value=0.8, step=0.05)
        ks = st.text_input("Reviewers per output to compare", value="1,2,3")
        pressed = st.form_submit_button("Plan", type="primary")
    if pressed:
        try:
            with st.spinner("Simulating the report's decisions..."):
                if source == PILOT:
                    if pilot is None:
                        raise _Missing("Choose the pilot batch first.")
                    plan = plan_from_pilot(
                        engine, pilot, gap=gap, ks=parse_ks(ks), target=target, dimension=dimension.strip(),
                        models=int(models),
                    )  # fmt: skip
                else:
                    plan = plan_from_assumptions(
                        parse_components(stated), scenarios=[], models=int(models), gap=gap, ks=parse_ks(ks),
                        target=target,
                    )  # fmt: skip
            st.session_state["admin_plan"] = plan
        except _Missing as exc:
            st.error(str(exc))
        except BlindReviewError as exc:
            st.error(markdown_literal(page_message(exc)))
    shown = st.session_state.get("admin_plan")
    if isinstance(shown, Plan):
        _show(shown)


class _Missing(Exception):
    pass


def _show(plan: Plan) -> None:
    st.markdown(
        markdown_literal(
            f"{plan.models} models, a gap of {plan.gap:g}, {plan.power:.0%} power; components from {plan.source}."
        )
    )
    for sentence in plan.sentences:
        st.info(markdown_literal(sentence))
    st.dataframe(report_table(PlanRow.COLUMNS, plan.rows), hide_index=True)
    st.altair_chart(curve_chart(plan), width="stretch")


def curve_chart(plan: Plan) -> alt.LayerChart | alt.FacetChart:
    """Samples against simulated power, a line per scenario, with the target as a rule."""
    data = pd.DataFrame(records(plan.curve))
    k = int(data["k"].iloc[0]) if len(data) else 1
    lines = (
        alt.Chart(data)
        .mark_line(point=True)
        .encode(
            x=alt.X("samples:Q", title="samples per scenario"),
            y=alt.Y("power:Q", title=f"power (k = {k})", axis=alt.Axis(format="%"), scale=alt.Scale(domain=[0, 1])),
            color=alt.Color("scenario:N", title="scenario"),
            tooltip=["scenario", "samples", alt.Tooltip("power:Q", format=".0%")],
        )
    )
    rule = alt.Chart(pd.DataFrame({"target": [plan.power]})).mark_rule(strokeDash=[4, 4]).encode(y="target:Q")
    return alt.layer(lines, rule)
