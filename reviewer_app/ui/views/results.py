"""The lead's results page: the report, interactive, per scenario, with charts and downloads. Layout only.

The charts are ``results_charts``', the benchmark scores beside the ranking ``results_benchmarks``'; the
production tab is ``production``'s page.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Sequence
from typing import TYPE_CHECKING

import pandas as pd
import streamlit as st
from streamlit.elements.lib.column_types import ColumnConfig

from reviewer_app.batches.output_files import file_stem
from reviewer_app.domain.low_agreement import low_agreement_line
from reviewer_app.domain.report import Report, records, score_bounds
from reviewer_app.domain.report_fields import Column
from reviewer_app.domain.report_fragility import FRAGILITY_NOTE, FragilityRow
from reviewer_app.domain.report_panel import CommentGroup, OutputStats, ReviewerRow, StabilityRow, flag_lines
from reviewer_app.domain.report_rankings import (
    ALL_CHECKS,
    LETTERS_NOTE,
    STRENGTH_NOTE,
    TIES_NOTE,
    AgreementRow,
    CheckPanelRow,
    CheckRow,
    Composite,
    OverallReport,
    PairRow,
    RankingRow,
    ReliabilityRow,
    ReviewerDesignRow,
    ScenarioReport,
    TieModelRow,
    TieRow,
    WeightSensitivity,
    WeightSensitivityRow,
    both_bad_line,
)
from reviewer_app.domain.report_windows import WINDOWS_NOTE, AgreementTrend, AgreementWindow
from reviewer_app.errors import BlindReviewError
from reviewer_app.reporting.checks import NO_DIFFERENCE, PANEL_NOTE, as_ranking_rows, check_sentences
from reviewer_app.reporting.checks import NOTE as CHECKS_NOTE
from reviewer_app.reporting.comments import EMPTY, counts_line, group_title, intro, list_heading, when
from reviewer_app.reporting.formats import (
    DESIGN_NOTE,
    PAIRS_NOTE,
    RELIABILITY_NOTE,
    position_line,
    render,
    significant,
)
from reviewer_app.reporting.verdict import before_acting, verdicts
from reviewer_app.results.report_cache import ReportCache
from reviewer_app.ui.components.safe_text import markdown_literal
from reviewer_app.ui.views.results_adjudication import render_adjudication
from reviewer_app.ui.views.results_benchmarks import benchmark_report, benchmark_sections, benchmarks_upload
from reviewer_app.ui.views.results_charts import ci_chart, latency_chart, winrate_chart
from reviewer_app.ui.views.results_judge import render_judge
from reviewer_app.ui.views.results_style import render_style, style_verdict_lines
from reviewer_app.ui.views.results_tables import report_table as _table

if TYPE_CHECKING:
    from sqlalchemy.engine import Engine


MIME = {"json": "application/json", "csv": "text/csv", "md": "text/markdown", "html": "text/html"}

POSITION_COLUMNS = (  # rating mode: score against queue position, by position bin
    Column("position_from", "from position"),
    Column("position_to", "to position"),
    Column("mean_score_vs_model", "score minus the model's mean (0-1 scale)"),
    Column("n", "ratings"),
)


@st.cache_resource
def _report_cache() -> ReportCache:
    """One cache of reports per server process, shared by every lead's session."""
    return ReportCache()


def _cached_report(
    engine: Engine, batch_id: int, rounds: int, weights: tuple[tuple[str, float], ...], adjudicated: bool
) -> Report:
    """The report as of the batch's latest data: computed once per data revision, rounds, weights and whether
    it ranks with the rulings."""
    with st.spinner(f"Computing agreement and rankings ({rounds:,} bootstrap rounds)..."):
        return _report_cache().report(
            engine, batch_id, rounds=rounds, weights=dict(weights) or None, adjudicated=adjudicated
        )


def _downloads(report: Report) -> None:
    cols = st.columns(4)
    for col, fmt in zip(cols, ("html", "json", "csv", "md"), strict=True):
        col.download_button(
            f"Download {fmt.upper()}",
            functools.partial(render, report, fmt),  # rendered when clicked, not on every run of the page
            file_name=f"{file_stem(report.batch)}-report.{fmt}",
            mime=MIME[fmt],
            width="stretch",
        )


def _sensitivity_table(rows: Sequence[WeightSensitivityRow]) -> tuple[pd.DataFrame, dict[str, str | ColumnConfig]]:
    """The weight-sensitivity table under its headings, each share (weights alone, noise alone, both) as a bar
    (so kept a number, not "40%")."""
    headers = {c.name: c.header for c in WeightSensitivityRow.COLUMNS}
    frame = pd.DataFrame(records(rows)).rename(columns=headers)
    config: dict[str, str | ColumnConfig] = {}
    for name in ("share_first", "p_best", "share_first_with_noise"):
        column = headers[name]
        frame[column] = frame[column].map(lambda v: significant(v) if pd.notna(v) else None)
        config[column] = st.column_config.ProgressColumn(column, format="percent", min_value=0, max_value=1)
    return frame, config


def _headline(
    rows: Sequence[AgreementRow], overall: Sequence[RankingRow], reliability: Sequence[ReliabilityRow] = ()
) -> str | None:
    """Low agreement across scenarios with the numbers and the reliability of the models' means, shown before
    any ranking sentence (None: they agree)."""
    line = low_agreement_line(rows, reliability, headline=True)
    if line is None:
        return None
    without = any(r.dimension == "overall_agreed" for r in overall)
    return line + (" 'overall_agreed' ranks the models without them." if without else "")


def _pairs(pairs: Sequence[PairRow]) -> None:
    if pairs:
        with st.expander(f"Every pair ({len(pairs)}): difference, Holm-adjusted p, separated"):
            st.dataframe(_table(PairRow.COLUMNS, pairs), hide_index=True)
            st.caption(PAIRS_NOTE)


def _reviewers(rows: Sequence[ReviewerRow]) -> None:
    """The reviewer diagnostics, then each flagged reviewer's reasons in full (wrapped, never scrolled)."""
    st.dataframe(_table(ReviewerRow.COLUMNS, rows, drop_empty=True), hide_index=True)  # no gold items: no gold columns
    flags = flag_lines(rows)
    if flags:
        st.markdown("**Flagged reviewers**")
        st.markdown("\n".join(f"- {markdown_literal(name)}: {markdown_literal(why)}" for name, why in flags))


def _fragility(rows: Sequence[FragilityRow]) -> None:
    """How fragile the scenario's verdicts are: a sentence each (fragile ones as warnings), then the table."""
    if not rows:
        return
    st.markdown("**How fragile the verdicts are** (the fewest samples or reviewers whose removal undoes each)")
    for row in rows:
        (st.warning if row.fragile else st.caption)(markdown_literal(row.sentence))
    st.dataframe(_table(FragilityRow.COLUMNS, rows), hide_index=True)
    st.caption(markdown_literal(FRAGILITY_NOTE))


def _trends(trends: Sequence[AgreementTrend]) -> None:
    """Agreement over time: a sentence per scenario (flagged ones as warnings) and its windows."""
    st.markdown("**Agreement over time** (alpha per window of completed samples, 95% CI)")
    for trend in trends:
        (st.warning if trend.flagged else st.info)(markdown_literal(trend.sentence))
        st.dataframe(_table(AgreementWindow.COLUMNS, trend.windows), hide_index=True)
    st.caption(markdown_literal(WINDOWS_NOTE))


def _checks(rows: Sequence[CheckRow], panel: Sequence[CheckPanelRow]) -> None:
    """A scenario's automatic checks: who passes less often first, a pass-rate chart per check, the tables."""
    st.markdown("**Automatic checks** (pass rate, 95% CI)")
    for line in check_sentences(rows):
        (st.info if NO_DIFFERENCE in line else st.warning)(markdown_literal(line))
    for name in dict.fromkeys(r.check for r in rows):
        part = as_ranking_rows([r for r in rows if r.check == name])
        title = "all checks" if name == ALL_CHECKS else f"check {name}"
        st.altair_chart(ci_chart(part, f"{title}: pass rate", True, (0.0, 1.0)), width="stretch")
    st.caption(CHECKS_NOTE)
    st.dataframe(_table(CheckRow.COLUMNS, rows), hide_index=True)
    if panel:
        st.caption(PANEL_NOTE)
        st.dataframe(_table(CheckPanelRow.COLUMNS, panel), hide_index=True)


def render_results(engine: Engine, batch_id: int) -> None:
    """Draw the results of batch ``batch_id``: composite, per-scenario tabs, reviewers, beside quality, methods."""
    with st.sidebar:
        rounds = st.select_slider("Bootstrap rounds", options=[200, 500, 1000, 2000], value=1000)
        adjudicated = st.toggle(
            "Rank with adjudicators' rulings",
            key=f"adjudicated-{batch_id}",
            help="Off: the panel as it answered (the default report). On: each disputed item that has a ruling "
            "counts as the ruling; the report says so. Agreement always describes the panel.",
        )
        scores = benchmarks_upload(batch_id)
    top = st.container()  # the heading and the verdict, drawn once the report (which the weights below set) is in
    try:
        first = _cached_report(engine, batch_id, rounds, (), adjudicated)
        scenarios = [b.scenario for b in first.scenarios]
        with st.expander("Composite weights", icon=":material/tune:"):
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
        report = _cached_report(engine, batch_id, rounds, weights, adjudicated)
        if scores is not None:
            digest = hashlib.sha256(repr((scores.scores, scores.higher_is_better, scores.margin)).encode()).hexdigest()
            base = (report.generated_at, report.methods.counts.ratings)
            report = benchmark_report(engine, batch_id, rounds, weights, digest, base, scores, adjudicated)
    except BlindReviewError as exc:
        st.error(markdown_literal(str(exc)))
        return
    with top:
        # Names (batch, scenarios, models, dimensions) are shown as typed: no directives, colours or remote images.
        st.subheader(f"Results: {markdown_literal(report.batch)}")
        st.caption(
            f"{report.mode} mode · {len(report.models)} models · seed {report.methods.seed} · "
            f"{report.methods.bootstrap_rounds} bootstrap rounds (for intervals only: ranks, tiers and letters do "
            "not depend on them) · model names unblinded"
        )
        headline = _headline(report.overall.agreement, report.overall.ranking, report.overall.reliability)
        if headline:  # before any ranking sentence
            st.warning(markdown_literal(headline))
        _verdict(report)
        _downloads(report)
    _details(engine, report, batch_id)


def _verdict(report: Report) -> None:
    """Per scenario (and the composite) one line to read aloud: who leads, who is tied, how sure, what to look
    at; the details are in the tabs below."""
    st.markdown("#### Verdict")
    for v in verdicts(report):
        where = markdown_literal(v.where) + ("" if v.samples is None else f" ({v.samples} samples)")
        icon = ":material/check_circle:" if v.settled else ":material/balance:"
        look = f"  \n:material/visibility: Look at: {markdown_literal('; '.join(v.look_at))}" if v.look_at else ""
        with st.container(border=True):
            st.markdown(f"**{where}**: {markdown_literal(v.standing)}.  \n{icon} {markdown_literal(v.sureness)}.{look}")
    for line in before_acting(report):
        st.caption(f"Before acting on it: {markdown_literal(line)}.")
    if report.anytime:
        icons = {
            "settled": ":material/task_alt:",
            "more_samples": ":material/hourglass_top:",
            "not_settling": ":material/block:",
        }
        lines = [f"{icons[a.state]} {markdown_literal(a.sentence)}" for a in report.anytime]
        st.caption("**Anytime-valid** (stays valid however often you look):  \n" + "  \n".join(lines))
    fragile = [r for r in report.fragility or () if r.fragile]
    shown = [r for r in fragile if r.claim == "top"] or fragile[:1]  # the verdict's own lines; the rest in the tabs
    for row in shown:
        st.warning(f":material/warning: {markdown_literal(row.sentence)}")
    if len(fragile) > len(shown):
        st.caption(f"{len(fragile) - len(shown)} more fragile verdict(s): each scenario's tab lists them.")
    for trend in report.agreement_trends or ():
        if trend.flagged:
            st.warning(f":material/trending_down: {markdown_literal(trend.sentence)} (the Reviewers tab)")
    for line in style_verdict_lines(report.style or ()):
        st.warning(f":material/format_size: **Style control**: {markdown_literal(line)} (the Style control tab)")
    adjudication = report.adjudication
    if adjudication is not None:
        line = f":material/gavel: **Adjudication**: {markdown_literal(adjudication.summary)} See the Adjudication tab."
        (st.warning if adjudication.used and adjudication.ruled else st.caption)(line)


def _details(engine: Engine, report: Report, batch_id: int) -> None:
    """The details, one tab at a time: only the open tab is computed and drawn (``on_change="rerun"``), so a
    revisit draws the verdict and one tab, not every chart, table and the production monitor."""
    comp, ws = report.overall.composite, report.overall.weight_sensitivity
    comments = f"Comments ({sum(g.n_cant_judge + g.n_commented for g in report.comments):,})"
    scenario_labels = [markdown_literal(b.scenario) for b in report.scenarios]
    judge = ["Judge vs panel"] if report.judge is not None else []
    style = ["Style control"] if report.style else []
    adjudication = ["Adjudication"] if report.adjudication is not None else []
    labels = ["Composite", *scenario_labels, "All scenarios", "Reviewers", "Beside quality", "Methods", comments,
              "Production", *judge, *style, *adjudication]  # fmt: skip
    tabs = st.tabs(labels, key=f"results-tab-{batch_id}", on_change="rerun")
    if report.adjudication is not None:
        adjudication_tab, tabs = tabs[-1], tabs[:-1]
        with adjudication_tab:
            if adjudication_tab.open:
                render_adjudication(report.adjudication)
    if report.style:
        style_tab, tabs = tabs[-1], tabs[:-1]
        with style_tab:
            if style_tab.open:
                render_style(report.style)
    if report.judge is not None:
        judge_tab, tabs = tabs[-1], tabs[:-1]
        with judge_tab:
            if judge_tab.open:
                render_judge(report.judge)
    composite_tab, rest = tabs[0], tabs[1:]
    with composite_tab:
        if composite_tab.open:
            _composite(report, comp, ws)
    blocks: list[ScenarioReport | OverallReport] = [*report.scenarios, report.overall]
    higher = {d.name: d.higher_is_better for d in report.methods.dimensions}
    for tab, block in zip(rest, blocks, strict=False):
        with tab:
            if tab.open:
                _block(report, block, higher)
    n = len(report.scenarios) + 1
    with rest[n] as tab:
        if tab.open and report.reviewers:
            _reviewers(report.reviewers)
        if tab.open and report.agreement_trends:
            _trends(report.agreement_trends)
    with rest[n + 1] as tab:
        if tab.open:
            _beside(report)
    with rest[n + 2] as tab:
        if tab.open:
            for line in report.methods.definitions:
                st.markdown(f"- {line}")
            c = report.methods.counts
            st.markdown(
                f"{c.ratings} ratings of {c.items} items by {c.reviewers} reviewers ({c.gold_ratings} gold and "
                f"{c.repeat_ratings} repeat ratings used only for diagnostics)."
            )
    with rest[-2] as tab:
        if tab.open:
            _comments(report.comments)
    with rest[-1] as tab:
        if tab.open:
            _production(engine, report)


def _composite(report: Report, comp: Composite, ws: WeightSensitivity) -> None:
    st.info(markdown_literal(comp.summary))
    if comp.ranking:
        st.altair_chart(ci_chart(comp.ranking, "Composite", bounds=score_bounds(report, "composite")), width="stretch")
        st.caption(LETTERS_NOTE)
        _pairs(comp.pairs)
    for note in comp.notes:
        st.caption(markdown_literal(note))
    if ws.models:
        st.caption(f"Weight sensitivity over {ws.draws} random weightings of the scenarios")
        for line in ws.summary:
            st.markdown(f"- {markdown_literal(line)}")
        frame, config = _sensitivity_table(ws.models)
        st.dataframe(frame, hide_index=True, column_config=config)
    elif ws.note:
        st.caption(f"Weight sensitivity: {ws.note}")


def _ties(rows: Sequence[TieRow], models: Sequence[TieModelRow]) -> None:
    """Pairwise: how often each model's comparisons ended without a winner or both bad, and the tie model."""
    st.markdown("**Ties and both bad** (share of each model's comparisons, 95% CI; Davidson's tie model)")
    for row in rows:
        line = both_bad_line(row) if row.dimension == "overall" else None
        if line:
            st.markdown(f"- {markdown_literal(line)}")
    st.dataframe(_table(TieRow.COLUMNS, rows), hide_index=True)
    if models:
        st.dataframe(_table(TieModelRow.COLUMNS, models), hide_index=True)
    st.caption(TIES_NOTE)


def _block(report: Report, block: ScenarioReport | OverallReport, higher: dict[str, bool]) -> None:
    """A scenario's tab (or "All scenarios"): cautions first, the ranking sentences, a chart per dimension, the
    table (rank, tier and letters beside the model, in view on a phone), benchmarks, checks, agreement."""
    for warning in block.warnings:  # cautions (low agreement first) before the ranking sentences
        st.warning(markdown_literal(warning))
    for line in block.summary.values():
        st.info(markdown_literal(line))
    for dim in dict.fromkeys(r.dimension for r in block.ranking):
        rows = [r for r in block.ranking if r.dimension == dim]
        chart = ci_chart(rows, dim, higher.get(dim, True), score_bounds(report, dim))
        st.altair_chart(chart, width="stretch")
    if block.ranking:
        st.caption(LETTERS_NOTE)
        frame = _table(RankingRow.COLUMNS, block.ranking)
        st.dataframe(
            frame[_model_first([str(c) for c in frame.columns])],
            hide_index=True,
            column_config={"model": st.column_config.TextColumn(pinned=True)},
        )
        if any(r.win_vs_average is not None for r in block.ranking):
            st.caption(STRENGTH_NOTE)
        _pairs(block.pairs)
    if isinstance(block, ScenarioReport):
        _fragility([r for r in report.fragility or () if r.scenario == block.scenario])
    if block.win_rates:
        st.altair_chart(winrate_chart(block.win_rates))
    if block.ties:
        _ties(block.ties, block.tie_model or ())
    benchmark_sections(block.benchmarks, block.scenario if isinstance(block, ScenarioReport) else None)
    if isinstance(block, ScenarioReport) and block.checks:
        _checks(block.checks, block.checks_vs_panel or ())
    st.markdown("**Agreement** (Krippendorff's alpha, 95% CI)")
    st.dataframe(_table(AgreementRow.COLUMNS, block.agreement), hide_index=True)
    if block.reliability:
        st.markdown("**Reliability of the models' means** (split-half, 95% bootstrap CI)")
        st.dataframe(_table(ReliabilityRow.COLUMNS, block.reliability), hide_index=True)
        st.caption(RELIABILITY_NOTE)
    if block.reviewer_design:
        st.markdown("**Reviewers did not rate the models evenly** (scores adjusted for each reviewer's leniency)")
        st.dataframe(_table(ReviewerDesignRow.COLUMNS, block.reviewer_design), hide_index=True)
        st.caption(DESIGN_NOTE)


def _model_first(columns: Sequence[str]) -> list[str]:
    """A ranking table's columns for the page: the model, then its letters, rank and tier, then the rest (the
    downloads keep the report's order). On a phone the first columns are what stays in view."""
    first = [c for c in ("model", "letters", "rank", "tier") if c in columns]
    return first + [c for c in columns if c not in first]


def _beside(report: Report) -> None:
    beside = report.beside
    st.dataframe(_table(OutputStats.COLUMNS, beside.outputs, drop_empty=True), hide_index=True)
    latency = latency_chart(report)
    if latency is not None:
        st.altair_chart(latency, width="stretch")
    position_text = position_line(beside)
    if position_text:
        st.markdown(markdown_literal(position_text))
    if beside.position_effect is not None and beside.position_effect.bins:
        st.dataframe(_table(POSITION_COLUMNS, beside.position_effect.bins), hide_index=True)
    if beside.stability:
        st.dataframe(_table(StabilityRow.COLUMNS, beside.stability), hide_index=True)


def _production(engine: Engine, report: Report) -> None:
    """Whether production agrees with the panel (disagreements as warnings), then the production monitor
    of the batch's models."""
    from reviewer_app.ui.views.production import render_production  # lead-only, as the other lead pages

    if report.production is not None:
        for pair in report.production.pairs:
            (st.warning if pair.agreement == "disagree" else st.info)(markdown_literal(pair.sentence))
        for note in report.production.notes:
            st.caption(markdown_literal(note))
    render_production(engine, models=list(report.models))


def _comments(groups: Sequence[CommentGroup]) -> None:
    """Reviewers' comments and can't-judge reasons per scenario and model: the counts in each folded
    heading, the latest answers of each kind as tables (cells show the text as typed, nothing rendered)."""
    if not groups:
        st.caption(EMPTY)
        return
    st.caption(f"{intro()} The raw export above has all of them (columns comment and cant_judge_reason).")
    for g in groups:
        with st.expander(markdown_literal(f"{group_title(g)}: {counts_line(g)}")):
            for kind, rows, total, reasons in (
                ("Can't judge", g.cant_judge, g.n_cant_judge, True),
                ("Comments", g.commented, g.n_commented, False),
            ):
                if not total:
                    continue
                st.markdown(f"**{markdown_literal(list_heading(kind, len(rows), total))}**")
                table = {
                    "sample": [r.sample_id for r in rows],
                    "reviewer": [r.reviewer for r in rows],
                    "submitted (UTC)": [when(r) for r in rows],
                }
                if reasons:
                    table["reason"] = [r.cant_judge_reason or "" for r in rows]
                table["comment"] = [r.comment or "" for r in rows]
                st.dataframe(pd.DataFrame(table), hide_index=True, width="stretch")
