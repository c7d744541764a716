"""Render the production monitor (``domain.production.MonitorResult``) as JSON, CSV, Markdown or HTML.

Every format reads in one order: the headline (the flagged changes first, each with its test), then the
flagged changes, the windows (per model, then per model and scenario) and every test made. Model and
scenario names come from feedback files and are untrusted: HTML escapes every one, Markdown lets none open
a tag, CSV makes none a spreadsheet formula. The HTML file is self-contained (inline CSS and SVG, nothing
loaded from elsewhere): per feedback scale, the feedback per window and model with its 95% CI as a band,
and latency p50 (solid) and p95 (dashed) per window and model.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from html import escape
from typing import Any

from reviewer_app.domain.csv_safety import neutralise_cell
from reviewer_app.domain.production import ChangeRow, MonitorResult, PanelProduction, ProductionModel, WindowRow, plain
from reviewer_app.reporting.compare import html_table, md_table
from reviewer_app.reporting.formats import FORMATS as FORMATS  # the formats its callers offer
from reviewer_app.reporting.formats import fmt, render_with
from reviewer_app.reporting.history import SCENARIO_COLOURS
from reviewer_app.reporting.html import html_page
from reviewer_app.reporting.markdown_safety import inert_markdown

__all__ = [
    "CHANGE_COLUMNS",
    "FORMATS",
    "WINDOW_COLUMNS",
    "WINDOW_NOTE",
    "change_cells",
    "change_sentence",
    "headline",
    "production_html",
    "production_markdown",
    "render_monitor",
    "scales",
    "window_cells",
]

WINDOW_COLUMNS: tuple[tuple[str, str], ...] = (
    ("model", "model"),
    ("scenario", "scenario"),
    ("scale", "scale"),
    ("window", "window from"),
    ("n", "events"),
    ("mean", "feedback"),
    ("ci_low", "95% CI low"),
    ("ci_high", "95% CI high"),
    ("ci_method", "CI"),
    ("latency_n", "latency n"),
    ("latency_p50", "latency p50 ms"),
    ("latency_p95", "latency p95 ms"),
    ("ttft_n", "TTFT n"),
    ("ttft_p50", "TTFT p50 ms"),
    ("ttft_p95", "TTFT p95 ms"),
)
CHANGE_COLUMNS: tuple[tuple[str, str], ...] = (
    ("kind", "kind"),
    ("model", "model"),
    ("against", "against"),
    ("scenario", "scenario"),
    ("scale", "scale"),
    ("metric", "metric"),
    ("before_window", "before (window)"),
    ("window", "after (window)"),
    ("before", "before"),
    ("after", "after"),
    ("change", "change"),
    ("n_before", "n before"),
    ("n_after", "n after"),
    ("test", "test"),
    ("p_value", "p"),
    ("p_adjusted", "p (Holm)"),
    ("flagged", "flagged"),
)
CSV_COLUMNS = ["section", *dict.fromkeys([f for f, _ in WINDOW_COLUMNS] + [f for f, _ in CHANGE_COLUMNS])]
METRIC_WORDS = {"feedback": "feedback", "latency_ms": "median latency", "ttft_ms": "median time to first token"}
WINDOW_NOTE = (
    "Windows are UTC calendar days (1d) or ISO weeks from Monday (7d). Thumbs feedback is the share of +1 with "
    "Wilson's 95% interval; other scales the mean with the t interval. Each window is tested against the model's "
    "previous window with events, a canary against its current model in each shared window and overall: feedback "
    "by the two-proportion z-test (Fisher's exact test for small counts) or Welch's t-test, latency and time to "
    "first token by the Mann-Whitney U test. All p-values of the monitor are Holm-adjusted together; a change is "
    "flagged at adjusted p < 0.05."
)


def _value(metric: str, scale: str, x: float) -> str:
    if metric != "feedback":
        return f"{x:.0f} ms"
    return f"{100 * x:.1f}%" if scale == "thumbs" else fmt(x)


def change_sentence(c: ChangeRow) -> str:
    """One flagged (or not) change in words, with its test and adjusted p."""
    what = METRIC_WORDS[c.metric] + ("" if c.metric != "feedback" or c.scale == "thumbs" else f" ({c.scale})")
    p = "p < 0.0001" if c.p_adjusted < 1e-4 else f"p = {c.p_adjusted:.2g}"
    before, after = _value(c.metric, c.scale, c.before), _value(c.metric, c.scale, c.after)
    if c.kind == "canary":
        when = "over all shared windows" if c.window == "overall" else f"in the window from {c.window}"
        direction = "higher" if c.change > 0 else "lower"
        return (
            f"Canary {c.model} against {c.against}: {what} {direction}, {after} against {before} {when} "
            f"({c.test}, Holm-adjusted {p})."
        )
    where = c.model + (f" in {c.scenario}" if c.scenario else "")
    verb = "rose" if c.change > 0 else "fell"
    return (
        f"{where}: {what} {verb} from {before} to {after} in the window from {c.window} (against {c.before_window}; "
        f"{c.test}, Holm-adjusted {p})."
    )


def headline(result: MonitorResult) -> str:
    """One sentence: the events and models, then the flagged changes or that there are none."""
    head = (
        f"{result.events} event(s) of {len(result.models)} model(s), {result.first_event} to {result.last_event}, "
        f"in {result.window} windows."
    )
    flagged = result.flagged
    if not flagged:
        return head + f" No significant change among {len(result.changes)} test(s)."
    return head + f" {len(flagged)} significant change(s) among {len(result.changes)} test(s)."


def window_cells(r: WindowRow) -> list[Any]:
    return [getattr(r, f) for f, _ in WINDOW_COLUMNS]


def change_cells(c: ChangeRow) -> list[Any]:
    return [getattr(c, f) for f, _ in CHANGE_COLUMNS]


def to_json(result: MonitorResult) -> str:
    data = {"headline": headline(result), "flagged": [change_sentence(c) for c in result.flagged], **plain(result)}
    return json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def to_csv(result: MonitorResult) -> str:
    """The windows (section ``window``) then the tests (section ``change``), one row each."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for section, rows in (("window", result.windows), ("change", result.changes)):
        for row in rows:
            values = plain(row) | {"section": section}
            writer.writerow([neutralise_cell(values.get(c)) for c in CSV_COLUMNS])
    return buf.getvalue()


def to_markdown(result: MonitorResult) -> str:
    out = ["# Blind Review production monitor", "", "Model names unblinded.", "", headline(result), ""]
    out += [f"- {change_sentence(c)}" for c in result.flagged]
    out += [f"- {n}" for n in result.notes] + ["", WINDOW_NOTE, ""]
    out += ["## Flagged changes", ""]
    flagged = result.flagged
    out += [md_table([h for _, h in CHANGE_COLUMNS], [change_cells(c) for c in flagged]) if flagged else "None.", ""]
    out += ["## Windows", "", md_table([h for _, h in WINDOW_COLUMNS], [window_cells(r) for r in result.windows]), ""]
    out += ["## Every test", "", md_table([h for _, h in CHANGE_COLUMNS], [change_cells(c) for c in result.changes])]
    return inert_markdown("\n".join(out) + "\n")


def time_chart(
    series: dict[str, list[tuple[str, float, float | None, float | None]]],
    title: str,
    *,
    dashed: dict[str, list[tuple[str, float]]] | None = None,
    percent: bool = False,
) -> str:
    """Inline SVG: windows left to right, one line per series (colour per name, as the history charts), an
    optional 95% CI band around it (the points' low and high), and optional dashed lines in the same colours."""
    dashed = dashed or {}
    labels = sorted({w for pts in series.values() for w, *_ in pts} | {w for pts in dashed.values() for w, _ in pts})
    values = [v for pts in series.values() for _, y, lo, hi in pts for v in (y, lo, hi) if v is not None]
    values += [y for pts in dashed.values() for _, y in pts]
    if not labels or not values:
        return ""
    lo_v, hi_v = min(values), max(values)
    if hi_v - lo_v < 1e-9:
        lo_v, hi_v = lo_v - 0.5, hi_v + 0.5
    width, height, left, top, bottom = 720, 280, 60, 24, 60
    step = (width - left - 20) / max(1, len(labels) - 1)

    def x(label: str) -> float:
        return left + labels.index(label) * step if len(labels) > 1 else left + (width - left) / 2

    def y(v: float) -> float:
        return top + (hi_v - v) / (hi_v - lo_v) * (height - top - bottom)

    def tick(v: float) -> str:
        return f"{100 * v:.0f}%" if percent else fmt(v)

    parts = [
        f'<svg class="chart" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" '
        f'aria-label="{escape(title)}">',
        f'<text x="{left}" y="14" font-size="12">{escape(title)}</text>',
        f'<line x1="{left}" y1="{height - bottom}" x2="{width - 10}" y2="{height - bottom}" stroke="#999"/>',
        f'<text x="4" y="{y(hi_v) + 4:.1f}" font-size="10">{escape(tick(hi_v))}</text>',
        f'<text x="4" y="{y(lo_v) + 4:.1f}" font-size="10">{escape(tick(lo_v))}</text>',
    ]
    every = -(-len(labels) // 8)  # at most eight dates under the axis: more would overlap
    for k, label in enumerate(labels):
        if k % every == 0:
            parts.append(
                f'<text x="{x(label):.1f}" y="{height - bottom + 14}" font-size="10" '
                f'text-anchor="middle">{escape(label)}</text>'
            )
    names = list(dict.fromkeys([*series, *dashed]))
    for k, name in enumerate(names):
        colour = SCENARIO_COLOURS[k % len(SCENARIO_COLOURS)]
        pts = sorted(series.get(name, []))
        band = [(w, lo, hi) for w, _, lo, hi in pts if lo is not None and hi is not None]
        if len(band) > 1:
            upper = " ".join(f"{x(w):.1f},{y(hi):.1f}" for w, _, hi in band)
            lower = " ".join(f"{x(w):.1f},{y(lo):.1f}" for w, lo, _ in reversed(band))
            parts.append(f'<polygon points="{upper} {lower}" fill="{colour}" fill-opacity="0.15" stroke="none"/>')
        if pts:
            path = " ".join(f"{x(w):.1f},{y(v):.1f}" for w, v, _, _ in pts)
            parts.append(f'<polyline points="{path}" fill="none" stroke="{colour}" stroke-width="1.8"/>')
            for w, v, lo, hi in pts:
                tip = f"{name} {w}: {tick(v)}" + (
                    f" (95% CI {tick(lo)} to {tick(hi)})" if lo is not None and hi is not None else ""
                )
                dot = f'<circle cx="{x(w):.1f}" cy="{y(v):.1f}" r="3" fill="{colour}">'
                parts.append(f"{dot}<title>{escape(tip)}</title></circle>")
        dash = sorted(dashed.get(name, []))
        if dash:
            path = " ".join(f"{x(w):.1f},{y(v):.1f}" for w, v in dash)
            parts.append(
                f'<polyline points="{path}" fill="none" stroke="{colour}" stroke-width="1.5" stroke-dasharray="5,4"/>'
            )
        parts.append(
            f'<text x="{left + 130 * (k % 5)}" y="{height - 22 + 14 * (k // 5)}" font-size="11" '
            f'fill="{colour}">■ {escape(name)}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)


def feedback_series(
    rows: Sequence[WindowRow], scale: str
) -> dict[str, list[tuple[str, float, float | None, float | None]]]:
    """Per model (all scenarios), its feedback per window with the CI: what the charts draw."""
    out: dict[str, list[tuple[str, float, float | None, float | None]]] = {}
    for r in rows:
        if r.scenario is None and r.scale == scale:
            out.setdefault(r.model, []).append((r.window, r.mean, r.ci_low, r.ci_high))
    return out


def latency_series(rows: Sequence[WindowRow], quantile: str) -> dict[str, list[tuple[str, float]]]:
    """Per model (all scenarios, every scale together), the latency ``quantile`` ("p50"/"p95") per window."""
    out: dict[str, list[tuple[str, float]]] = {}
    seen: set[tuple[str, str]] = set()
    for r in rows:
        value = getattr(r, f"latency_{quantile}")
        if r.scenario is None and value is not None and (r.model, r.window) not in seen:
            seen.add((r.model, r.window))
            out.setdefault(r.model, []).append((r.window, float(value)))
    return out


def scales(result: MonitorResult) -> list[str]:
    return list(dict.fromkeys(r.scale for r in result.windows))


def to_html(result: MonitorResult) -> str:
    title = "Blind Review production monitor"
    body = [f"<h1>{escape(title)}</h1>", '<p class="muted">Model names unblinded.</p>']
    body.append(f'<p class="summary">{escape(headline(result))}</p>')
    body += [f'<p class="warn">{escape(change_sentence(c))}</p>' for c in result.flagged]
    body += [f'<p class="muted">{escape(n)}</p>' for n in [*result.notes, WINDOW_NOTE]]
    body.append("<h2>Flagged changes</h2>")
    flagged = result.flagged
    body.append(
        html_table([h for _, h in CHANGE_COLUMNS], [change_cells(c) for c in flagged]) if flagged else "<p>None.</p>"
    )
    body.append("<h2>Over time</h2>")
    for scale in scales(result):
        thumbs = scale == "thumbs"
        label = "thumbs-up rate" if thumbs else f"mean feedback ({scale})"
        body.append(
            time_chart(feedback_series(result.windows, scale), f"{label} per window, 95% CI shaded", percent=thumbs)
        )
    p50, p95 = latency_series(result.windows, "p50"), latency_series(result.windows, "p95")
    if p50:
        body.append(
            time_chart(
                {m: [(w, v, None, None) for w, v in pts] for m, pts in p50.items()},
                "latency per window, ms: median (solid) and p95 (dashed)",
                dashed=p95,
            )
        )
    body += ["<h2>Windows</h2>", html_table([h for _, h in WINDOW_COLUMNS], [window_cells(r) for r in result.windows])]
    body += [
        "<h2>Every test</h2>",
        html_table([h for _, h in CHANGE_COLUMNS], [change_cells(c) for c in result.changes]),
    ]
    return html_page(title, body)


def render_monitor(result: MonitorResult, fmt_name: str) -> str:
    """``result`` in one of :data:`FORMATS`; raises ValueError for another format name."""
    return render_with({"json": to_json, "csv": to_csv, "md": to_markdown, "html": to_html}, result, fmt_name)


def production_markdown(result: PanelProduction) -> str:
    """The panel-versus-production section as Markdown (for the lead to attach to a batch report)."""
    out = [f"## Panel and production ({result.dimension}; production feedback {result.scale or 'none'})", ""]
    out += [f"- {s}" for s in result.sentences] + [f"- {n}" for n in result.notes]
    if result.models:
        out += ["", md_table(PRODUCTION_HEADERS, [_production_cells(m) for m in result.models])]
    return inert_markdown("\n".join(out) + "\n")


PRODUCTION_HEADERS = ("model", "panel rank", "panel score", "production", "95% CI", "events")


def _production_cells(m: ProductionModel) -> list[object]:
    return [m.model, m.panel_rank, m.panel_score, m.mean, f"{fmt(m.ci_low)} – {fmt(m.ci_high)}", m.n]


def production_html(result: PanelProduction) -> str:
    """The same section as HTML, for the batch report's page."""
    title = f"Panel and production ({result.dimension}; production feedback {result.scale or 'none'})"
    items = "".join(f"<li>{escape(s)}</li>" for s in (*result.sentences, *result.notes))
    table = html_table(PRODUCTION_HEADERS, [_production_cells(m) for m in result.models]) if result.models else ""
    return f"<h2>{escape(title)}</h2><ul>{items}</ul>{table}"
