"""The HTML report: one self-contained file, charts as inline SVG (no scripts, no network).

Tables show every column of their row type (``AgreementRow.COLUMNS`` ...), under the column's heading.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from html import escape
from typing import Any

from reviewer_app.domain.enums import Mode
from reviewer_app.domain.low_agreement import low_agreement_line
from reviewer_app.domain.report import Report, score_bounds
from reviewer_app.domain.report_adjudication import ADJUDICATION_NOTE, AdjudicatedItem, AdjudicationScenario
from reviewer_app.domain.report_anytime import ANYTIME_NOTE, AnytimePair
from reviewer_app.domain.report_assisted import AssistedModelRow, JudgeSection
from reviewer_app.domain.report_fields import Column, shown_columns
from reviewer_app.domain.report_fragility import FRAGILITY_NOTE, FragilityRow
from reviewer_app.domain.report_judge_card import (
    VERDICT_RULE,
    VERDICT_WORDS,
    JudgeAgreementRow,
    JudgeBiasRow,
    JudgeDimensionCard,
    LeaveOneOutRow,
)
from reviewer_app.domain.report_panel import Beside, MethodDimension, OutputStats, ReviewerRow, StabilityRow, flag_lines
from reviewer_app.domain.report_rankings import (
    LETTERS_NOTE,
    STRENGTH_NOTE,
    TIES_NOTE,
    AgreementRow,
    OverallReport,
    PairRow,
    RankingRow,
    ReliabilityRow,
    ReviewerDesignRow,
    ScenarioReport,
    TieModelRow,
    TieRow,
    WeightSensitivityRow,
    WinRateRow,
    both_bad_line,
)
from reviewer_app.domain.report_style import STYLE_NOTE, StyleRanking, StyleRow
from reviewer_app.domain.report_windows import WINDOWS_NOTE, AgreementWindow
from reviewer_app.reporting.comments import comments_html
from reviewer_app.reporting.formats import (
    ASSISTED_NOTE,
    DESIGN_NOTE,
    PAIRS_NOTE,
    RELIABILITY_NOTE,
    fmt,
    judge_heading,
    position_line,
)

__all__ = ["ci_chart", "html_page", "tier_colour", "to_html"]

# One colour per tier in every chart (the report's and the results page's): a model's tier is its best letter.
TIER_COLOURS = [
    "#1b6ca8", "#e07b00", "#6a4c93", "#2a9d8f", "#b5179e", "#7f7f7f", "#c1121f", "#8c6d31", "#588157", "#4cc9f0",
]  # fmt: skip


def tier_colour(tier: int) -> str:
    """The colour of ``tier`` (1 = best) in every chart; past the tenth tier the colours repeat."""
    return TIER_COLOURS[(tier - 1) % len(TIER_COLOURS)]


# Without a viewport, a phone lays the page out 980 px wide and shrinks it: body text a few pixels high.
HEAD = '<meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">'

CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:2rem auto;max-width:980px;color:#222;
line-height:1.45;padding:0 1rem}
h1{font-size:1.6rem}h2{margin-top:2.2rem;border-bottom:1px solid #ddd;padding-bottom:.2rem}h3{font-size:1.05rem}
table{border-collapse:collapse;margin:.6rem 0;font-size:.9rem}td,th{border-bottom:1px solid #eee;padding:.25rem .6rem;
text-align:left}th{background:#f6f6f6}td.num{text-align:right;font-variant-numeric:tabular-nums}
.summary{background:#f3f7fb;border-left:4px solid #1b6ca8;padding:.5rem .8rem}.warn{background:#fff6e5;
border-left:4px solid #e07b00;padding:.4rem .8rem}.flag{color:#b00020}.muted{color:#666;font-size:.85rem}
svg.chart{display:block;margin:.5rem 0;max-width:100%;height:auto}
svg text{font-family:system-ui,sans-serif;font-size:12px;fill:#222}
table{display:block;max-width:100%;overflow-x:auto}
"""


def html_page(title: str, body: Sequence[str]) -> str:
    """A whole self-contained page (inline CSS, nothing loaded from elsewhere) around ``body``, whose parts are
    HTML already escaped; the title is escaped here. The comparison, history and monitor pages use it."""
    return (
        f'<!DOCTYPE html>\n<html lang="en"><head>{HEAD}'
        f"<title>{escape(title)}</title><style>{CSS}</style></head>"
        f"<body>{''.join(body)}</body></html>\n"
    )


def _scale(lo: float, hi: float, a: float, b: float) -> Callable[[float], float]:
    span = (hi - lo) or 1.0
    return lambda v: a + (v - lo) / span * (b - a)


def _scored(rows: Sequence[RankingRow]) -> list[tuple[RankingRow, float]]:
    return [(r, r.score) for r in rows if r.score is not None]


def ci_chart(
    rows: Sequence[RankingRow], title: str, higher_is_better: bool = True, bounds: tuple[float, float] | None = None
) -> str:
    """Dot (score) with whiskers (95% CI) per model, coloured by tier and labelled with its letters.

    The axis ends at the scale's ``bounds`` (see ``score_bounds``), so a difference looks as large as it is
    on the scale; without bounds (Bradley-Terry strengths) it spans the data. A lower-is-better dimension
    runs from high to low, so the best model is always on the right; a CI end the data do not bound is drawn
    as a dashed line to the edge."""
    scored = _scored(rows)
    if not scored:
        return ""
    lows = [r.ci_low if r.ci_low is not None else score for r, score in scored]
    highs = [r.ci_high if r.ci_high is not None else score for r, score in scored]
    lo, hi = min(lows), max(highs)
    if bounds is not None:
        lo, hi = min(lo, bounds[0]), max(hi, bounds[1])
    else:
        pad = (hi - lo) * 0.08 or 0.1
        lo, hi = lo - pad, hi + pad
    if not higher_is_better:
        title += " (lower is better)"
    # Room for the longest model name (about 7 px a character at this font size), so none is cut off.
    left = max(120, 14 + 7 * max((len(r.model) for r, _ in scored), default=10))
    width, row_h = left + 640, 26
    height = 40 + row_h * len(scored)
    x = _scale(hi, lo, left, width - 20) if not higher_is_better else _scale(lo, hi, left, width - 20)
    parts = [
        f'<svg class="chart ci" role="img" aria-label="{escape(title)}" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" xmlns="http://www.w3.org/2000/svg">',
        f'<text x="{left}" y="14" font-weight="bold">{escape(title)}</text>',
    ]
    for k in range(5):
        v = lo + (hi - lo) * k / 4
        parts.append(
            f'<line x1="{x(v):.1f}" x2="{x(v):.1f}" y1="22" y2="{height - 16}" stroke="#eee"/>'
            f'<text x="{x(v):.1f}" y="{height - 3}" text-anchor="middle" fill="#666">{v:.2f}</text>'
        )
    for i, (r, score) in enumerate(scored):
        y = 34 + i * row_h
        colour = tier_colour(r.tier)
        parts.append(f'<text x="{left - 8}" y="{y + 4}" text-anchor="end">{escape(r.model)}</text>')
        if r.ci_low is not None or r.ci_high is not None:
            a = r.ci_low if r.ci_low is not None else lo
            b = r.ci_high if r.ci_high is not None else hi
            dash = "" if r.ci_low is not None and r.ci_high is not None else ' stroke-dasharray="4 3"'
            parts.append(
                f'<line x1="{x(a):.1f}" x2="{x(b):.1f}" y1="{y}" y2="{y}" stroke="{colour}" stroke-width="3"{dash}/>'
            )
        parts.append(
            f'<circle cx="{x(score):.1f}" cy="{y}" r="5" fill="{colour}"/>'
            f'<text x="{width - 4}" y="{y + 4}" text-anchor="end" fill="#666">{escape(r.letters)}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)


def winrate_chart(rows: Sequence[WinRateRow], title: str) -> str:
    """Heat map: row model's win rate against the column model (ties half)."""
    models = sorted({r.model for r in rows})
    if not models:
        return ""
    cell, top = 56, 120
    left = max(110, 14 + 7 * max((len(str(m)) for m in models), default=10))
    size_w, size_h = left + cell * len(models) + 10, top + cell * len(models) + 10
    rate = {(r.model, r.opponent): r for r in rows}
    parts = [
        f'<svg class="chart winrate" role="img" aria-label="{escape(title)}" width="{size_w}" '
        f'height="{size_h}" xmlns="http://www.w3.org/2000/svg">',
        f'<text x="4" y="14" font-weight="bold">{escape(title)}</text>',
    ]
    for j, m in enumerate(models):
        cx = left + j * cell + cell / 2
        parts.append(f'<text transform="translate({cx:.0f},{top - 6}) rotate(-40)">{escape(m)}</text>')
    for i, a in enumerate(models):
        parts.append(
            f'<text x="{left - 6}" y="{top + i * cell + cell / 2 + 4:.0f}" text-anchor="end">{escape(a)}</text>'
        )
        for j, b in enumerate(models):
            r = rate.get((a, b))
            v = r.win_rate if r else None
            if v is None:
                fill = "#f4f4f4"
            else:
                t = abs(v - 0.5) * 2
                base = (27, 108, 168) if v >= 0.5 else (224, 123, 0)
                fill = "#" + "".join(f"{int(255 - t * (255 - c)):02x}" for c in base)
            parts.append(
                f'<rect x="{left + j * cell}" y="{top + i * cell}" width="{cell - 2}" height="{cell - 2}" '
                f'fill="{fill}"><title>{escape(a)} vs {escape(b)}: {fmt(v)} (n={r.n if r else 0})</title></rect>'
            )
            if v is not None:
                parts.append(
                    f'<text x="{left + j * cell + cell / 2 - 1:.0f}" y="{top + i * cell + cell / 2 + 4:.0f}" '
                    f'text-anchor="middle">{v:.0%}</text>'
                )
    parts.append("</svg>")
    return "".join(parts)


def latency_chart(report: Report) -> str:
    """Quality (overall score with CI) against median latency, one point per model."""
    latency = {o.model: o.latency_ms.median for o in report.beside.outputs if o.latency_ms is not None}
    rows = _scored([r for r in report.overall.ranking if r.dimension == "overall" and r.model in latency])
    if not rows:
        return '<p class="muted">No latency metadata in this batch, so no quality-versus-latency chart.</p>'
    width, height, left, bottom = 640, 320, 60, 40
    xs = [latency[r.model] for r, _ in rows]
    ys = [v for r, _ in rows for v in (r.ci_low, r.ci_high, r.score) if v is not None]
    x = _scale(0, max(xs) * 1.1, left, width - 20)
    ylo, yhi = min(ys), max(ys)
    pad = (yhi - ylo) * 0.1 or 0.05
    bounds = score_bounds(report, "overall")
    if bounds is not None:  # the score's axis ends at the scale's bounds, as in every chart
        ylo, yhi, pad = min(ylo, bounds[0]), max(yhi, bounds[1]), 0.0
    y = _scale(ylo - pad, yhi + pad, height - bottom, 24)
    parts = [
        f'<svg class="chart latency" role="img" aria-label="quality versus latency" width="{width}" '
        f'height="{height}" xmlns="http://www.w3.org/2000/svg">',
        '<text x="4" y="14" font-weight="bold">Quality (overall score, 95% CI) versus median latency</text>',
        f'<line x1="{left}" x2="{width - 20}" y1="{height - bottom}" y2="{height - bottom}" stroke="#999"/>',
        f'<line x1="{left}" x2="{left}" y1="24" y2="{height - bottom}" stroke="#999"/>',
        f'<text x="{(left + width) / 2:.0f}" y="{height - 6}" text-anchor="middle">median latency (ms)</text>',
    ]
    for k in range(5):
        v = max(xs) * 1.1 * k / 4
        parts.append(f'<text x="{x(v):.0f}" y="{height - bottom + 14}" text-anchor="middle" fill="#666">{v:.0f}</text>')
        w = ylo - pad + (yhi - ylo + 2 * pad) * k / 4
        parts.append(f'<text x="{left - 6}" y="{y(w) + 4:.0f}" text-anchor="end" fill="#666">{w:.2f}</text>')
    for r, score in rows:
        cx, colour = x(latency[r.model]), tier_colour(r.tier)
        if r.ci_low is not None and r.ci_high is not None:
            parts.append(
                f'<line x1="{cx:.1f}" x2="{cx:.1f}" y1="{y(r.ci_low):.1f}" y2="{y(r.ci_high):.1f}" '
                f'stroke="{colour}" stroke-width="3"/>'
            )
        parts.append(
            f'<circle cx="{cx:.1f}" cy="{y(score):.1f}" r="5" fill="{colour}"/>'
            f'<text x="{cx + 8:.1f}" y="{y(score) - 6:.1f}">{escape(r.model)}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)


def _table(headers: list[str], rows: list[list[Any]]) -> str:
    head = "".join(f"<th>{escape(h)}</th>" for h in headers)
    body = "".join(
        "<tr>"
        + "".join(
            f'<td class="num">{escape(fmt(c))}</td>'
            if isinstance(c, int | float) and not isinstance(c, bool)
            else f"<td>{escape(fmt(c))}</td>"
            for c in r
        )
        + "</tr>"
        for r in rows
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _rows_table(columns: tuple[Column, ...], rows: Sequence[object]) -> str:
    """A table of ``rows`` with every one of ``columns`` (but optional ones no row fills)."""
    shown = shown_columns(columns, rows)
    return _table([c.header for c in shown], [[c.cell(r) for c in shown] for r in rows])


def _style_html(rankings: Sequence[StyleRanking]) -> list[str]:
    """Style control: per scenario and dimension, the sentence, the rankings side by side, the features' worth."""
    body = ['<h2 id="style">Style control</h2>', f'<p class="muted">{escape(STYLE_NOTE)}</p>']
    for ranked in rankings:
        title = ranked.scenario if ranked.dimension == "overall" else f"{ranked.scenario} ({ranked.dimension})"
        body += [f"<h3>{escape(title)}</h3>", f'<p class="summary">{escape(ranked.sentence)}</p>']
        body.append(_rows_table(StyleRow.COLUMNS, ranked.rows))
        body += ["<ul>" + "".join(f"<li>{escape(c.sentence)}</li>" for c in ranked.coefficients) + "</ul>"]
        if ranked.left_out:
            body.append(f'<p class="muted">Not controlled (no variation to learn from): '
                        f"{escape(', '.join(ranked.left_out))}.</p>")  # fmt: skip
    return body


def agreement_table(rows: Sequence[AgreementRow]) -> str:
    return _rows_table(AgreementRow.COLUMNS, rows)


def _reliability_html(rows: Sequence[ReliabilityRow]) -> list[str]:
    if not rows:
        return []
    return [
        "<h3>Reliability of the models' means</h3>",
        _rows_table(ReliabilityRow.COLUMNS, rows),
        f'<p class="muted">{escape(RELIABILITY_NOTE)}</p>',
    ]


def _design_html(rows: Sequence[ReviewerDesignRow] | None) -> list[str]:
    if not rows:
        return []
    return [
        "<h3>Reviewers did not rate the models evenly</h3>",
        _rows_table(ReviewerDesignRow.COLUMNS, rows),
        f'<p class="muted">{escape(DESIGN_NOTE)}</p>',
    ]


def _ties_html(rows: Sequence[TieRow] | None, models: Sequence[TieModelRow] | None) -> list[str]:
    """Pairwise: each model's tie and both-bad rates and Davidson strength, and the tie model per ranking."""
    if not rows:
        return []
    lines = [line for r in rows if r.dimension == "overall" for line in [both_bad_line(r)] if line]
    return [
        "<h3>Ties and both bad</h3>",
        *[f'<p class="summary">{escape(line)}</p>' for line in lines],
        _rows_table(TieRow.COLUMNS, rows),
        *([_rows_table(TieModelRow.COLUMNS, models)] if models else []),
        f'<p class="muted">{escape(TIES_NOTE)}</p>',
    ]


def _dimension_charts(block: ScenarioReport | OverallReport, label: str, report: Report) -> str:
    higher = {d.name: d.higher_is_better for d in report.methods.dimensions}
    dims = list(dict.fromkeys(r.dimension for r in block.ranking))
    charts = []
    for d in dims:
        rows = [r for r in block.ranking if r.dimension == d]
        charts.append(ci_chart(rows, f"{label}: {d}", higher.get(d, True), score_bounds(report, d)))
    return "".join(charts)


def _judge_html(section: JudgeSection) -> list[str]:
    """The "Judge vs panel" section: the run, then the judge-assisted rankings beside (never instead of) the
    panel's."""
    out = ["<h2>Judge vs panel</h2>", f"<p>{escape(judge_heading(section))}</p>"]
    out += [f'<p class="warn">{escape(n)}</p>' for n in section.notes]
    if section.cards:
        out += ["<h3>The judge's report card</h3>", f'<p class="muted">{escape(VERDICT_RULE)}</p>']
    for card in section.cards:
        out += [f"<h4>{escape(card.scenario)}: {escape(VERDICT_WORDS[card.verdict])}</h4>"]
        out += ["<ul>" + "".join(f"<li>{escape(r)}</li>" for r in card.reasons) + "</ul>"]
        out += [_rows_table(JudgeAgreementRow.COLUMNS, card.agreement)]
        if card.bias:
            out += [_rows_table(JudgeBiasRow.COLUMNS, card.bias)]
        if card.measures:
            out += [_rows_table(JudgeDimensionCard.COLUMNS, card.measures)]
        if card.leave_one_out:
            out += [
                f"<details><summary>The judge in each reviewer's place ({len(card.leave_one_out)})</summary>",
                _rows_table(LeaveOneOutRow.COLUMNS, card.leave_one_out),
                "</details>",
            ]
    if section.assisted:
        out += ["<h3>Judge-assisted rankings</h3>", f'<p class="muted">{escape(ASSISTED_NOTE)}</p>']
    for a in section.assisted:
        ratio = "" if a.width_ratio is None else f" Intervals {a.width_ratio:.2f}x the panel's alone."
        out += [
            f"<h4>{escape(a.scenario)} ({escape(a.dimension)})</h4>",
            f'<p class="summary">{escape(a.summary + ratio)}</p>',
        ]
        out += _ranking_tables(a.ranking, a.pairs) + [_rows_table(AssistedModelRow.COLUMNS, a.models)]
    return out


def _ranking_tables(ranking: Sequence[RankingRow], pairs: Sequence[PairRow]) -> list[str]:
    """The ranking table, then the pairs behind it (folded: there are many)."""
    if not ranking:
        return []
    out = [_rows_table(RankingRow.COLUMNS, ranking), f'<p class="muted">{escape(LETTERS_NOTE)}</p>']
    if pairs:
        out += [
            f"<details><summary>Every pair ({len(pairs)}): difference, Holm-adjusted p, separated</summary>",
            _rows_table(PairRow.COLUMNS, pairs),
            f'<p class="muted">{escape(PAIRS_NOTE)}</p>',
            "</details>",
        ]
    return out


def to_html(report: Report) -> str:
    """The whole report as one HTML page (model names unblinded; leads only)."""
    from reviewer_app.reporting.benchmarks import benchmarks_html  # it reads tier_colour from here
    from reviewer_app.reporting.checks import checks_html  # it reads ci_chart from here

    m, ov = report.methods, report.overall
    comp, ws = ov.composite, ov.weight_sensitivity
    body = [
        f"<h1>Blind Review report: {escape(report.batch)}</h1>",
        f'<p class="muted">Generated {escape(report.generated_at)} · {escape(report.mode)} mode · '
        f"{len(report.models)} models · seed {m.seed} · {m.bootstrap_rounds} bootstrap rounds. "
        "Model names are shown unblinded.</p>",
        *_headline(report),
        "<h2>Composite</h2>",
        f'<p class="summary">{escape(comp.summary)}</p>',
        ci_chart(comp.ranking, "Composite score (95% CI)", bounds=score_bounds(report, "composite")),
        "<p>Weights: " + escape(", ".join(f"{k} {v:g}" for k, v in comp.weights.items())) + "</p>",
    ]
    body += [f'<p class="muted">{escape(n)}</p>' for n in comp.notes]
    body += _ranking_tables(comp.ranking, comp.pairs)
    if report.mode == Mode.PAIRWISE:  # the strengths in words, once for every ranking below
        body.append(f'<p class="muted">{escape(STRENGTH_NOTE)}</p>')
    if ws.models:
        body += [
            f"<h3>Weight sensitivity ({ws.draws} random weightings of the scenarios)</h3>",
            *[f'<p class="summary">{escape(line)}</p>' for line in ws.summary],
            _rows_table(WeightSensitivityRow.COLUMNS, ws.models),
        ]
    elif ws.note:
        body.append(f'<p class="muted">Weight sensitivity: {escape(ws.note)}</p>')
    for block in report.scenarios:
        body.append(
            f'<h2>Scenario: {escape(block.scenario)} <span class="muted">({block.n_samples} samples)</span></h2>'
        )
        body += [f'<p class="warn">{escape(w)}</p>' for w in block.warnings]  # cautions before ranking sentences
        body += [f'<p class="summary">{escape(s)}</p>' for s in block.summary.values()]
        body.append(_dimension_charts(block, block.scenario, report))
        body += _ranking_tables(block.ranking, block.pairs)
        if block.win_rates:
            body.append(winrate_chart(block.win_rates, f"{block.scenario}: win rate of row over column"))
        body += benchmarks_html(block.benchmarks, block.scenario)
        body += checks_html(block.scenario, block.checks or (), block.checks_vs_panel or ())
        body += (
            ["<h3>Agreement</h3>", agreement_table(block.agreement)]
            + _reliability_html(block.reliability)
            + _design_html(block.reviewer_design)
            + _ties_html(block.ties, block.tie_model)
        )
    body += ["<h2>All scenarios</h2>"] + [f'<p class="warn">{escape(w)}</p>' for w in ov.warnings]
    body += [f'<p class="summary">{escape(s)}</p>' for s in ov.summary.values()]
    body += [_dimension_charts(ov, "all scenarios", report)] + _ranking_tables(ov.ranking, ov.pairs)
    if ov.win_rates:
        body.append(winrate_chart(ov.win_rates, "All scenarios: win rate of row over column"))
    body += benchmarks_html(ov.benchmarks, None)
    body += ["<h3>Agreement across scenarios</h3>", agreement_table(ov.agreement)] + _reliability_html(ov.reliability)
    body += _design_html(ov.reviewer_design)
    body += _ties_html(ov.ties, ov.tie_model)
    if report.production is not None:
        from reviewer_app.reporting.monitor import production_html  # it reads CSS from here

        body.append(production_html(report.production))
    if report.anytime:
        body += ["<h2>Anytime-valid verdicts</h2>", f'<p class="muted">{escape(ANYTIME_NOTE)}</p>']
        body += ["<ul>" + "".join(f"<li>{escape(a.sentence)}</li>" for a in report.anytime) + "</ul>"]
        pairs = [p for a in report.anytime for p in a.pairs]
        if pairs:
            body.append(_rows_table(AnytimePair.COLUMNS, pairs))
    if report.style:
        body += _style_html(report.style)
    if report.fragility:
        body += [
            '<h2 id="fragility">How fragile the verdicts are</h2>',
            f'<p class="muted">{escape(FRAGILITY_NOTE)}</p>',
        ]
        items = "".join(
            f"<li>{'<strong>' if r.fragile else ''}{escape(r.sentence)}{'</strong>' if r.fragile else ''}</li>"
            for r in report.fragility
        )
        body += [f"<ul>{items}</ul>", _rows_table(FragilityRow.COLUMNS, report.fragility)]
    if report.agreement_trends:
        body += [
            '<h2 id="agreement-over-time">Agreement over time</h2>',
            f'<p class="muted">{escape(WINDOWS_NOTE)}</p>',
        ]
        for trend in report.agreement_trends:
            mark = "<strong>Flagged.</strong> " if trend.flagged else ""
            body += [f'<h3>{escape(trend.scenario)}</h3><p class="summary">{mark}{escape(trend.sentence)}</p>']
            body.append(_rows_table(AgreementWindow.COLUMNS, trend.windows))
    if report.adjudication is not None:
        a = report.adjudication
        body += [
            '<h2 id="adjudication">Adjudication</h2>',
            f'<p class="summary">{escape(a.summary)}</p>',
            f"<p>Disputed when: {escape(a.rule)}.</p>",
            f'<p class="muted">{escape(ADJUDICATION_NOTE)}</p>',
            _rows_table(AdjudicationScenario.COLUMNS, a.scenarios),
        ]
        if a.items:
            body += ["<h3>Adjudicated items</h3>", _rows_table(AdjudicatedItem.COLUMNS, a.items)]
    if report.judge is not None:
        body += _judge_html(report.judge)
    body += comments_html(report)
    body += _beside_html(report)
    if report.reviewers:
        body += ["<h2>Reviewers</h2>", _rows_table(ReviewerRow.COLUMNS, report.reviewers)]
        flags = "".join(f"<li><strong>{escape(n)}</strong>: {escape(r)}</li>" for n, r in flag_lines(report.reviewers))
        body += [f'<p>Flagged:</p><ul class="flags">{flags}</ul>'] if flags else []
    c = m.counts
    body += [
        "<h2>Methods</h2>",
        f"<p>Seed {m.seed}; {m.bootstrap_rounds} bootstrap rounds; {m.weight_draws} random weightings; "
        f"{c.ratings} ratings of {c.items} items by {c.reviewers} reviewers "
        f"({c.gold_ratings} gold and {c.repeat_ratings} repeat ratings used only for diagnostics).</p>",
        f"<p>Multiple comparisons: {escape(m.multiple_comparisons)}. Largest Monte Carlo error of a bootstrap "
        f"interval end: {fmt(m.max_ci_mc_se, 4)} (standard error; no decision uses a Monte Carlo quantity).</p>",
        _rows_table(MethodDimension.COLUMNS, m.dimensions),
        "<ul>" + "".join(f"<li>{escape(d)}</li>" for d in m.definitions) + "</ul>",
    ]
    return (
        f'<!DOCTYPE html>\n<html lang="en"><head>{HEAD}'
        f"<title>Blind Review report: {escape(report.batch)}</title><style>{CSS}</style></head>"
        f"<body>{''.join(body)}</body></html>\n"
    )


def _headline(report: Report) -> list[str]:
    """Low agreement across scenarios, with the numbers, before any ranking sentence (or nothing)."""
    line = low_agreement_line(report.overall.agreement, report.overall.reliability, headline=True)
    return [f'<p class="warn"><strong>{escape(line)}</strong></p>'] if line else []


def _beside_html(report: Report) -> list[str]:
    b: Beside = report.beside
    out = ["<h2>Beside quality</h2>", latency_chart(report)]
    if b.outputs:
        out.append(_rows_table(OutputStats.COLUMNS, b.outputs))
    line = position_line(b)
    if line:
        out.append(f"<p>{escape(line)}</p>")
    if b.stability:
        out += ["<h3>Stability across repeated generations</h3>", _rows_table(StabilityRow.COLUMNS, b.stability)]
    return out
