"""The charts of the lead's results page: a ranking with its CIs, win rates, a benchmark against the blind
score, quality against latency; each tier in its one colour.

Altair charts built from the report's rows, no Streamlit: ``results`` and ``results_benchmarks`` draw them.
Apart from the page's layout so each reads as one thing; the reviewer's page imports neither.
"""

from __future__ import annotations

from collections.abc import Sequence

import altair as alt
import pandas as pd

from reviewer_app.domain.benchmarks import BenchmarkSection
from reviewer_app.domain.report import Report, records, score_bounds
from reviewer_app.domain.report_rankings import RankingRow, WinRateRow
from reviewer_app.reporting.html import tier_colour

# The chart's tooltip: a ranking row's columns but the dimension (each chart is one dimension), under their
# headings, numbers to 3 significant digits.
NUMBERS = {"score", "ci_low", "ci_high", "ci_mc_se"}
TOOLTIP = [
    alt.Tooltip(c.name, title=c.header, format=".3~g") if c.name in NUMBERS else alt.Tooltip(c.name, title=c.header)
    for c in RankingRow.COLUMNS
    if c.name not in ("dimension", "win_vs_average", "p_best", "panel_ci_low", "panel_ci_high")  # where rows have them
]


def tier_colours(tiers: Sequence[int]) -> alt.Color:
    """Colour by tier, each tier in its one colour on every chart (the HTML report's too)."""
    present = sorted(set(tiers))
    scale = alt.Scale(domain=[str(t) for t in present], range=[tier_colour(t) for t in present])
    return alt.Color("tier:N", scale=scale, title="tier")


def ci_chart(
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
    colour = tier_colours([r.tier for r in rows])
    bars = base.mark_rule(strokeWidth=3).encode(
        x=alt.X("ci_low:Q", title=axis_title, scale=scale), x2="ci_high:Q", color=colour
    )
    tooltip = TOOLTIP
    if "p_best" in frame:  # a panel's ranking (a checks table has no bootstrap of the best)
        tooltip = [*tooltip, alt.Tooltip("p_best", title="probability of being the best", format=".0%")]
    if "win_vs_average" in frame:  # pairwise: the strength in words too
        tooltip = [*tooltip, alt.Tooltip("win_vs_average", title="beats an average model", format=".0%")]
    if frame.get("panel_ci_low") is not None and frame["panel_ci_low"].notna().any():  # rating mode, 3+ reviewers
        tooltip = [
            *tooltip,
            alt.Tooltip("panel_ci_low", title="CI low, new panel", format=".3~g"),
            alt.Tooltip("panel_ci_high", title="CI high, new panel", format=".3~g"),
        ]
    dots = base.mark_circle(size=90).encode(x="score:Q", color=colour, tooltip=tooltip)
    letters = base.mark_text(align="left", dx=8, dy=-8).encode(x="score:Q", text="letters:N")
    # A step per model, not a total height: Streamlit's default height="content" squashed a fixed height
    # until every model sat on one line.
    chart: alt.LayerChart = (bars + dots + letters).properties(title=title, height=alt.Step(34))
    return chart


def winrate_chart(rows: Sequence[WinRateRow]) -> alt.LayerChart:
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


def benchmark_chart(section: BenchmarkSection, title: str) -> alt.LayerChart | None:
    """Benchmark score against blind overall score, one point per model with its 95% CI, coloured by tier; a
    lower-is-better benchmark's axis runs high to low (better is right)."""
    shown = [m for m in section.models if m.benchmark_score is not None and m.blind_score is not None]
    if not shown:
        return None
    frame = pd.DataFrame(records(shown))
    frame["tier"] = frame["tier"].astype(str)
    colour = tier_colours([m.tier or 1 for m in shown])
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


def latency_chart(report: Report) -> alt.LayerChart | None:
    """Quality (overall score, 95% CI) against median latency, one point per model in its tier's colour; None
    without a model that has both."""
    latency = {o.model: o.latency_ms.median for o in report.beside.outputs if o.latency_ms is not None}
    overall = [r for r in report.overall.ranking if r.dimension == "overall" and r.model in latency]
    if not overall:
        return None
    frame = pd.DataFrame(records(overall)).assign(latency_ms=[latency[r.model] for r in overall])
    frame["tier"] = frame["tier"].astype(str)
    bounds = score_bounds(report, "overall")
    scale = alt.Scale(zero=False) if bounds is None else alt.Scale(domain=list(bounds), nice=False)
    colour = tier_colours([r.tier for r in overall])
    chart = alt.Chart(frame).encode(x=alt.X("latency_ms:Q", title="median latency (ms)"))
    tooltip = [alt.Tooltip("model"), alt.Tooltip("score", format=".3~g"), alt.Tooltip("latency_ms", format=".3~g")]
    layered: alt.LayerChart = (
        chart.mark_rule(strokeWidth=3).encode(
            y=alt.Y("ci_low:Q", scale=scale, title="overall score (95% CI)"), y2="ci_high:Q", color=colour
        )
        + chart.mark_circle(size=90).encode(y="score:Q", color=colour, tooltip=tooltip)
        + chart.mark_text(dx=12, align="left").encode(y="score:Q", text="model:N")
    )
    return layered
