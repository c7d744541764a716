"""The report's "Public benchmarks" section of a ranking, in Markdown and HTML (with its chart).

Per benchmark: the sentences first (the pairs it separates by a small margin, and any the panel puts the other
way round), then Spearman's rho with its CI, the chart (benchmark score against blind score, one point per
model with its 95% CI), the two orders side by side, and notes. Names come from files and people: HTML escapes
them, and the Markdown report as a whole turns "<" into an entity (see ``formats.to_markdown``).
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from reviewer_app.domain.benchmarks import BenchmarkModel, BenchmarkSection
from reviewer_app.domain.report_fields import Column
from reviewer_app.reporting.formats import fmt
from reviewer_app.reporting.html import tier_colour

__all__ = ["TITLE", "benchmarks_html", "benchmarks_markdown", "rho_line", "where"]

TITLE = "Public benchmarks beside the blind ranking"
INTRO = (
    "Spearman's rho between each benchmark's scores and the blind overall scores (ties: average ranks; "
    "positive: the orders agree), its 95% CI from the report's bootstrap replicates of the blind scores with the "
    "benchmark scores held fixed. The panel's verdicts (tied, agrees, reversed) are its own pair decisions."
)


def _blank(value: object) -> object:
    return "" if value is None else value


COLUMNS: tuple[Column, ...] = (
    Column("model", "model"),
    Column("benchmark_rank", "benchmark rank", show=_blank),
    Column("benchmark_score", "benchmark score"),
    Column("blind_rank", "blind rank", show=_blank),
    Column("blind_score", "blind score"),
    Column("blind_ci_low", "CI low"),
    Column("blind_ci_high", "CI high"),
    Column("tier", "tier", show=_blank),
)


def rho_line(section: BenchmarkSection, where: str) -> str:
    """ "MMLU against the blind overall score on extraction: Spearman's rho -0.80 (95% CI -1.00 – -0.60), 4
    models." (or why there is none)."""
    head = f"{section.benchmark} against the blind overall score {where}"
    lower = "" if section.higher_is_better else " (lower is better on this benchmark)"
    if section.spearman is None:
        return f"{head}: no Spearman's rho ({section.n_models} model(s) with both scores){lower}."
    return (
        f"{head}: Spearman's rho {fmt(section.spearman, 2)} (95% CI {fmt(section.ci_low, 2)} – "
        f"{fmt(section.ci_high, 2)}), {section.n_models} models{lower}."
    )


def where(scenario: str | None) -> str:
    """How a sentence names the ranking: "on extraction" or "across all scenarios"."""
    return "across all scenarios" if scenario is None else f"on {scenario}"


def _md_row(model: BenchmarkModel) -> str:
    ci = f"{fmt(model.blind_ci_low)} – {fmt(model.blind_ci_high)}" if model.blind_score is not None else "–"
    cells = [
        model.model,
        fmt(model.benchmark_rank),
        fmt(model.benchmark_score),
        fmt(model.blind_rank),
        fmt(model.blind_score),
        ci,
        fmt(model.tier),
    ]
    return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"


def benchmarks_markdown(sections: Sequence[BenchmarkSection] | None, scenario: str | None) -> list[str]:
    """The section's Markdown lines (none when the report has no benchmark scores)."""
    if sections is None:
        return []
    out = [f"### {TITLE}", "", INTRO, ""]
    for s in sections:
        out += [f"**{s.benchmark}**", ""]
        out += [f"- {line}" for line in s.disagreements] + ([""] if s.disagreements else [])
        out += [rho_line(s, where(scenario)), ""]
        out += [
            "| model | benchmark rank | benchmark score | blind rank | blind score | 95% CI | tier |",
            "|---|---|---|---|---|---|---|",
            *(_md_row(m) for m in s.models),
            "",
        ]
        out += [f"- {n}" for n in s.notes] + ([""] if s.notes else [])
    return out


def benchmark_chart(section: BenchmarkSection, title: str) -> str:
    """Benchmark score (x) against blind score (y, with its 95% CI as a vertical bar), one point per model in
    its tier's colour; a lower-is-better benchmark's axis runs high to low, so better is right on both."""
    points = [m for m in section.models if m.benchmark_score is not None and m.blind_score is not None]
    if not points:
        return ""
    width, height, left, bottom, right = 640, 320, 64, 40, 120
    xs = [float(m.benchmark_score) for m in points if m.benchmark_score is not None]
    ys = [v for m in points for v in (m.blind_ci_low, m.blind_ci_high, m.blind_score) if v is not None]
    xlo, xhi = min(xs), max(xs)
    xpad = (xhi - xlo) * 0.08 or 1.0
    ylo, yhi = min(ys), max(ys)
    ypad = (yhi - ylo) * 0.08 or 0.05
    a, b = (left, width - right) if section.higher_is_better else (width - right, left)

    def x(v: float) -> float:
        return a + (v - (xlo - xpad)) / ((xhi - xlo) + 2 * xpad) * (b - a)

    def y(v: float) -> float:
        return (height - bottom) - (v - (ylo - ypad)) / ((yhi - ylo) + 2 * ypad) * (height - bottom - 24)

    parts = [
        f'<svg class="chart benchmark" role="img" aria-label="{escape(title)}" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" xmlns="http://www.w3.org/2000/svg">',
        f'<text x="4" y="14" font-weight="bold">{escape(title)}</text>',
        f'<line x1="{left}" x2="{width - right}" y1="{height - bottom}" y2="{height - bottom}" stroke="#999"/>',
        f'<line x1="{left}" x2="{left}" y1="24" y2="{height - bottom}" stroke="#999"/>',
        f'<text x="{(left + width - right) / 2:.0f}" y="{height - 6}" text-anchor="middle">'
        f"{escape(section.benchmark)} score{'' if section.higher_is_better else ' (lower is better)'}</text>",
        f'<text transform="translate(12,{(24 + height - bottom) / 2:.0f}) rotate(-90)" text-anchor="middle">'
        "blind overall score</text>",
    ]
    for k in range(5):
        xv = xlo - xpad + (xhi - xlo + 2 * xpad) * k / 4
        yv = ylo - ypad + (yhi - ylo + 2 * ypad) * k / 4
        parts.append(
            f'<text x="{x(xv):.0f}" y="{height - bottom + 14}" text-anchor="middle" fill="#666">{fmt(xv)}</text>'
            f'<text x="{left - 6}" y="{y(yv) + 4:.0f}" text-anchor="end" fill="#666">{fmt(yv)}</text>'
        )
    for m in points:
        assert m.benchmark_score is not None and m.blind_score is not None
        cx, colour = x(m.benchmark_score), tier_colour(m.tier or 1)
        if m.blind_ci_low is not None and m.blind_ci_high is not None:
            parts.append(
                f'<line x1="{cx:.1f}" x2="{cx:.1f}" y1="{y(m.blind_ci_low):.1f}" y2="{y(m.blind_ci_high):.1f}" '
                f'stroke="{colour}" stroke-width="3"/>'
            )
        parts.append(
            f'<circle cx="{cx:.1f}" cy="{y(m.blind_score):.1f}" r="5" fill="{colour}"><title>{escape(m.model)}: '
            f"{fmt(m.benchmark_score)} on the benchmark, {fmt(m.blind_score)} blind</title></circle>"
            f'<text x="{cx + 8:.1f}" y="{y(m.blind_score) - 6:.1f}">{escape(m.model)}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)


def _html_table(models: Sequence[BenchmarkModel]) -> str:
    head = "".join(f"<th>{escape(c.header)}</th>" for c in COLUMNS)
    body = "".join(
        "<tr>"
        + "".join(
            f'<td class="num">{escape(fmt(v))}</td>' if isinstance(v, int | float) else f"<td>{escape(fmt(v))}</td>"
            for v in (c.cell(m) for c in COLUMNS)
        )
        + "</tr>"
        for m in models
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def benchmarks_html(sections: Sequence[BenchmarkSection] | None, scenario: str | None) -> list[str]:
    """The section's HTML parts (none when the report has no benchmark scores)."""
    if sections is None:
        return []
    out = [f"<h3>{escape(TITLE)}</h3>", f'<p class="muted">{escape(INTRO)}</p>']
    label = "all scenarios" if scenario is None else scenario
    for s in sections:
        out.append(f"<h4>{escape(s.benchmark)}</h4>")
        for line, pair in zip(s.disagreements, s.pairs, strict=True):
            out.append(f'<p class="{"warn" if pair.verdict == "reversed" else "summary"}">{escape(line)}</p>')
        out.append(f"<p>{escape(rho_line(s, where(scenario)))}</p>")
        out.append(benchmark_chart(s, f"{label}: {s.benchmark} score against blind overall score (95% CI)"))
        out.append(_html_table(s.models))
        out += [f'<p class="muted">{escape(n)}</p>' for n in s.notes]
    return out
