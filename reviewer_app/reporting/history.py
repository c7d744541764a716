"""Render a model's history (``services.history.ModelHistory``) as JSON, CSV, Markdown or HTML.

Every format reads in one order: the headline (regressions first), the notes, the batches in load order with
the batch each follows up, then the points (batch, scenario, dimension: score, 95% CI, verdict against the
baseline batch). Names come from batch files and are untrusted: HTML escapes every one, Markdown lets none
open a tag, CSV makes none a spreadsheet formula. The HTML file is self-contained (inline CSS and SVG: per
dimension, the score and its CI per batch, one line per scenario, a regression ringed in red).
"""

from __future__ import annotations

import csv
import io
import json
from html import escape
from typing import TYPE_CHECKING, Any

from reviewer_app.domain.csv_safety import neutralise_cell
from reviewer_app.reporting.compare import VERDICT_COLOURS, html_table, md_table
from reviewer_app.reporting.formats import FORMATS as FORMATS  # the formats its callers offer
from reviewer_app.reporting.formats import fmt, render_with
from reviewer_app.reporting.html import html_page
from reviewer_app.reporting.markdown_safety import inert_markdown

__all__ = [
    "BATCH_COLUMNS",
    "FORMATS",
    "POINT_COLUMNS",
    "SCENARIO_COLOURS",
    "batch_cells",
    "headline",
    "point_cells",
    "render_history",
]

if TYPE_CHECKING:
    from reviewer_app.domain.versions import HistoryPoint, ModelHistory

# (field of HistoryPoint, heading): the points table of every format and of the page.
POINT_COLUMNS: tuple[tuple[str, str], ...] = (
    ("batch", "batch"),
    ("model", "model"),
    ("scenario", "scenario"),
    ("dimension", "dimension"),
    ("score", "score"),
    ("ci_low", "95% CI low"),
    ("ci_high", "95% CI high"),
    ("panel_ci_low", "95% CI low, new panel"),
    ("panel_ci_high", "95% CI high, new panel"),
    ("n", "n"),
    ("verdict", "verdict"),
    ("against", "against batch"),
    ("change", "change"),
    ("change_low", "change low"),
    ("change_high", "change high"),
)
BATCH_COLUMNS: tuple[tuple[str, str], ...] = (
    ("name", "batch"),
    ("loaded_at", "loaded"),
    ("follow_up_of", "follow-up of"),
    ("model", "model"),
    ("rated", "rated"),
    ("notes", "notes"),
)
CSV_COLUMNS = ["batch", "loaded_at", "follow_up_of", *(f for f, _ in POINT_COLUMNS[1:]), "against_model"]
SCENARIO_COLOURS = ("#1d3557", "#e07b00", "#2a9d8f", "#6a4c93", "#8d5524", "#457b9d", "#b5179e", "#588157")


def headline(history: ModelHistory) -> str:
    """One sentence: how many batches, and the regressions (where) or that there are none."""
    rated = sum(b.rated for b in history.batches)
    linked = sum(b.linked for b in history.batches)
    head = (
        f"{history.model}: {len(history.batches)} batch(es), {rated} with ratings, {linked} compared with "
        "the batch they follow up."
    )
    regressions = history.regressions
    if not regressions:
        return head + " No regression."
    where = sorted({f"{p.scenario} ({p.dimension}) in {p.batch}" for p in regressions})
    return head + f" {len(regressions)} regression(s): " + "; ".join(where) + "."


def point_cells(p: HistoryPoint) -> list[Any]:
    return [getattr(p, f) for f, _ in POINT_COLUMNS]


def batch_cells(history: ModelHistory) -> list[list[Any]]:
    return [
        [b.name, b.loaded_at.strftime("%Y-%m-%d %H:%M"), b.follow_up_of or "", b.model, b.rated, "; ".join(b.notes)]
        for b in history.batches
    ]


def to_json(history: ModelHistory) -> str:
    return json.dumps(history.as_dict(), indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def to_csv(history: ModelHistory) -> str:
    """One row per point, with its batch's load time and baseline (a batch without points has no row: the
    JSON lists every batch)."""
    follows = {b.name: b.follow_up_of for b in history.batches}
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for p in history.points:
        values = p.as_dict() | {"follow_up_of": follows.get(p.batch)}
        writer.writerow([neutralise_cell(values.get(c)) for c in CSV_COLUMNS])
    return buf.getvalue()


def _yes_no(value: bool) -> str:
    return f"<td>{'yes' if value else 'no'}</td>"


def to_markdown(history: ModelHistory) -> str:
    out = [f"# Blind Review history: {history.model}", ""]
    if history.also:
        out += [f"Also under earlier name(s): {', '.join(history.also)} · model names unblinded", ""]
    out += [headline(history), ""]
    out += [f"- {n}" for n in history.notes] + [""]
    out += ["## Batches", "", md_table([h for _, h in BATCH_COLUMNS], batch_cells(history), no="no"), ""]
    out += ["## Scores and verdicts", ""]
    out += [md_table([h for _, h in POINT_COLUMNS], [point_cells(p) for p in history.points], no="no"), ""]
    return inert_markdown("\n".join(out))


def _whisker(point: HistoryPoint) -> tuple[float | None, float | None]:
    """A point's whisker: the new panel's interval where there is one (rounds rated by other reviewers are
    compared by it), else this panel's."""
    if point.panel_ci_low is not None and point.panel_ci_high is not None:
        return point.panel_ci_low, point.panel_ci_high
    return point.ci_low, point.ci_high


def history_chart(history: ModelHistory, dimension: str) -> str:
    """Inline SVG: batches left to right in load order, the score with its 95% CI per scenario (whiskers: a
    new panel's interval where there is one), one line per scenario, a regression ringed in red."""
    batches = [b.name for b in history.batches]
    points = history.series(dimension)
    if not points:
        return ""
    values = [v for p in points for v in (p.score, *_whisker(p)) if v is not None]
    lo, hi = min(values), max(values)
    if hi - lo < 1e-9:
        lo, hi = lo - 0.5, hi + 0.5
    width, height, left, top, bottom = 640, 260, 56, 24, 56
    step = (width - left - 20) / max(1, len(batches) - 1) if len(batches) > 1 else 0.0

    def x(batch: str) -> float:
        return left + (batches.index(batch) * step if len(batches) > 1 else (width - left) / 2)

    def y(v: float) -> float:
        return top + (hi - v) / (hi - lo) * (height - top - bottom)

    parts = [
        f'<svg class="chart" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" '
        f'aria-label="{escape(dimension)} over batches">',
        f'<text x="{left}" y="14" font-size="12">{escape(dimension)}: score and 95% CI per batch</text>',
        f'<line x1="{left}" y1="{height - bottom}" x2="{width - 10}" y2="{height - bottom}" stroke="#999"/>',
        f'<text x="4" y="{y(hi) + 4:.1f}" font-size="10">{escape(fmt(hi))}</text>',
        f'<text x="4" y="{y(lo) + 4:.1f}" font-size="10">{escape(fmt(lo))}</text>',
    ]
    for b in batches:
        parts.append(
            f'<text x="{x(b):.1f}" y="{height - bottom + 14}" font-size="10" text-anchor="middle">{escape(b)}</text>'
        )
    scenarios = list(dict.fromkeys(p.scenario for p in points))
    for k, scen in enumerate(scenarios):
        colour = SCENARIO_COLOURS[k % len(SCENARIO_COLOURS)]
        mine = sorted((p for p in points if p.scenario == scen), key=lambda p: batches.index(p.batch))
        offset = (k - (len(scenarios) - 1) / 2) * 4  # scenarios side by side, so whiskers do not hide each other
        path = " ".join(f"{x(p.batch) + offset:.1f},{y(p.score or 0.0):.1f}" for p in mine)
        parts.append(f'<polyline points="{path}" fill="none" stroke="{colour}" stroke-width="1.5"/>')
        for p in mine:
            px, py = x(p.batch) + offset, y(p.score or 0.0)
            low, high = _whisker(p)
            if low is not None and high is not None:
                parts.append(
                    f'<line x1="{px:.1f}" y1="{y(low):.1f}" x2="{px:.1f}" y2="{y(high):.1f}" '
                    f'stroke="{colour}" stroke-width="2"/>'
                )
            parts.append(f'<circle cx="{px:.1f}" cy="{py:.1f}" r="3.5" fill="{colour}"/>')
            if p.verdict == "regression":
                parts.append(
                    f'<circle cx="{px:.1f}" cy="{py:.1f}" r="8" fill="none" stroke="{VERDICT_COLOURS["regression"]}" '
                    f'stroke-width="2"><title>regression against {escape(p.against or "")}</title></circle>'
                )
        parts.append(
            f'<text x="{left + 110 * k}" y="{height - 8}" font-size="11" fill="{colour}">■ {escape(scen)}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)


def to_html(history: ModelHistory) -> str:
    title = f"Blind Review history: {history.model}"
    body = [f"<h1>{escape(title)}</h1>"]
    if history.also:
        body.append(f'<p class="muted">Also under earlier name(s): {escape(", ".join(history.also))}</p>')
    body.append(f'<p class="summary">{escape(headline(history))}</p>')
    body += [f'<p class="muted">{escape(n)}</p>' for n in history.notes]
    body += ["<h2>Batches</h2>", html_table([h for _, h in BATCH_COLUMNS], batch_cells(history), flag_cell=_yes_no)]
    body.append("<h2>Scores over batches (regressions ringed in red)</h2>")
    body += [history_chart(history, d) for d in history.dimensions()]
    body += ["<h2>Scores and verdicts</h2>"]
    body.append(html_table([h for _, h in POINT_COLUMNS], [point_cells(p) for p in history.points], flag_cell=_yes_no))
    return html_page(title, body)


def render_history(history: ModelHistory, fmt_name: str) -> str:
    """``history`` in one of :data:`FORMATS`; raises ValueError for another format name."""
    return render_with({"json": to_json, "csv": to_csv, "md": to_markdown, "html": to_html}, history, fmt_name)
