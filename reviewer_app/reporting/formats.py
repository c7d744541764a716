"""Render a :class:`~reviewer_app.domain.report.Report` as JSON, CSV or Markdown (HTML: see ``html.py``).

Tables take their columns from the row types (``RankingRow.COLUMNS`` ...). Markdown and CSV show the
``brief`` columns only, and Markdown puts a CI in one "low – high" column.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Iterable, Sequence
from importlib import resources
from typing import Any

from reviewer_app.domain.report import (
    AgreementRow,
    Column,
    RankingRow,
    Report,
    ReviewerRow,
    WeightSensitivityRow,
    report_to_dict,
)

FORMATS = ("json", "csv", "md", "html")


def _brief_fields(*tables: tuple[Column, ...]) -> list[str]:
    names: dict[str, None] = {}
    for columns in tables:
        names.update((c.name, None) for c in columns if c.brief_header is not None)
    return list(names)


# One long table: the ranking and agreement rows side by side, under their field names.
CSV_COLUMNS = ["section", "scenario", *_brief_fields(RankingRow.COLUMNS, AgreementRow.COLUMNS)]


def load_schema() -> dict[str, Any]:
    """The JSON schema of the report (shipped as package data next to this module)."""
    text = resources.files("reviewer_app.reporting").joinpath("schema.json").read_text("utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


def to_json(report: Report) -> str:
    return json.dumps(report_to_dict(report), indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def to_csv(report: Report) -> str:
    """One long table: ranking rows and agreement rows, per scenario and for "(overall)"/"(composite)"."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)

    def write(section: str, scenario: str, rows: Iterable[object]) -> None:
        for row in rows:
            given = {"section": section, "scenario": scenario}
            writer.writerow([given[c] if c in given else getattr(row, c, None) for c in CSV_COLUMNS])

    blocks = [(s.scenario, s.ranking, s.agreement) for s in report.scenarios]
    blocks.append(("(overall)", report.overall.ranking, report.overall.agreement))
    for name, ranking, agreement in blocks:
        write("ranking", name, ranking)
        write("agreement", name, agreement)
    write("composite", "(composite)", report.overall.composite.ranking)
    return buf.getvalue()


def fmt(x: Any, digits: int = 2) -> str:
    """A table cell as text: "–" for a missing value, floats to ``digits`` decimals."""
    if x is None:
        return "–"
    if isinstance(x, float):
        return f"{x:.{digits}f}"
    return str(x)


def _md_table(headers: list[str], rows: list[list[Any]]) -> str:
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(fmt(c) for c in r) + " |" for r in rows]
    return "\n".join(lines)


def _ci_cell(row: Any) -> str:
    return f"{fmt(row.ci_low)} – {fmt(row.ci_high)}"


def _md_rows(columns: tuple[Column, ...], rows: Sequence[object]) -> str:
    """A Markdown table of the brief columns; a ``ci_low`` / ``ci_high`` pair becomes one "95% CI" column."""
    shown: list[tuple[str, Callable[[Any], object]]] = []
    for c in columns:
        header = c.brief_header
        if header is None or c.name == "ci_high":
            continue
        shown.append(("95% CI", _ci_cell) if c.name == "ci_low" else (header, c.cell))
    return _md_table([h for h, _ in shown], [[cell(r) for _, cell in shown] for r in rows])


def to_markdown(report: Report) -> str:
    m = report.methods
    out = [
        f"# Blind Review report: {report.batch}",
        "",
        f"Generated {report.generated_at} · {report.mode} mode · seed {m.seed} · {m.bootstrap_rounds} bootstrap rounds",
        "",
    ]
    comp = report.overall.composite
    out += [
        "## Composite",
        "",
        comp.summary,
        "",
        _md_rows(RankingRow.COLUMNS, comp.ranking),
        "",
        "Weights: " + ", ".join(f"{k} {v:g}" for k, v in comp.weights.items()),
        "",
    ]
    ws = report.overall.weight_sensitivity
    if ws.models:
        out += [f"Over {ws.draws} random weightings:", "", _md_rows(WeightSensitivityRow.COLUMNS, ws.models), ""]
    for block in report.scenarios:
        out += [f"## {block.scenario} ({block.n_samples} samples)", ""]
        out += [f"- {line}" for line in block.summary.values()]
        out += [f"- ⚠ {w}" for w in block.warnings]
        out += ["", _md_rows(RankingRow.COLUMNS, block.ranking), "", "Agreement:", ""]
        out += [_md_rows(AgreementRow.COLUMNS, block.agreement), ""]
    ov = report.overall
    out += ["## All scenarios", ""] + [f"- {line}" for line in ov.summary.values()]
    out += ["", _md_rows(RankingRow.COLUMNS, ov.ranking), "", _md_rows(AgreementRow.COLUMNS, ov.agreement), ""]
    if report.reviewers:
        out += ["## Reviewers", "", _md_rows(ReviewerRow.COLUMNS, report.reviewers), ""]
    out += ["## Methods", ""] + [f"- {d}" for d in m.definitions] + [""]
    return "\n".join(out)


def render(report: Report, fmt_name: str) -> str:
    """The report in one of :data:`FORMATS`; raises ValueError for another format name."""
    if fmt_name == "json":
        return to_json(report)
    if fmt_name == "csv":
        return to_csv(report)
    if fmt_name == "md":
        return to_markdown(report)
    if fmt_name == "html":
        from reviewer_app.reporting.html import to_html

        return to_html(report)
    raise ValueError(f"unknown format {fmt_name!r}; use one of {', '.join(FORMATS)}")
