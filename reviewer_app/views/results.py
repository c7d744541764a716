"""The lead's results page: the report, interactive, per scenario, with charts and downloads. Layout only."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import altair as alt
import pandas as pd
import streamlit as st
from streamlit.elements.lib.column_types import ColumnConfig

from reviewer_app.components.safe_text import markdown_literal
from reviewer_app.domain.report import (
    LETTERS_NOTE,
    AgreementRow,
    OverallReport,
    PairRow,
    RankingRow,
    Report,
    ScenarioReport,
    WeightSensitivityRow,
    WinRateRow,
    is_low_agreement,
    plain,
    records,
)
from reviewer_app.errors import BlindReviewError
from reviewer_app.reporting.formats import position_line, render
from reviewer_app.services.report_cache import ReportCache

if TYPE_CHECKING:
    from sqlalchemy.engine import Engine

MIME = {"json": "application/json", "csv": "text/csv", "md": "text/markdown", "html": "text/html"}
# The chart's tooltip: a ranking row's columns but the dimension (each chart is one dimension).
TOOLTIP = [c.name for c in RankingRow.COLUMNS if c.name != "dimension"]


@st.cache_resource
def _report_cache() -> ReportCache:
    """One cache of reports per server process, shared by every lead's session."""
    return ReportCache()


def _cached_report(engine: Engine, batch_id: int, rounds: int, weights: tuple[tuple[str, float], ...]) -> Report:
    """The report as of the batch's latest data: computed once per data revision, rounds and weights."""
    with st.spinner(f"Computing agreement and rankings ({rounds:,} bootstrap rounds)..."):
        return _report_cache().report(engine, batch_id, rounds=rounds, weights=dict(weights) or None)


def _ci_chart(rows: Sequence[RankingRow], title: str, higher_is_better: bool = True) -> alt.LayerChart:
    """Score and 95% CI per model, best first, coloured by tier; a lower-is-better axis runs high to low. A CI
    end the data do not bound (a model that won or lost every comparison) is drawn to the chart's edge."""
    frame = pd.DataFrame(records(rows))
    frame["tier"] = frame["tier"].astype(str)
    ends = pd.concat([frame["ci_low"], frame["ci_high"], frame["score"]]).dropna()
    lo, hi = (float(ends.min()), float(ends.max())) if len(ends) else (0.0, 1.0)
    frame["ci_low"] = frame["ci_low"].fillna(lo)
    frame["ci_high"] = frame["ci_high"].fillna(hi)
    base = alt.Chart(frame).encode(y=alt.Y("model:N", sort=list(frame["model"]), title=None))
    axis_title = "score (95% CI)" if higher_is_better else "score (95% CI), lower is better"
    bars = base.mark_rule(strokeWidth=3).encode(
        x=alt.X("ci_low:Q", title=axis_title, scale=alt.Scale(zero=False, reverse=not higher_is_better)),
        x2="ci_high:Q",
        color="tier:N",
    )
    dots = base.mark_circle(size=90).encode(x="score:Q", color="tier:N", tooltip=TOOLTIP)
    letters = base.mark_text(align="left", dx=8, dy=-8).encode(x="score:Q", text="letters:N")
    # A step per model, not a total height: Streamlit's default height="content" squashed a fixed height
    # until every model sat on one line.
    chart: alt.LayerChart = (bars + dots + letters).properties(title=title, height=alt.Step(34))
    return chart


def _winrate_chart(rows: Sequence[WinRateRow]) -> alt.LayerChart:
    frame = pd.DataFrame(records(rows))
    base = alt.Chart(frame).encode(x=alt.X("opponent:N", title="against"), y=alt.Y("model:N", title="model"))
    heat = base.mark_rect().encode(
        color=alt.Color("win_rate:Q", scale=alt.Scale(domain=[0, 1], scheme="redblue")),
        tooltip=["model", "opponent", "win_rate", "n"],
    )
    text = base.mark_text().encode(text=alt.Text("win_rate:Q", format=".0%"))
    chart: alt.LayerChart = (heat + text).properties(
        title="Win rate of row over column (ties half)", height=alt.Step(44), width=alt.Step(80)
    )
    return chart


def _downloads(report: Report) -> None:
    cols = st.columns(4)
    for col, fmt in zip(cols, ("html", "json", "csv", "md"), strict=True):
        col.download_button(
            f"Download {fmt.upper()}",
            render(report, fmt),
            file_name=f"{report.batch}-report.{fmt}",
            mime=MIME[fmt],
            width="stretch",
        )


def _sensitivity_columns() -> dict[str, str | ColumnConfig]:
    """Headings of the weight-sensitivity table, "first in" as a bar (a heading equal to the field needs none)."""
    headers = {c.name: c.header for c in WeightSensitivityRow.COLUMNS if c.header != c.name}
    config: dict[str, str | ColumnConfig] = dict(headers)
    config["share_first"] = st.column_config.ProgressColumn(
        headers["share_first"], format="percent", min_value=0, max_value=1
    )
    return config


def _low_agreement(rows: Sequence[AgreementRow]) -> list[str]:
    """The dimensions reviewers do not agree on, by the report's one rule."""
    return [r.dimension for r in rows if is_low_agreement(r.alpha, r.ci_low)]


def _pairs(pairs: Sequence[PairRow]) -> None:
    if pairs:
        with st.expander(f"Every pair ({len(pairs)}): difference, Holm-adjusted p, separated"):
            st.dataframe(pd.DataFrame(records(pairs)), hide_index=True)


def render_results(engine: Engine, batch_id: int) -> None:
    """Draw the results of batch ``batch_id``: composite, per-scenario tabs, reviewers, beside quality, methods."""
    with st.sidebar:
        rounds = st.select_slider("Bootstrap rounds", options=[200, 500, 1000, 2000], value=1000)
    try:
        first = _cached_report(engine, batch_id, rounds, ())
        scenarios = [b.scenario for b in first.scenarios]
        with st.expander("Composite weights"):
            weights = tuple(
                (
                    s,
                    float(
                        st.number_input(
                            s,
                            min_value=0.0,
                            value=float(first.overall.composite.weights.get(s, 1.0)),
                            step=0.5,
                            key=f"w-{batch_id}-{s}",
                        )
                    ),
                )
                for s in scenarios
            )
        report = _cached_report(engine, batch_id, rounds, weights)
    except BlindReviewError as exc:
        st.error(markdown_literal(str(exc)))
        return
    # Names (batch, scenarios, models, dimensions) are shown as typed: no directives, colours or remote images.
    st.subheader(f"Results: {markdown_literal(report.batch)}")
    st.caption(
        f"{report.mode} mode · {len(report.models)} models · seed {report.methods.seed} · "
        f"{report.methods.bootstrap_rounds} bootstrap rounds (for intervals only: ranks, tiers and letters do "
        "not depend on them) · model names unblinded"
    )
    _downloads(report)
    comp, ws = report.overall.composite, report.overall.weight_sensitivity
    low = _low_agreement(report.overall.agreement)
    if low:
        without = any(r.dimension == "overall_agreed" for r in report.overall.ranking)
        st.warning(
            f"Reviewers do not agree on {markdown_literal(', '.join(low))} "
            "(alpha below 0.4 or its 95% CI reaching below 0): "
            "read those rankings with care" + ("; 'overall_agreed' ranks the models without them." if without else ".")
        )
    st.info(markdown_literal(comp.summary))
    if comp.ranking:
        st.altair_chart(_ci_chart(comp.ranking, "Composite"), width="stretch")
        st.caption(LETTERS_NOTE)
        _pairs(comp.pairs)
    for note in comp.notes:
        st.caption(markdown_literal(note))
    if ws.models:
        st.caption(f"Weight sensitivity over {ws.draws} random weightings, each with a bootstrap replicate")
        st.dataframe(pd.DataFrame(records(ws.models)), hide_index=True, column_config=_sensitivity_columns())
    elif ws.note:
        st.caption(f"Weight sensitivity: {ws.note}")
    tabs = st.tabs([b.scenario for b in report.scenarios] + ["All scenarios", "Reviewers", "Beside quality", "Methods"])
    blocks: list[ScenarioReport | OverallReport] = [*report.scenarios, report.overall]
    higher = {d.name: d.higher_is_better for d in report.methods.dimensions}
    for tab, block in zip(tabs, blocks, strict=False):
        with tab:
            for line in block.summary.values():
                st.info(markdown_literal(line))
            for warning in block.warnings:
                st.warning(markdown_literal(warning))
            for dim in dict.fromkeys(r.dimension for r in block.ranking):
                rows = [r for r in block.ranking if r.dimension == dim]
                st.altair_chart(_ci_chart(rows, dim, higher.get(dim, True)), width="stretch")
            if block.ranking:
                st.caption(LETTERS_NOTE)
                st.dataframe(pd.DataFrame(records(block.ranking)), hide_index=True)
                _pairs(block.pairs)
            if block.win_rates:
                st.altair_chart(_winrate_chart(block.win_rates))
            st.markdown("**Agreement** (Krippendorff's alpha, 95% CI)")
            st.dataframe(pd.DataFrame(records(block.agreement)), hide_index=True)
    n = len(report.scenarios) + 1
    with tabs[n]:
        if report.reviewers:
            frame = pd.DataFrame(records(report.reviewers))
            frame["reasons"] = frame["reasons"].map("; ".join)
            st.dataframe(frame, hide_index=True)
    with tabs[n + 1]:
        beside = report.beside
        outputs = pd.json_normalize(records(beside.outputs))
        st.dataframe(outputs, hide_index=True)
        overall = [r for r in report.overall.ranking if r.dimension == "overall"]
        if "latency_ms.median" in outputs and overall:
            frame = pd.DataFrame(records(overall)).merge(outputs[["model", "latency_ms.median"]], on="model")
            frame = frame.rename(columns={"latency_ms.median": "latency_ms"})
            chart = alt.Chart(frame).encode(x=alt.X("latency_ms:Q", title="median latency (ms)"))
            st.altair_chart(
                chart.mark_rule().encode(
                    y=alt.Y("ci_low:Q", scale=alt.Scale(zero=False), title="overall score"), y2="ci_high:Q"
                )
                + chart.mark_circle(size=90).encode(y="score:Q", tooltip=["model", "score", "latency_ms"])
                + chart.mark_text(dx=12, align="left").encode(y="score:Q", text="model:N"),
                width="stretch",
            )
        position_text = position_line(beside)
        if position_text:
            st.markdown(markdown_literal(position_text))
        for position in (beside.position_bias, beside.position_effect):
            if position is not None:
                st.json(plain(position), expanded=False)
        if beside.stability:
            st.dataframe(pd.DataFrame(records(beside.stability)), hide_index=True)
    with tabs[n + 2]:
        for line in report.methods.definitions:
            st.markdown(f"- {line}")
        st.json(plain(report.methods.counts))
