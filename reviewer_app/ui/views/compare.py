"""The lead's "Compare versions" page: pick a baseline and a candidate batch, read the verdicts first, then the
differences per scenario with their intervals, then behaviour drift; download in every format. Layout only:
the work is ``services.compare_batches``, the words and tables ``reporting.compare``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import altair as alt
import pandas as pd
import streamlit as st

from reviewer_app.batches.catalog import batch_list
from reviewer_app.batches.output_files import file_stem
from reviewer_app.domain.enums import Role
from reviewer_app.domain.versions import VersionComparison
from reviewer_app.domain.views import Person
from reviewer_app.errors import BlindReviewError, ValidationError
from reviewer_app.people.people import require
from reviewer_app.reporting.compare import (
    DRIFT_COLUMNS,
    DRIFT_NOTE,
    FORMATS,
    REGRESSION_COLUMNS,
    VERDICT_COLOURS,
    VERDICT_COLUMNS,
    by_verdict,
    charts_by_dimension,
    drift_rows_of,
    headline,
    lead_notes,
    render_comparison,
)
from reviewer_app.reporting.formats import significant
from reviewer_app.ui.components.safe_text import markdown_literal
from reviewer_app.ui.components.tables import MISSING, dash_missing
from reviewer_app.versions.batch_compare import SAMPLES_NOTE, VERDICT_NOTE, compare_batches, default_pair

if TYPE_CHECKING:
    from sqlalchemy.engine import Engine

    from reviewer_app.domain.versions import CompareRow

MIME = {"json": "application/json", "csv": "text/csv", "md": "text/markdown", "html": "text/html"}
RESULT_KEY = "compare_result"
MATCH_LABEL = "Renamed versions (one OLD=NEW a line)"
LABELS = {"match": MATCH_LABEL, "tolerance": "Tolerance (points)", "tolerance_share": "Tolerance (overall, win rates)"}


def render(engine: Engine, person: Person) -> None:
    require(person, Role.LEAD)
    st.title("Compare versions")
    st.caption(
        "Did a new version regress? Per scenario, dimension and model: the paired difference on the samples both "
        "batches share, corrected for the panel's shift where the candidate has anchors, and a verdict. Scores "
        "are over the shared samples, so a baseline score can differ from its own report's. Model names are "
        "unblinded."
    )
    batches = batch_list(engine)
    names = [b.name for b in batches]
    if len(names) < 2:
        st.info("Comparing needs two batches: load the new version's outputs as a batch of their own first.")
        return
    with st.form("compare"):
        left, right = st.columns(2)
        # The newest follow-up against the batch it follows up (else the two newest batches).
        start, newest = default_pair(batches)
        baseline = left.selectbox("Baseline batch", names, index=start, key="compare_baseline")
        candidate = right.selectbox("Candidate batch", names, index=newest, key="compare_candidate")
        match = st.text_area(MATCH_LABEL, key="compare_match", help="e.g. gpt-x=gpt-x-2; other models pair by name")
        a, b = st.columns(2)
        tolerance = a.number_input(LABELS["tolerance"], min_value=0.0, value=0.25, step=0.05, key="compare_tol")
        share = b.number_input(LABELS["tolerance_share"], min_value=0.0, value=0.05, step=0.01, key="compare_share")
        go = st.form_submit_button("Compare", type="primary")
    if go:
        try:
            with st.spinner("Comparing (1,000 bootstrap rounds)..."):
                st.session_state[RESULT_KEY] = compare_batches(
                    engine,
                    str(baseline),
                    str(candidate),
                    match=[line for line in (match or "").splitlines() if line.strip()],
                    tolerance=float(tolerance),
                    tolerance_share=float(share),
                )
        except ValidationError as exc:
            st.session_state.pop(RESULT_KEY, None)
            st.error(markdown_literal(exc.worded(lambda field: LABELS.get(field, field))))
            return
        except BlindReviewError as exc:
            st.session_state.pop(RESULT_KEY, None)
            st.error(markdown_literal(str(exc)))
            return
    result = st.session_state.get(RESULT_KEY)
    if isinstance(result, VersionComparison):
        show(result)


def show(result: VersionComparison) -> None:
    """The comparison: notes and headline, downloads, verdict table, charts, drift."""
    st.subheader(markdown_literal(f"{result.candidate} against {result.baseline}"))
    st.info(markdown_literal(headline(result)))
    for note in lead_notes(result):  # how to read the numbers is a caption; what limits them a warning
        (st.caption if note in (VERDICT_NOTE, SAMPLES_NOTE) else st.warning)(markdown_literal(note))
    cols = st.columns(len(FORMATS))
    for col, fmt in zip(cols, FORMATS, strict=True):
        col.download_button(
            f"Download {fmt.upper()}",
            render_comparison(result, fmt),
            file_name=f"{file_stem(result.baseline, result.candidate)}.{fmt}",
            mime=MIME[fmt],
            key=f"compare_dl_{fmt}",
        )
    st.markdown("##### Verdicts")
    rows = by_verdict(result.comparison.rows)
    if rows:
        regressions = [r for r in rows if r.verdict == "regression"]
        if regressions:  # what a lead must act on, before the rest
            st.warning(
                f"**{len(regressions)} regression{'s' if len(regressions) > 1 else ''}** of {len(rows)} comparisons"
            )
            st.dataframe(
                dash_missing(_frame(regressions, REGRESSION_COLUMNS)),
                hide_index=True,
                placeholder=MISSING,
                width="stretch",
            )
        else:
            st.success(f"No regression among {len(rows)} comparisons.")
        with st.expander(
            f"Every verdict ({len(rows)}, regressions first, then improvements)", expanded=not regressions
        ):
            st.dataframe(
                dash_missing(_frame(rows, VERDICT_COLUMNS)), hide_index=True, placeholder=MISSING, width="stretch"
            )
        st.markdown("##### Differences per scenario (corrected, 95% bootstrap CI; shaded: ±tolerance)")
        for dim, rows in charts_by_dimension(result):
            st.altair_chart(_diff_chart(rows, dim), width="stretch")
    else:
        st.caption("No verdicts yet: see the notes above.")
    st.markdown("##### Behaviour drift")
    st.caption(DRIFT_NOTE)
    if result.drift:
        st.dataframe(
            dash_missing(_frame(drift_rows_of(result), DRIFT_COLUMNS)),
            hide_index=True,
            placeholder=MISSING,
            width="stretch",
        )


def _frame(rows: Sequence[object], columns: Sequence[tuple[str, str]]) -> pd.DataFrame:
    """Rows under their headings, numbers to 2-3 significant digits (still numbers, so they sort)."""

    def cell(value: object) -> object:
        return significant(value) if isinstance(value, float) else value

    return pd.DataFrame([[cell(getattr(r, f)) for f, _ in columns] for r in rows], columns=[h for _, h in columns])


def _diff_chart(rows: Sequence[CompareRow], dimension: str) -> alt.LayerChart:
    """Corrected difference (dot, coloured by verdict) with its bootstrap 95% CI per scenario and model pair,
    zero and the ±tolerance band."""
    frame = pd.DataFrame(
        {
            "row": [
                f"{r.scenario} · {r.model}" + ("" if r.model == r.baseline_model else f" vs {r.baseline_model}")
                for r in rows
            ],  # fmt: skip
            "corrected": [r.corrected for r in rows],
            "ci_low": [r.ci_low if r.ci_low is not None else r.corrected for r in rows],
            "ci_high": [r.ci_high if r.ci_high is not None else r.corrected for r in rows],
            "verdict": [r.verdict for r in rows],
            "n": [r.n for r in rows],
        }
    ).dropna(subset=["corrected"])
    tol = max((r.tolerance for r in rows), default=0.0)
    title = f"{dimension}: candidate - baseline ({rows[0].unit})"
    if rows and not rows[0].higher_is_better:
        title += ", lower is better"
    # On a phone a legend beside the chart and one-line labels left the plot a third of the width and cut
    # the labels ("support · cirrus-..."): the legend goes below, each label on two lines (scenario, models).
    colour = alt.Color(
        "verdict:N",
        scale=alt.Scale(domain=list(VERDICT_COLOURS), range=list(VERDICT_COLOURS.values())),
        legend=alt.Legend(orient="bottom", columns=2),
    )
    y = alt.Y(
        "row:N",
        sort=list(frame["row"]),
        title=None,
        axis=alt.Axis(labelExpr="split(datum.label, ' · ')", labelOverlap=False, labelBaseline="middle"),
    )
    band = (
        alt.Chart(pd.DataFrame({"low": [-tol], "high": [tol]}))
        .mark_rect(opacity=0.15, color="#2a9d8f")
        .encode(x="low:Q", x2="high:Q")
    )
    zero = alt.Chart(pd.DataFrame({"x": [0.0]})).mark_rule(color="#999").encode(x="x:Q")
    base = alt.Chart(frame).encode(y=y)
    tooltip = [
        alt.Tooltip("row", title="scenario · model"),
        alt.Tooltip("verdict"),
        alt.Tooltip("corrected", format=".3~g"),
        alt.Tooltip("ci_low", title="95% CI low", format=".3~g"),
        alt.Tooltip("ci_high", title="95% CI high", format=".3~g"),
        alt.Tooltip("n", title="samples"),
    ]
    whiskers = base.mark_rule(strokeWidth=3).encode(x=alt.X("ci_low:Q", title=title), x2="ci_high:Q", color=colour)
    dots = base.mark_circle(size=90).encode(x="corrected:Q", color=colour, tooltip=tooltip)
    return alt.LayerChart(layer=[band, zero, whiskers, dots]).properties(height=alt.Step(34))  # two-line labels
