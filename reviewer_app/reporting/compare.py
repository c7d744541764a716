"""Render a version comparison (``services.compare_batches.VersionComparison``) as JSON, CSV, Markdown or HTML.

Every format reads in one order: what the reader must know first (notes: no anchors, unpaired models, samples
not shared), the verdict table, then (HTML) the charts of per-scenario differences with their intervals and
the ±tolerance band, then behaviour drift. Names (batches, scenarios, models) come from batch files and are
untrusted: HTML escapes every one, Markdown lets none open a tag, CSV makes none a spreadsheet formula. The
HTML file is self-contained (inline CSS and SVG, no script, nothing fetched).
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Sequence
from html import escape
from importlib import resources
from typing import TYPE_CHECKING, Any

from reviewer_app.domain.csv_safety import neutralise_cell
from reviewer_app.reporting.formats import FORMATS as FORMATS  # the formats its callers offer
from reviewer_app.reporting.formats import fmt, render_with
from reviewer_app.reporting.html import html_page
from reviewer_app.reporting.markdown_safety import inert_markdown

__all__ = [
    "DRIFT_COLUMNS",
    "DRIFT_NOTE",
    "FORMATS",
    "VERDICT_COLOURS",
    "REGRESSION_COLUMNS",
    "VERDICT_COLUMNS",
    "by_verdict",
    "charts_by_dimension",
    "drift_rows_of",
    "headline",
    "html_table",
    "lead_notes",
    "md_table",
    "render_comparison",
]

if TYPE_CHECKING:
    from reviewer_app.domain.versions import CompareRow, DriftRow, VersionComparison

VERDICT_COLOURS = {"regression": "#c1121f", "improvement": "#2a9d8f", "no change": "#7f7f7f", "inconclusive": "#e07b00"}

# (field of CompareRow, heading): the verdict table of every format and of the page.
VERDICT_COLUMNS: tuple[tuple[str, str], ...] = (
    ("scenario", "scenario"),
    ("dimension", "dimension"),
    ("model", "model"),
    ("baseline_model", "compared with"),
    ("verdict", "verdict"),
    ("change", "change of any size"),
    ("meaning", "what it means"),
    ("baseline_score", "baseline"),
    ("candidate_score", "candidate"),
    ("diff", "difference"),
    ("panel_shift", "panel shift"),
    ("corrected", "corrected"),
    ("ci_low", "95% CI low"),
    ("ci_high", "95% CI high"),
    ("decision_low", "decision low"),
    ("decision_high", "decision high"),
    ("p_adjusted", "Holm p"),
    ("change_p_adjusted", "Holm p (any size)"),
    ("panel_adjustment", "panel allowed for by"),
    ("reviewer_sd", "reviewer SD"),
    ("panel_sd", "panel SD"),
    ("shift_common_p", "shift common to the models (p)"),
    ("own_shift", "own model's anchors"),
    ("samples_needed", "samples needed"),
    ("n", "samples"),
    ("n_anchors", "anchors"),
    ("tolerance", "tolerance"),
)
# The regressions a lead reads first, above every verdict: what fell, by how much, how sure.
REGRESSION_COLUMNS: tuple[tuple[str, str], ...] = (
    ("scenario", "scenario"),
    ("dimension", "dimension"),
    ("model", "model"),
    ("baseline_model", "compared with"),
    ("baseline_score", "baseline"),
    ("candidate_score", "candidate"),
    ("corrected", "corrected"),
    ("decision_low", "decision low"),
    ("decision_high", "decision high"),
    ("n", "samples"),
    ("meaning", "what it means"),
)
VERDICT_ORDER = ("regression", "improvement", "inconclusive", "no change")
DRIFT_COLUMNS: tuple[tuple[str, str], ...] = (
    ("scenario", "scenario"),
    ("model", "model"),
    ("baseline_model", "compared with"),
    ("metric", "metric"),
    ("baseline", "baseline"),
    ("candidate", "candidate"),
    ("change", "change"),
    ("p_value", "p"),
    ("flag", "flagged"),
    ("n_baseline", "baseline outputs"),
    ("n_candidate", "candidate outputs"),
    ("rule", "flagged when"),
)
CSV_COLUMNS = list(
    dict.fromkeys(
        ["section", *(f for f, _ in VERDICT_COLUMNS), "unit", "higher_is_better"]
        + [f for f, _ in DRIFT_COLUMNS]
        + ["test", "note"]
    )
)
MULTIPLICITY_NOTE = (
    "Verdicts hold the false-verdict rate across all the rows below to 5% (Holm 1979): regression and improvement "
    "(a change beyond the tolerance) and, separately, a change of any size; no change means the 95% interval lies "
    "within the tolerance. Without anchors the interval is widened by the variance a new panel of reviewers brings "
    "(estimated from the reviewers), or the verdict is inconclusive where that cannot be estimated."
)
DRIFT_NOTE = (
    "Drift flags are a screen, not decisions: many metrics are looked at and p-values are not adjusted. "
    "Tests count samples, not outputs."
)


# Markdown and HTML: the verdict table in fewer, wider columns (an interval in one cell; the tolerance is in the
# heading above it). The page and CSV show every column.
VERDICT_BRIEF = ("scenario", "dimension", "model", "compared with", "verdict", "change of any size",
                 "what it means", "baseline", "candidate", "difference", "panel shift", "corrected", "95% CI",
                 "decision interval", "panel allowed for by", "samples needed", "samples", "anchors")  # fmt: skip
DRIFT_BRIEF = ("scenario", "model", "compared with", "metric", "baseline", "candidate", "change", "p", "flagged",
               "outputs (baseline / candidate)", "flagged when")  # fmt: skip


def _interval(low: float | None, high: float | None) -> str:
    return "–" if low is None or high is None else f"{fmt(low)} – {fmt(high)}"


def verdict_cells(r: CompareRow) -> list[Any]:
    """A verdict row's cells under :data:`VERDICT_BRIEF`."""
    return [r.scenario, r.dimension, r.model, r.baseline_model, r.verdict, r.change, r.meaning, r.baseline_score,
            r.candidate_score, r.diff, r.panel_shift, r.corrected, _interval(r.ci_low, r.ci_high),
            _interval(r.decision_low, r.decision_high), r.panel_adjustment, r.samples_needed, r.n,
            r.n_anchors]  # fmt: skip


def drift_cells(d: DriftRow) -> list[Any]:
    """A drift row's cells under :data:`DRIFT_BRIEF`."""
    return [d.scenario, d.model, d.baseline_model, d.metric, d.baseline, d.candidate, d.change, d.p_value, d.flag,
            f"{d.n_baseline} / {d.n_candidate}", d.rule]  # fmt: skip


def by_verdict(rows: Sequence[CompareRow]) -> list[CompareRow]:
    """``rows`` with the regressions first, then improvements, inconclusive and no change (each in its order)."""
    rank = {v: i for i, v in enumerate(VERDICT_ORDER)}
    return sorted(rows, key=lambda r: rank.get(r.verdict, len(rank)))


def load_compare_schema() -> dict[str, Any]:
    """The JSON schema of a comparison (shipped as package data next to this module)."""
    text = resources.files("reviewer_app.reporting").joinpath("compare_schema.json").read_text("utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


def lead_notes(result: VersionComparison) -> list[str]:
    """What a reader must know before the verdicts: the service's notes, unpaired models, samples only one
    batch has."""
    out = list(result.notes)
    if result.unpaired_baseline:
        out.append(
            f"Baseline model(s) without a counterpart in {result.candidate}: {', '.join(result.unpaired_baseline)} "
            "(pair renamed versions with --match OLD=NEW)."
        )
    if result.unpaired_candidate:
        out.append(
            f"Candidate model(s) without a counterpart in {result.baseline}: {', '.join(result.unpaired_candidate)}."
        )
    if result.baseline_only_samples or result.candidate_only_samples:
        out.append(
            f"{result.shared_samples} samples are in both batches; {result.baseline_only_samples} only in the "
            f"baseline and {result.candidate_only_samples} only in the candidate are left out of the paired "
            "differences."
        )
    return out


def headline(result: VersionComparison) -> str:
    """One sentence: how many rows got each verdict, and how many drift metrics are flagged."""
    rows = result.comparison.rows
    counts = {v: sum(1 for r in rows if r.verdict == v) for v in VERDICT_COLOURS}
    said = ", ".join(f"{n} {v}" for v, n in counts.items() if n)
    said = f"{said} over {len(rows)} comparisons" if rows else "no verdicts yet"
    unadjusted = sum(1 for r in rows if r.panel_adjustment == "not adjusted")
    if unadjusted:
        said += f" ({unadjusted} not adjusted for a panel change: inconclusive)"
    flagged = sum(1 for d in result.drift if d.flag)
    drift = f"{flagged} of {len(result.drift)} drift metrics flagged"
    return f"{result.candidate} against {result.baseline}: {said}; {drift}."


# --- JSON and CSV -----------------------------------------------------------------------------------------


def to_json(result: VersionComparison) -> str:
    return json.dumps(result.as_dict(), indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def to_csv(result: VersionComparison) -> str:
    """One long table: ``note`` rows, one ``verdict`` row per comparison, one ``drift`` row per metric."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)

    def write(section: str, values: dict[str, Any]) -> None:
        writer.writerow([neutralise_cell(section if c == "section" else values.get(c)) for c in CSV_COLUMNS])

    for note in lead_notes(result):
        write("note", {"note": note})
    for row in result.comparison.rows:
        write("verdict", row.as_dict())
    for d in result.drift:
        write("drift", d.as_dict())
    return buf.getvalue()


# --- Markdown ---------------------------------------------------------------------------------------------


def md_table(headers: Sequence[str], rows: Sequence[Sequence[Any]], *, no: str = "") -> str:
    """A Markdown table of lead-facing cells (``|`` escaped, one line each); a true flag reads "yes", a false
    one ``no`` (history says "no"; compare leaves it blank so the flagged rows stand out). Also the history's."""

    def cell(value: Any) -> str:
        if isinstance(value, bool):
            return "yes" if value else no
        return fmt(value).replace("|", "\\|").replace("\n", " ")

    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(cell(c) for c in r) + " |" for r in rows]
    return "\n".join(lines)


def to_markdown(result: VersionComparison) -> str:
    c = result.comparison
    out = [
        f"# Blind Review comparison: {result.candidate} against {result.baseline}",
        "",
        f"{c.mode} mode · tolerance {c.tolerance:g} points (overall and win rates {c.tolerance_share:g}) · "
        f"seed {c.seed} · {c.rounds} bootstrap rounds · model names unblinded",
        "",
        headline(result),
        "",
    ]
    out += [f"- {n}" for n in lead_notes(result)] + [""]
    out += ["## Verdicts", "", MULTIPLICITY_NOTE, ""]
    if c.rows:
        out += [md_table(VERDICT_BRIEF, [verdict_cells(r) for r in c.rows]), ""]
    else:
        out += ["No verdicts: see the notes above.", ""]
    out += ["## Behaviour drift", "", DRIFT_NOTE, ""]
    if result.drift:
        out += [md_table(DRIFT_BRIEF, [drift_cells(d) for d in result.drift]), ""]
    else:
        out += ["No model has outputs in a scenario on both sides.", ""]
    return inert_markdown("\n".join(out))


# --- HTML -------------------------------------------------------------------------------------------------


def html_table(
    headers: Sequence[str],
    rows: Sequence[Sequence[Any]],
    flagged: Sequence[bool] = (),
    *,
    flag_cell: Callable[[bool], str] = lambda v: f'<td class="flag">{"flagged" if v else ""}</td>',
) -> str:
    """A table in a box that scrolls sideways when wider than the page; a verdict in its colour, a flagged row
    marked; ``flag_cell`` draws a true/false cell (the history's says yes/no). Also the history's table."""
    head = "".join(f"<th>{escape(h)}</th>" for h in headers)
    body = []
    for k, row in enumerate(rows):
        cells = []
        for h, v in zip(headers, row, strict=True):
            if h == "verdict" and v:
                colour = VERDICT_COLOURS.get(str(v), "#222")
                cells.append(f'<td style="color:{colour};font-weight:bold">{escape(str(v))}</td>')
            elif isinstance(v, bool):
                cells.append(flag_cell(v))
            elif isinstance(v, int | float):
                cells.append(f'<td class="num">{escape(fmt(v))}</td>')
            else:
                cells.append(f"<td>{escape(fmt(v))}</td>")
        mark = ' class="flag"' if k < len(flagged) and flagged[k] else ""
        body.append(f"<tr{mark}>{''.join(cells)}</tr>")
    table = f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"
    return f'<div style="overflow-x:auto">{table}</div>'


def diff_chart(rows: Sequence[CompareRow], title: str) -> str:
    """Per scenario and model pair: the corrected difference (dot, coloured by verdict) with its bootstrap
    95% interval (whiskers), zero, and the ±tolerance band shaded. The axis spans the data and the band."""
    drawn = [r for r in rows if r.corrected is not None]
    if not drawn:
        return ""
    tol = max(r.tolerance for r in drawn)
    ends = [v for r in drawn for v in (r.ci_low, r.ci_high, r.corrected) if v is not None] + [-1.5 * tol, 1.5 * tol]
    lo, hi = min(ends), max(ends)
    pad = (hi - lo) * 0.05 or 0.1
    lo, hi = lo - pad, hi + pad
    labels = [
        f"{r.scenario} · {r.model}" + ("" if r.model == r.baseline_model else f" vs {r.baseline_model}") for r in drawn
    ]
    left = max(140, 14 + 7 * max(len(s) for s in labels))
    width, row_h = left + 560, 24
    height = 44 + row_h * len(drawn)

    def x(v: float) -> float:
        return left + (v - lo) / (hi - lo) * (width - 20 - left)

    if not drawn[0].higher_is_better:
        title += " (lower is better: a negative difference is an improvement)"
    parts = [
        f'<svg class="chart diff" role="img" aria-label="{escape(title)}" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" xmlns="http://www.w3.org/2000/svg">',
        f'<text x="{left}" y="14" font-weight="bold">{escape(title)}</text>',
        f'<rect x="{x(-tol):.1f}" y="22" width="{x(tol) - x(-tol):.1f}" height="{height - 40}" fill="#eaf4ea"/>',
        f'<line x1="{x(0):.1f}" x2="{x(0):.1f}" y1="22" y2="{height - 18}" stroke="#999"/>',
    ]
    for k in range(5):
        v = lo + (hi - lo) * k / 4
        parts.append(f'<text x="{x(v):.1f}" y="{height - 4}" text-anchor="middle" fill="#666">{v:.2f}</text>')
    for i, (r, label) in enumerate(zip(drawn, labels, strict=True)):
        y = 36 + i * row_h
        colour = VERDICT_COLOURS.get(r.verdict, "#222")
        parts.append(f'<text x="{left - 8}" y="{y + 4}" text-anchor="end">{escape(label)}</text>')
        if r.ci_low is not None and r.ci_high is not None:
            parts.append(
                f'<line x1="{x(r.ci_low):.1f}" x2="{x(r.ci_high):.1f}" y1="{y}" y2="{y}" stroke="{colour}" '
                'stroke-width="3"/>'
            )
        assert r.corrected is not None
        parts.append(
            f'<circle cx="{x(r.corrected):.1f}" cy="{y}" r="5" fill="{colour}">'
            f"<title>{escape(label)}: {escape(r.verdict)}, {escape(fmt(r.corrected))}</title></circle>"
        )
    parts.append("</svg>")
    return "".join(parts)


def charts_by_dimension(result: VersionComparison) -> list[tuple[str, list[CompareRow]]]:
    """The verdict rows grouped by dimension, in table order: one chart each (a dimension's rows share its
    units and tolerance)."""
    groups: dict[str, list[CompareRow]] = {}
    for r in result.comparison.rows:
        groups.setdefault(r.dimension, []).append(r)
    return list(groups.items())


def to_html(result: VersionComparison) -> str:
    c = result.comparison
    title = f"Blind Review comparison: {result.candidate} against {result.baseline}"
    body = [
        f"<h1>{escape(title)}</h1>",
        f'<p class="muted">{escape(str(c.mode))} mode · tolerance {c.tolerance:g} points (overall and win rates '
        f"{c.tolerance_share:g}) · seed {c.seed} · {c.rounds} bootstrap rounds · model names are shown unblinded.</p>",
        f'<p class="summary">{escape(headline(result))}</p>',
    ]
    body += [f'<p class="warn">{escape(n)}</p>' for n in lead_notes(result)]
    body += ["<h2>Verdicts</h2>", f'<p class="muted">{escape(MULTIPLICITY_NOTE)}</p>']
    if c.rows:
        body.append(html_table(VERDICT_BRIEF, [verdict_cells(r) for r in c.rows]))
        body.append("<h2>Differences per scenario (corrected, 95% bootstrap CI; shaded: ±tolerance)</h2>")
        body += [diff_chart(rows, f"{dim} ({rows[0].unit})") for dim, rows in charts_by_dimension(result)]
    else:
        body.append("<p>No verdicts: see the notes above.</p>")
    body += ["<h2>Behaviour drift</h2>", f'<p class="muted">{escape(DRIFT_NOTE)}</p>']
    if result.drift:
        body.append(html_table(DRIFT_BRIEF, [drift_cells(d) for d in result.drift], [d.flag for d in result.drift]))
    else:
        body.append("<p>No model has outputs in a scenario on both sides.</p>")
    return html_page(title, body)


def render_comparison(result: VersionComparison, fmt_name: str) -> str:
    """``result`` in one of :data:`FORMATS`; raises ValueError for another format name."""
    return render_with({"json": to_json, "csv": to_csv, "md": to_markdown, "html": to_html}, result, fmt_name)


def drift_rows_of(result: VersionComparison) -> Sequence[DriftRow]:
    """The drift rows (flagged first keeps their order otherwise), for tables that lead with what moved."""
    return sorted(result.drift, key=lambda d: not d.flag)
