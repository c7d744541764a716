"""The lead's "Model history" page: pick a model (and its earlier names), read its score per batch and scenario
over the follow-up rounds with the 95% CIs, regressions marked, then the tables; download in every format.
Layout only: the work is ``services.history``, the words and tables ``reporting.history``."""

from __future__ import annotations

from typing import TYPE_CHECKING

import altair as alt
import pandas as pd
import streamlit as st

from reviewer_app.batches.output_files import file_stem
from reviewer_app.domain.enums import Role
from reviewer_app.domain.versions import ModelHistory
from reviewer_app.domain.views import Person
from reviewer_app.errors import BlindReviewError
from reviewer_app.people.people import require
from reviewer_app.reporting.compare import VERDICT_COLOURS
from reviewer_app.reporting.formats import significant
from reviewer_app.reporting.history import (
    BATCH_COLUMNS,
    FORMATS,
    POINT_COLUMNS,
    batch_cells,
    headline,
    point_cells,
    render_history,
)
from reviewer_app.ui.components.safe_text import markdown_literal
from reviewer_app.ui.components.tables import MISSING, dash_missing
from reviewer_app.versions.history import ReportFor, history_models, model_history

if TYPE_CHECKING:
    from sqlalchemy.engine import Engine

MIME = {"json": "application/json", "csv": "text/csv", "md": "text/markdown", "html": "text/html"}
RESULT_KEY = "history_result"


def render(engine: Engine, person: Person) -> None:
    require(person, Role.LEAD)
    st.title("Model history")
    st.caption(
        "A model over follow-up rounds: in every batch with its outputs, per scenario, its score with the 95% CI "
        "(from that batch's own report), and the verdict against the batch each round follows up (as Compare "
        "versions gives it). Model names are unblinded."
    )
    models = history_models(engine)
    if not models:
        st.info("No batch has outputs yet: load one first.")
        return
    with st.form("history"):
        model = st.selectbox("Model", models, key="history_model")
        also = st.multiselect(
            "Earlier names of this model",
            models,
            key="history_also",
            help="A renamed version: its past under the old name is included (as --match OLD=NEW in Compare).",
        )
        go = st.form_submit_button("Show history", type="primary")
    if go:
        try:
            with st.spinner("Reading each batch's report and comparing each follow-up with its baseline..."):
                st.session_state[RESULT_KEY] = model_history(
                    engine, str(model), also=[str(a) for a in also if a != model], report_for=_report_for(engine)
                )
        except BlindReviewError as exc:
            st.session_state.pop(RESULT_KEY, None)
            st.error(markdown_literal(str(exc)))
            return
    result = st.session_state.get(RESULT_KEY)
    if isinstance(result, ModelHistory):
        show(result)


def _report_for(engine: Engine) -> ReportFor:
    """Reports through the results page's cache (one per process): a batch's report is computed once per data
    revision, whichever page asks first."""
    from reviewer_app.ui.views.results import _report_cache

    cache = _report_cache()
    return lambda batch_id: cache.report(engine, batch_id)


def show(result: ModelHistory) -> None:
    """The history: headline and notes, downloads, the chart of one dimension, the batches, the points."""
    st.subheader(markdown_literal(result.model + (f" (earlier: {', '.join(result.also)})" if result.also else "")))
    (st.warning if result.regressions else st.info)(markdown_literal(headline(result)))
    for note in result.notes:
        st.caption(markdown_literal(note))
    cols = st.columns(len(FORMATS))
    for col, fmt in zip(cols, FORMATS, strict=True):
        col.download_button(
            f"Download {fmt.upper()}",
            render_history(result, fmt),
            file_name=f"history-{file_stem(result.model, fallback='model')}.{fmt}",
            mime=MIME[fmt],
            key=f"history_dl_{fmt}",
        )
    dims = result.dimensions()
    if dims:
        dim = st.selectbox("Dimension", dims, key="history_dimension")
        st.altair_chart(_chart(result, str(dim)), width="stretch")
    else:
        st.caption("No scores yet: see the batches below.")
    st.markdown("##### Batches")
    st.dataframe(
        dash_missing(pd.DataFrame(batch_cells(result), columns=[h for _, h in BATCH_COLUMNS])),
        hide_index=True,
        placeholder=MISSING,
    )
    st.markdown("##### Scores and verdicts")
    st.dataframe(
        dash_missing(
            pd.DataFrame(
                [[significant(v) if isinstance(v, float) else v for v in point_cells(p)] for p in result.points],
                columns=[h for _, h in POINT_COLUMNS],
            )
        ),
        hide_index=True,
        placeholder=MISSING,
        width="stretch",
    )


def _chart(result: ModelHistory, dimension: str) -> alt.LayerChart:
    """Score per batch (load order) with its 95% CI, one line per scenario; a regression ringed in red."""
    order = [b.name for b in result.batches]
    frame = pd.DataFrame(
        [
            {
                "batch": p.batch,
                "scenario": p.scenario,
                "score": p.score,
                "ci_low": p.ci_low if p.ci_low is not None else p.score,
                "ci_high": p.ci_high if p.ci_high is not None else p.score,
                # whiskers: a new panel's interval where there is one (rounds rated by other reviewers)
                "low": p.panel_ci_low
                if p.panel_ci_low is not None
                else (p.ci_low if p.ci_low is not None else p.score),
                "high": (
                    p.panel_ci_high
                    if p.panel_ci_high is not None
                    else (p.ci_high if p.ci_high is not None else p.score)
                ),
                "verdict": p.verdict or "start of a chain",
                "against": p.against or "",
                "n": p.n,
            }
            for p in result.series(dimension)
        ],
        columns=["batch", "scenario", "score", "ci_low", "ci_high", "low", "high", "verdict", "against", "n"],
    )
    x = alt.X("batch:N", sort=order, title="batch (load order)")
    colour = alt.Color("scenario:N")
    tooltip = [
        alt.Tooltip("batch"),
        alt.Tooltip("scenario"),
        alt.Tooltip("score", format=".3~g"),
        alt.Tooltip("ci_low", title="95% CI low", format=".3~g"),
        alt.Tooltip("ci_high", title="95% CI high", format=".3~g"),
        alt.Tooltip("low", title="95% CI low, new panel", format=".3~g"),
        alt.Tooltip("high", title="95% CI high, new panel", format=".3~g"),
        alt.Tooltip("verdict"),
        alt.Tooltip("against", title="against batch"),
        alt.Tooltip("n"),
    ]
    base = alt.Chart(frame).encode(x=x, color=colour)
    y = alt.Y("score:Q", title=f"{dimension}: score (95% CI)", scale=alt.Scale(zero=False))
    line = base.mark_line().encode(y=y)
    whiskers = base.mark_rule(strokeWidth=2).encode(y="low:Q", y2="high:Q")
    dots = base.mark_circle(size=70).encode(y="score:Q", tooltip=tooltip)
    rings = (
        alt.Chart(frame[frame["verdict"] == "regression"])
        .mark_point(size=400, strokeWidth=3, color=VERDICT_COLOURS["regression"])
        .encode(x=x, y="score:Q", tooltip=tooltip)
    )
    return alt.LayerChart(layer=[line, whiskers, dots, rings])
