"""The lead's results page: the report, interactive, per scenario, with charts and downloads. Layout only."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import TYPE_CHECKING

import altair as alt
import pandas as pd
import streamlit as st
from streamlit.elements.lib.column_types import ColumnConfig

from reviewer_app.batches.output_files import file_stem
from reviewer_app.domain.benchmarks import DEFAULT_MARGIN, BenchmarkScores, BenchmarkSection
from reviewer_app.domain.report import (
    ALL_CHECKS,
    LETTERS_NOTE,
    STRENGTH_NOTE,
    AgreementRow,
    CheckPanelRow,
    CheckRow,
    Column,
    CommentGroup,
    OutputStats,
    OverallReport,
    PairRow,
    RankingRow,
    Report,
    ReviewerRow,
    ScenarioReport,
    StabilityRow,
    WeightSensitivityRow,
    WinRateRow,
    flag_lines,
    low_agreement_line,
    records,
    score_bounds,
    shown_columns,
)
from reviewer_app.errors import BlindReviewError, ValidationError
from reviewer_app.reporting.benchmarks import TITLE as BENCHMARKS_TITLE
from reviewer_app.reporting.benchmarks import rho_line, where
from reviewer_app.reporting.checks import NO_DIFFERENCE, PANEL_NOTE, as_ranking_rows, check_sentences
from reviewer_app.reporting.checks import NOTE as CHECKS_NOTE
from reviewer_app.reporting.comments import EMPTY, counts_line, group_title, intro, list_heading, when
from reviewer_app.reporting.formats import position_line, render, significant
from reviewer_app.reporting.html import tier_colour
from reviewer_app.results.batch_reports import batch_report
from reviewer_app.results.benchmark_scores import parse_benchmark_scores
from reviewer_app.results.report_cache import ReportCache
from reviewer_app.ui.components.safe_text import markdown_literal

if TYPE_CHECKING:
    from sqlalchemy.engine import Engine

MIME = {"json": "application/json", "csv": "text/csv", "md": "text/markdown", "html": "text/html"}
# The chart's tooltip: a ranking row's columns but the dimension (each chart is one dimension), under their
# headings, numbers to 3 significant digits.
NUMBERS = {"score", "ci_low", "ci_high", "ci_mc_se"}
TOOLTIP = [
    alt.Tooltip(c.name, title=c.header, format=".3~g") if c.name in NUMBERS else alt.Tooltip(c.name, title=c.header)
    for c in RankingRow.COLUMNS
    if c.name not in ("dimension", "win_vs_average")
]
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


def _cached_report(engine: Engine, batch_id: int, rounds: int, weights: tuple[tuple[str, float], ...]) -> Report:
    """The report as of the batch's latest data: computed once per data revision, rounds and weights."""
    with st.spinner(f"Computing agreement and rankings ({rounds:,} bootstrap rounds)..."):
        return _report_cache().report(engine, batch_id, rounds=rounds, weights=dict(weights) or None)


@st.cache_resource(max_entries=4, show_spinner=False)
def _benchmark_report(
    _engine: Engine,
    batch_id: int,
    rounds: int,
    weights: tuple[tuple[str, float], ...],
    scores_digest: str,
    base_key: tuple[str, int],
    _scores: BenchmarkScores,
) -> Report:
    """The report with the uploaded benchmark scores beside it, computed once per upload (``scores_digest``),
    rounds, weights and the batch's data (``base_key``: when and from how many ratings the cached report was
    built, so a new rating gives a new key)."""
    with st.spinner("Putting the benchmark scores beside the rankings..."):
        return batch_report(
            _engine, batch_id=batch_id, rounds=rounds, weights=dict(weights) or None, benchmarks=_scores
        )


BENCHMARK_CSV_MAX_CHARS = 200_000  # a few thousand rows: far more than any leaderboard has models and benchmarks


def _benchmarks_upload(batch_id: int) -> BenchmarkScores | None:
    """The sidebar's benchmark scores, pasted as CSV text: the scores read from it, None without any (or with
    an error, shown in the sidebar with its lines). Pasted, not uploaded: only admins get an upload widget (a
    page with one accepts files from its session), and a scores table is a few lines."""
    pasted = st.text_area(
        "Public benchmark scores (CSV: model,benchmark,score)",
        key=f"benchmarks-{batch_id}",
        max_chars=BENCHMARK_CSV_MAX_CHARS,
        placeholder="model,benchmark,score\nmodel-a,MMLU,71.2\nmodel-b,MMLU,70.4",
        help="One row per model and benchmark; scores in the benchmark's own units, higher is better unless a "
        "higher_is_better column says false. Each scenario's tab then shows the benchmark beside the blind ranking.",
    )
    margin = st.number_input(
        "Benchmark margin (points)",
        min_value=0.0,
        value=DEFAULT_MARGIN,
        step=0.5,
        key=f"benchmark-margin-{batch_id}",
        help="Pairs a benchmark separates by this many of its points or less get a sentence.",
    )
    if not pasted.strip():
        return None
    try:
        return parse_benchmark_scores(pasted.encode(), source="the pasted scores", margin=float(margin))
    except ValidationError as exc:  # the CLI's wording says "run the command again": here, fix the text
        problems = "; ".join(str(p) for p in exc.problems)
        st.error(markdown_literal(f"The benchmark scores are not used (fix them above): {problems}"))
        return None


def _benchmark_chart(section: BenchmarkSection, title: str) -> alt.LayerChart | None:
    """Benchmark score against blind overall score, one point per model with its 95% CI, coloured by tier; a
    lower-is-better benchmark's axis runs high to low (better is right)."""
    shown = [m for m in section.models if m.benchmark_score is not None and m.blind_score is not None]
    if not shown:
        return None
    frame = pd.DataFrame(records(shown))
    frame["tier"] = frame["tier"].astype(str)
    colour = _tier_colours([m.tier or 1 for m in shown])
    x_title = f"{section.benchmark} score" + ("" if section.higher_is_better else " (lower is better)")
    x = alt.X("benchmark_score:Q", title=x_title, scale=alt.Scale(zero=False, reverse=not section.higher_is_better))
    base = alt.Chart(frame).encode(x=x)
    tooltip = [
        alt.Tooltip("model"),
        alt.Tooltip("benchmark_score", title="benchmark score", format=".3~g"),
        alt.Tooltip("blind_score", title="blind score", format=".3~g"),
        alt.Tooltip("blind_rank", title="blind rank"),
    ]
    chart: alt.LayerChart = (
        base.mark_rule(strokeWidth=3).encode(
            y=alt.Y("blind_ci_low:Q", title="blind overall score (95% CI)", scale=alt.Scale(zero=False)),
            y2="blind_ci_high:Q",
            color=colour,
        )
        + base.mark_circle(size=90).encode(y="blind_score:Q", color=colour, tooltip=tooltip)
        + base.mark_text(dx=8, dy=-8, align="left").encode(y="blind_score:Q", text="model:N")
    ).properties(title=title)
    return chart


def _benchmark_sections(sections: Sequence[BenchmarkSection] | None, scenario: str | None) -> None:
    """Each benchmark beside the ranking: the sentences first, then rho, the chart and the two orders."""
    if sections is None:
        return
    st.markdown(f"**{BENCHMARKS_TITLE}**")
    for s in sections:
        st.markdown(f"**{markdown_literal(s.benchmark)}**")
        for line, pair in zip(s.disagreements, s.pairs, strict=True):
            if pair.verdict == "reversed":
                st.warning(markdown_literal(line))
            else:
                st.info(markdown_literal(line))
        st.caption(markdown_literal(rho_line(s, where(scenario))))
        chart = _benchmark_chart(s, f"{s.benchmark} score against blind score")
        if chart is not None:
            st.altair_chart(chart, width="stretch")
        frame = pd.DataFrame(records(s.models))
        for name in ("benchmark_rank", "blind_rank", "tier"):
            frame[name] = frame[name].astype("Int64")  # whole numbers, blank where missing
        for name in ("benchmark_score", "blind_score", "blind_ci_low", "blind_ci_high"):
            frame[name] = frame[name].map(lambda v: None if v is None or v != v else significant(float(v)))
        headers = {
            "model": "model",
            "benchmark_rank": "benchmark rank",
            "benchmark_score": "benchmark score",
            "blind_rank": "blind rank",
            "blind_score": "blind score",
            "blind_ci_low": "CI low",
            "blind_ci_high": "CI high",
            "tier": "tier",
        }
        st.dataframe(frame[list(headers)].rename(columns=headers), hide_index=True)
        for note in s.notes:
            st.caption(markdown_literal(note))


def _table(columns: Sequence[Column], rows: Sequence[object], *, drop_empty: bool = False) -> pd.DataFrame:
    """A report table as people read it: the columns' headings, numbers to 2-3 significant digits (still
    numbers, so they sort), optional columns (and with ``drop_empty`` any column) only where some row fills
    them."""
    shown = shown_columns(columns, rows)
    if drop_empty:
        shown = tuple(c for c in shown if any(getattr(r, c.name) is not None for r in rows))

    def cell(c: Column, row: object) -> object:
        value = c.cell(row)
        return significant(value) if isinstance(value, float) else value

    return pd.DataFrame([[cell(c, r) for c in shown] for r in rows], columns=[c.header for c in shown])


def _tier_colours(tiers: Sequence[int]) -> alt.Color:
    """Colour by tier, each tier in its one colour on every chart (the HTML report's too)."""
    present = sorted(set(tiers))
    scale = alt.Scale(domain=[str(t) for t in present], range=[tier_colour(t) for t in present])
    return alt.Color("tier:N", scale=scale, title="tier")


def _ci_chart(
    rows: Sequence[RankingRow], title: str, higher_is_better: bool = True, bounds: tuple[float, float] | None = None
) -> alt.LayerChart:
    """Score and 95% CI per model, best first, coloured by tier; a lower-is-better axis runs high to low. The
    axis ends at the scale's ``bounds`` where it has them (see ``score_bounds``). A CI end the data do not
    bound (a model that won or lost every comparison) is drawn to the chart's edge."""
    frame = pd.DataFrame(records(rows))
    frame["tier"] = frame["tier"].astype(str)
    ends = pd.concat([frame["ci_low"], frame["ci_high"], frame["score"]]).dropna()
    lo, hi = (float(ends.min()), float(ends.max())) if len(ends) else (0.0, 1.0)
    if bounds is not None:
        lo, hi = min(lo, bounds[0]), max(hi, bounds[1])
    frame["ci_low"] = frame["ci_low"].fillna(lo)
    frame["ci_high"] = frame["ci_high"].fillna(hi)
    base = alt.Chart(frame).encode(y=alt.Y("model:N", sort=list(frame["model"]), title=None))
    axis_title = "score (95% CI)" if higher_is_better else "score (95% CI), lower is better"
    scale = alt.Scale(zero=False, reverse=not higher_is_better)
    if bounds is not None:
        scale = alt.Scale(domain=[lo, hi], nice=False, zero=False, reverse=not higher_is_better)
    colour = _tier_colours([r.tier for r in rows])
    bars = base.mark_rule(strokeWidth=3).encode(
        x=alt.X("ci_low:Q", title=axis_title, scale=scale), x2="ci_high:Q", color=colour
    )
    tooltip = TOOLTIP
    if "win_vs_average" in frame:  # pairwise: the strength in words too
        tooltip = [*TOOLTIP, alt.Tooltip("win_vs_average", title="beats an average model", format=".0%")]
    dots = base.mark_circle(size=90).encode(x="score:Q", color=colour, tooltip=tooltip)
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
            file_name=f"{file_stem(report.batch)}-report.{fmt}",
            mime=MIME[fmt],
            width="stretch",
        )


def _sensitivity_table(rows: Sequence[WeightSensitivityRow]) -> tuple[pd.DataFrame, dict[str, str | ColumnConfig]]:
    """The weight-sensitivity table under its headings, "first in" as a bar (so kept a number, not "40%")."""
    headers = {c.name: c.header for c in WeightSensitivityRow.COLUMNS}
    frame = pd.DataFrame(records(rows)).rename(columns=headers)
    first = headers["share_first"]
    frame[first] = frame[first].map(significant)
    return frame, {first: st.column_config.ProgressColumn(first, format="percent", min_value=0, max_value=1)}


def _headline(rows: Sequence[AgreementRow], overall: Sequence[RankingRow]) -> str | None:
    """Low agreement across scenarios with the numbers, shown before any ranking sentence (None: they agree)."""
    line = low_agreement_line(rows, headline=True)
    if line is None:
        return None
    without = any(r.dimension == "overall_agreed" for r in overall)
    return line + (" 'overall_agreed' ranks the models without them." if without else "")


def _pairs(pairs: Sequence[PairRow]) -> None:
    if pairs:
        with st.expander(f"Every pair ({len(pairs)}): difference, Holm-adjusted p, separated"):
            st.dataframe(_table(PairRow.COLUMNS, pairs), hide_index=True)


def _reviewers(rows: Sequence[ReviewerRow]) -> None:
    """The reviewer diagnostics, then each flagged reviewer's reasons in full (wrapped, never scrolled)."""
    st.dataframe(_table(ReviewerRow.COLUMNS, rows, drop_empty=True), hide_index=True)  # no gold items: no gold columns
    flags = flag_lines(rows)
    if flags:
        st.markdown("**Flagged reviewers**")
        st.markdown("\n".join(f"- {markdown_literal(name)}: {markdown_literal(why)}" for name, why in flags))


def _checks(rows: Sequence[CheckRow], panel: Sequence[CheckPanelRow]) -> None:
    """A scenario's automatic checks: who passes less often first, a pass-rate chart per check, the tables."""
    st.markdown("**Automatic checks** (pass rate, 95% CI)")
    for line in check_sentences(rows):
        (st.info if NO_DIFFERENCE in line else st.warning)(markdown_literal(line))
    for name in dict.fromkeys(r.check for r in rows):
        part = as_ranking_rows([r for r in rows if r.check == name])
        title = "all checks" if name == ALL_CHECKS else f"check {name}"
        st.altair_chart(_ci_chart(part, f"{title}: pass rate", True, (0.0, 1.0)), width="stretch")
    st.caption(CHECKS_NOTE)
    st.dataframe(_table(CheckRow.COLUMNS, rows), hide_index=True)
    if panel:
        st.caption(PANEL_NOTE)
        st.dataframe(_table(CheckPanelRow.COLUMNS, panel), hide_index=True)


def render_results(engine: Engine, batch_id: int) -> None:
    """Draw the results of batch ``batch_id``: composite, per-scenario tabs, reviewers, beside quality, methods."""
    with st.sidebar:
        rounds = st.select_slider("Bootstrap rounds", options=[200, 500, 1000, 2000], value=1000)
        scores = _benchmarks_upload(batch_id)
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
        if scores is not None:
            digest = hashlib.sha256(repr((scores.scores, scores.higher_is_better, scores.margin)).encode()).hexdigest()
            base = (report.generated_at, report.methods.counts.ratings)
            report = _benchmark_report(engine, batch_id, rounds, weights, digest, base, scores)
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
    headline = _headline(report.overall.agreement, report.overall.ranking)
    if headline:  # before any ranking sentence
        st.warning(markdown_literal(headline))
    st.info(markdown_literal(comp.summary))
    if comp.ranking:
        st.altair_chart(_ci_chart(comp.ranking, "Composite", bounds=score_bounds(report, "composite")), width="stretch")
        st.caption(LETTERS_NOTE)
        _pairs(comp.pairs)
    for note in comp.notes:
        st.caption(markdown_literal(note))
    if ws.models:
        st.caption(f"Weight sensitivity over {ws.draws} random weightings, each with a bootstrap replicate")
        frame, config = _sensitivity_table(ws.models)
        st.dataframe(frame, hide_index=True, column_config=config)
    elif ws.note:
        st.caption(f"Weight sensitivity: {ws.note}")
    comments = f"Comments ({sum(g.n_cant_judge + g.n_commented for g in report.comments):,})"
    tabs = st.tabs([markdown_literal(b.scenario) for b in report.scenarios]
                   + ["All scenarios", "Reviewers", "Beside quality", "Methods", comments, "Production"])  # fmt: skip
    blocks: list[ScenarioReport | OverallReport] = [*report.scenarios, report.overall]
    higher = {d.name: d.higher_is_better for d in report.methods.dimensions}
    for tab, block in zip(tabs, blocks, strict=False):
        with tab:
            for warning in block.warnings:  # cautions (low agreement first) before the ranking sentences
                st.warning(markdown_literal(warning))
            for line in block.summary.values():
                st.info(markdown_literal(line))
            for dim in dict.fromkeys(r.dimension for r in block.ranking):
                rows = [r for r in block.ranking if r.dimension == dim]
                chart = _ci_chart(rows, dim, higher.get(dim, True), score_bounds(report, dim))
                st.altair_chart(chart, width="stretch")
            if block.ranking:
                st.caption(LETTERS_NOTE)
                st.dataframe(_table(RankingRow.COLUMNS, block.ranking), hide_index=True)
                if any(r.win_vs_average is not None for r in block.ranking):
                    st.caption(STRENGTH_NOTE)
                _pairs(block.pairs)
            if block.win_rates:
                st.altair_chart(_winrate_chart(block.win_rates))
            _benchmark_sections(block.benchmarks, block.scenario if isinstance(block, ScenarioReport) else None)
            if isinstance(block, ScenarioReport) and block.checks:
                _checks(block.checks, block.checks_vs_panel or ())
            st.markdown("**Agreement** (Krippendorff's alpha, 95% CI)")
            st.dataframe(_table(AgreementRow.COLUMNS, block.agreement), hide_index=True)
    n = len(report.scenarios) + 1
    with tabs[n]:
        if report.reviewers:
            _reviewers(report.reviewers)
    with tabs[n + 1]:
        beside = report.beside
        st.dataframe(_table(OutputStats.COLUMNS, beside.outputs, drop_empty=True), hide_index=True)
        _latency_chart(report)
        position_text = position_line(beside)
        if position_text:
            st.markdown(markdown_literal(position_text))
        if beside.position_effect is not None and beside.position_effect.bins:
            st.dataframe(_table(POSITION_COLUMNS, beside.position_effect.bins), hide_index=True)
        if beside.stability:
            st.dataframe(_table(StabilityRow.COLUMNS, beside.stability), hide_index=True)
    with tabs[n + 2]:
        for line in report.methods.definitions:
            st.markdown(f"- {line}")
        c = report.methods.counts
        st.markdown(
            f"{c.ratings} ratings of {c.items} items by {c.reviewers} reviewers ({c.gold_ratings} gold and "
            f"{c.repeat_ratings} repeat ratings used only for diagnostics)."
        )
    with tabs[-2]:
        _comments(report.comments)
    with tabs[-1]:
        _production(engine, report)


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


def _latency_chart(report: Report) -> None:
    """Quality (overall score, 95% CI) against median latency, one point per model in its tier's colour."""
    latency = {o.model: o.latency_ms.median for o in report.beside.outputs if o.latency_ms is not None}
    overall = [r for r in report.overall.ranking if r.dimension == "overall" and r.model in latency]
    if not overall:
        return
    frame = pd.DataFrame(records(overall)).assign(latency_ms=[latency[r.model] for r in overall])
    frame["tier"] = frame["tier"].astype(str)
    bounds = score_bounds(report, "overall")
    scale = alt.Scale(zero=False) if bounds is None else alt.Scale(domain=list(bounds), nice=False)
    colour = _tier_colours([r.tier for r in overall])
    chart = alt.Chart(frame).encode(x=alt.X("latency_ms:Q", title="median latency (ms)"))
    tooltip = [alt.Tooltip("model"), alt.Tooltip("score", format=".3~g"), alt.Tooltip("latency_ms", format=".3~g")]
    st.altair_chart(
        chart.mark_rule(strokeWidth=3).encode(
            y=alt.Y("ci_low:Q", scale=scale, title="overall score (95% CI)"), y2="ci_high:Q", color=colour
        )
        + chart.mark_circle(size=90).encode(y="score:Q", color=colour, tooltip=tooltip)
        + chart.mark_text(dx=12, align="left").encode(y="score:Q", text="model:N"),
        width="stretch",
    )
