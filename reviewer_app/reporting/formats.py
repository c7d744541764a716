"""Render a report dict as JSON, CSV or Markdown (HTML: see ``html_report.py``)."""

from __future__ import annotations

import csv
import io
import json
import math
from importlib import resources
from typing import Any

FORMATS = ("json", "csv", "md", "html")
CSV_COLUMNS = [
    "section",
    "scenario",
    "dimension",
    "model",
    "score",
    "ci_low",
    "ci_high",
    "rank",
    "tier",
    "n",
    "level",
    "alpha",
    "n_units",
    "n_ratings",
    "note",
]


def load_schema() -> dict[str, Any]:
    """The JSON schema of the report (shipped as package data)."""
    text = resources.files("reviewer_app.aggregation").joinpath("schema.json").read_text("utf-8")
    return json.loads(text)  # type: ignore[no-any-return]


def _clean(value: Any) -> Any:
    """JSON has no NaN: turn non-finite floats into null, recursively."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_clean(v) for v in value]
    return value


def to_json(report: dict[str, Any]) -> str:
    return json.dumps(_clean(report), indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def to_csv(report: dict[str, Any]) -> str:
    """One long table: ranking rows and agreement rows, per scenario and for "(overall)"/"(composite)"."""
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=CSV_COLUMNS, extrasaction="ignore", lineterminator="\n")
    writer.writeheader()
    blocks = [(s["scenario"], s) for s in report["scenarios"]] + [("(overall)", report["overall"])]
    for name, block in blocks:
        for row in block["ranking"]:
            writer.writerow({"section": "ranking", "scenario": name, **row})
        for row in block["agreement"]:
            writer.writerow({"section": "agreement", "scenario": name, **row})
    for row in report["overall"]["composite"]["ranking"]:
        writer.writerow({"section": "composite", "scenario": "(composite)", **row})
    return buf.getvalue()


def fmt(x: Any, digits: int = 2) -> str:
    if x is None:
        return "–"
    if isinstance(x, float):
        return f"{x:.{digits}f}"
    return str(x)


def _md_table(headers: list[str], rows: list[list[Any]]) -> str:
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(fmt(c) for c in r) + " |" for r in rows]
    return "\n".join(lines)


def _ranking_md(rows: list[dict[str, Any]]) -> str:
    return _md_table(
        ["dimension", "model", "score", "95% CI", "rank", "tier", "n"],
        [
            [
                r["dimension"],
                r["model"],
                r["score"],
                f"{fmt(r['ci_low'])} – {fmt(r['ci_high'])}",
                r["rank"],
                r["tier"],
                r["n"],
            ]
            for r in rows
        ],
    )


def _agreement_md(rows: list[dict[str, Any]]) -> str:
    return _md_table(
        ["dimension", "level", "alpha", "95% CI", "items", "ratings", "note"],
        [
            [
                r["dimension"],
                r["level"],
                r["alpha"],
                f"{fmt(r['ci_low'])} – {fmt(r['ci_high'])}",
                r["n_units"],
                r["n_ratings"],
                r["note"] or "",
            ]
            for r in rows
        ],
    )


def to_markdown(report: dict[str, Any]) -> str:
    m = report["methods"]
    out = [
        f"# Blind Review report: {report['batch']}",
        "",
        f"Generated {report['generated_at']} · {report['mode']} mode · seed {m['seed']} · "
        f"{m['bootstrap_rounds']} bootstrap rounds",
        "",
    ]
    comp = report["overall"]["composite"]
    out += [
        "## Composite",
        "",
        comp["summary"],
        "",
        _ranking_md(comp["ranking"]),
        "",
        "Weights: " + ", ".join(f"{k} {v:g}" for k, v in comp["weights"].items()),
        "",
    ]
    ws = report["overall"]["weight_sensitivity"]
    if ws.get("models"):
        out += [
            f"Over {ws['draws']} random weightings:",
            "",
            _md_table(
                ["model", "first in", "best rank", "worst rank", "median rank"],
                [
                    [r["model"], f"{r['share_first']:.0%}", r["rank_best"], r["rank_worst"], r["rank_median"]]
                    for r in ws["models"]
                ],
            ),
            "",
        ]
    for block in report["scenarios"]:
        out += [f"## {block['scenario']} ({block['n_samples']} samples)", ""]
        out += [f"- {line}" for line in block["summary"].values()]
        out += [f"- ⚠ {w}" for w in block["warnings"]]
        out += ["", _ranking_md(block["ranking"]), "", "Agreement:", "", _agreement_md(block["agreement"]), ""]
    ov = report["overall"]
    out += ["## All scenarios", ""] + [f"- {line}" for line in ov["summary"].values()]
    out += ["", _ranking_md(ov["ranking"]), "", _agreement_md(ov["agreement"]), ""]
    if report["reviewers"]:
        out += [
            "## Reviewers",
            "",
            _md_table(
                ["reviewer", "ratings", "leniency", "alpha change without", "gold", "self-consistency", "flag"],
                [
                    [
                        r["reviewer"],
                        r["n_ratings"],
                        r["leniency"],
                        r["alpha_change_without"],
                        r["gold_accuracy"],
                        r["self_consistency"],
                        "; ".join(r["reasons"]),
                    ]
                    for r in report["reviewers"]
                ],
            ),
            "",
        ]
    out += ["## Methods", ""] + [f"- {d}" for d in m["definitions"]] + [""]
    return "\n".join(out)


def render(report: dict[str, Any], fmt_name: str) -> str:
    """The report in one of :data:`FORMATS`."""
    if fmt_name == "json":
        return to_json(report)
    if fmt_name == "csv":
        return to_csv(report)
    if fmt_name == "md":
        return to_markdown(report)
    if fmt_name == "html":
        from reviewer_app.reporting.html import to_html

        return to_html(_clean(report))
    raise ValueError(f"unknown format {fmt_name!r}; use one of {', '.join(FORMATS)}")
