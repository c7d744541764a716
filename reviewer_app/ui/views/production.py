"""The "Production" tab of the lead's results: the production monitor of some models (feedback per window with
its 95% CI, latency p50 and p95, the flagged changes first), a window picker, a canary picker, and downloads in
every format. Layout only: the work is ``services.feedback``, the words and tables ``reporting.monitor``.

Unblinded (model names): the lead wires it behind the lead check; reviewers never reach it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import altair as alt
import pandas as pd
import streamlit as st

from reviewer_app.domain.production import WINDOWS, MonitorResult
from reviewer_app.errors import BlindReviewError
from reviewer_app.production.feedback import feedback_models, monitor
from reviewer_app.reporting.formats import significant
from reviewer_app.reporting.monitor import (
    CHANGE_COLUMNS,
    FORMATS,
    WINDOW_COLUMNS,
    WINDOW_NOTE,
    change_cells,
    change_sentence,
    headline,
    render_monitor,
    scales,
    window_cells,
)
from reviewer_app.ui.components.safe_text import markdown_literal
from reviewer_app.ui.components.tables import MISSING, dash_missing

if TYPE_CHECKING:
    from sqlalchemy.engine import Engine

MIME = {"json": "application/json", "csv": "text/csv", "md": "text/markdown", "html": "text/html"}
NO_CANARY = "(none)"


def render_production(engine: Engine, models: Sequence[str] | None = None) -> None:
    """The monitor of ``models`` (every model with feedback when None)."""
    known = feedback_models(engine)
    shown = known if models is None else [m for m in known if m in set(models)]
    if not shown:
        st.info("No production feedback for these models yet: import some with `blind-review import-feedback FILE`.")
        return
    left, mid, right = st.columns([1, 2, 2])
    window = left.radio(
        "Window", WINDOWS, horizontal=True, key="production_window", help="UTC days, or ISO weeks from Monday"
    )
    canary = mid.selectbox("Canary model", [NO_CANARY, *shown], key="production_canary")
    current = right.selectbox("Against current model", [NO_CANARY, *shown], key="production_current")
    canaries = [(str(canary), str(current))] if NO_CANARY not in (canary, current) and canary != current else []
    try:
        with st.spinner("Reading the feedback and testing each window..."):
            result = monitor(engine, window=str(window), models=shown, canaries=canaries)
    except BlindReviewError as exc:
        st.error(markdown_literal(str(exc)))
        return
    show(result)


def show(result: MonitorResult) -> None:
    """Headline and the flagged changes first, then downloads, the charts, the tables."""
    flagged = result.flagged
    (st.warning if flagged else st.info)(markdown_literal(headline(result)))
    for change in flagged[:10]:
        st.markdown("- " + markdown_literal(change_sentence(change)))
    if len(flagged) > 10:
        st.caption(f"... and {len(flagged) - 10} more in the table below.")
    for note in result.notes:
        st.caption(markdown_literal(note))
    if flagged:
        st.markdown("##### Flagged changes")
        st.dataframe(
            dash_missing(_table(CHANGE_COLUMNS, [change_cells(c) for c in flagged])),
            hide_index=True,
            placeholder=MISSING,
            width="stretch",
        )
    cols = st.columns(len(FORMATS))
    for col, fmt in zip(cols, FORMATS, strict=True):
        col.download_button(
            f"Download {fmt.upper()}",
            render_monitor(result, fmt),
            file_name=f"production-monitor-{result.window}.{fmt}",
            mime=MIME[fmt],
            key=f"production_dl_{fmt}",
        )
    for scale in scales(result):
        st.altair_chart(_feedback_chart(result, scale), width="stretch")
    if any(r.latency_p50 is not None for r in result.windows):
        st.altair_chart(_latency_chart(result), width="stretch")
    st.caption(WINDOW_NOTE)
    with st.expander("Windows"):
        st.dataframe(
            dash_missing(_table(WINDOW_COLUMNS, [window_cells(r) for r in result.windows])),
            hide_index=True,
            placeholder=MISSING,
        )
    with st.expander("Every test"):
        st.dataframe(
            dash_missing(_table(CHANGE_COLUMNS, [change_cells(c) for c in result.changes])),
            hide_index=True,
            placeholder=MISSING,
        )


def _table(columns: tuple[tuple[str, str], ...], rows: list[list[object]]) -> pd.DataFrame:
    return pd.DataFrame(
        [[significant(v) if isinstance(v, float) else v for v in row] for row in rows], columns=[h for _, h in columns]
    )


def model_colour() -> alt.Color:
    """One colour per model that tells models apart (Tableau's ten, not the theme's blues and reds, where two
    models were two shades of one colour), and a legend of solid line swatches."""
    return alt.Color(
        "model:N",
        scale=alt.Scale(scheme="tableau10"),
        legend=alt.Legend(symbolType="stroke", symbolStrokeWidth=4, symbolOpacity=1),
    )


def _feedback_chart(result: MonitorResult, scale: str) -> alt.LayerChart:
    """Feedback per window and model (all scenarios) with the 95% CI as a band."""
    frame = pd.DataFrame(
        [
            {
                "window": r.window,
                "model": r.model,
                "feedback": r.mean,
                "ci_low": r.ci_low if r.ci_low is not None else r.mean,
                "ci_high": r.ci_high if r.ci_high is not None else r.mean,
                "n": r.n,
            }
            for r in result.windows
            if r.scenario is None and r.scale == scale
        ],
        columns=["window", "model", "feedback", "ci_low", "ci_high", "n"],
    )
    thumbs = scale == "thumbs"
    title = "thumbs-up rate (95% CI)" if thumbs else f"mean feedback, {scale} (95% CI)"
    number = ".1%" if thumbs else ".3~g"
    x = alt.X("window:T", title=f"window ({result.window}, UTC)")
    base = alt.Chart(frame).encode(x=x, color=model_colour())
    # The legend's swatches are solid strokes (model_colour): taken from the band, they had been its 15% opacity.
    band = base.mark_area(opacity=0.15).encode(
        y=alt.Y("ci_low:Q", title=title, scale=alt.Scale(zero=False)), y2="ci_high:Q"
    )
    tooltip = [
        alt.Tooltip("model"),
        alt.Tooltip("window"),
        alt.Tooltip("feedback", format=number),
        alt.Tooltip("ci_low", title="95% CI low", format=number),
        alt.Tooltip("ci_high", title="95% CI high", format=number),
        alt.Tooltip("n", title="events"),
    ]
    line = base.mark_line(point=True).encode(y="feedback:Q", tooltip=tooltip)
    return alt.LayerChart(layer=[band, line])


def _latency_chart(result: MonitorResult) -> alt.Chart:
    """Latency p50 (solid) and p95 (dashed) per window and model (all scenarios)."""
    seen: set[tuple[str, str]] = set()
    rows = []
    for r in result.windows:
        if r.scenario is None and (r.model, r.window) not in seen:
            seen.add((r.model, r.window))
            for name, value in (("p50", r.latency_p50), ("p95", r.latency_p95)):
                if value is not None:
                    rows.append({"window": r.window, "model": r.model, "quantile": name, "ms": value, "n": r.latency_n})
    frame = pd.DataFrame(rows, columns=["window", "model", "quantile", "ms", "n"])
    chart: alt.Chart = (
        alt.Chart(frame)
        .mark_line(point=True)
        .encode(
            x=alt.X("window:T", title=f"window ({result.window}, UTC)"),
            y=alt.Y("ms:Q", title="latency, ms (p50 solid, p95 dashed)"),
            color=model_colour(),
            strokeDash=alt.StrokeDash("quantile:N"),
            tooltip=[
                "model",
                "window",
                "quantile",
                alt.Tooltip("ms", format=".0f"),
                alt.Tooltip("n", title="with latency"),
            ],
        )
    )
    return chart
