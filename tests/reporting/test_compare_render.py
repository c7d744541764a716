"""The comparison's renderers (``reporting.compare``): the JSON holds its schema, every format says what a
reader must know (no anchors), and hostile names (batch files are untrusted) stay text in every format."""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import re
from html.parser import HTMLParser

import jsonschema
import pytest

from reviewer_app.domain.enums import Mode
from reviewer_app.domain.versions import CompareRow, Comparison, DriftRow, ModelPair, VersionComparison
from reviewer_app.reporting.compare import CSV_COLUMNS, load_compare_schema, render_comparison
from reviewer_app.versions.batch_compare import NO_ANCHORS_NOTE

EVIL_MODEL = '<script>alert("m")</script>|x'
EVIL_SCENARIO = '=HYPERLINK("http://evil")<img src=x onerror=alert(1)>'
EVIL_BATCH = "v2</title><iframe src=//evil>"


ALLOWED_TAGS = {"html", "head", "meta", "title", "style", "body", "h1", "h2", "p", "div", "table", "thead", "tbody",
                "tr", "th", "td", "svg", "text", "rect", "line", "circle"}  # fmt: skip


class _Tags(HTMLParser):
    """Every tag and attribute name in a page, as a browser's parser reads them."""

    def __init__(self) -> None:
        super().__init__()
        self.names: set[str] = set()
        self.attributes: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.names.add(tag)
        self.attributes.update(name for name, _ in attrs)


def _row(scenario: str, model: str, dimension: str, verdict: str, corrected: float, **over: object) -> CompareRow:
    base: dict[str, object] = {
        "scenario": scenario,
        "dimension": dimension,
        "model": model,
        "baseline_model": "base-model",
        "unit": "points",
        "higher_is_better": True,
        "tolerance": 0.25,
        "baseline_score": 4.0,
        "candidate_score": 4.0 + corrected,
        "diff": corrected,
        "diff_ci_low": corrected - 0.2,
        "diff_ci_high": corrected + 0.2,
        "panel_shift": None,
        "shift_ci_low": None,
        "shift_ci_high": None,
        "corrected": corrected,
        "ci_low": corrected - 0.2,
        "ci_high": corrected + 0.2,
        "ci_mc_se": 0.004,
        "decision_low": corrected - 0.21,
        "decision_high": corrected + 0.21,
        "verdict": verdict,
        "samples_needed": None,
        "n": 40,
        "n_anchors": 0,
    }
    base.update(over)
    return CompareRow(**base)  # type: ignore[arg-type]


def _result() -> VersionComparison:
    rows = (
        _row(EVIL_SCENARIO, EVIL_MODEL, "correctness", "regression", -0.8),
        _row(
            EVIL_SCENARIO,
            EVIL_MODEL,
            "overall",
            "inconclusive",
            -0.04,
            unit="share",
            tolerance=0.05,
            samples_needed=160,
        ),  # fmt: skip
        _row("qa", "plain", "correctness", "no change", 0.01, baseline_model="plain"),
    )
    drift = (
        DriftRow(
            EVIL_SCENARIO,
            EVIL_MODEL,
            "base-model",
            "refusal_rate",
            0.0,
            0.33,
            0.33,
            0.0004,
            True,
            30,
            30,
            "Fisher's exact test, one output per sample",
            "changed by >= 2 points and p < 0.01",
        ),  # fmt: skip
        DriftRow(
            "qa",
            "plain",
            "plain",
            "length_words_median",
            10.0,
            10.0,
            0.0,
            0.9,
            False,
            30,
            30,
            "Mann-Whitney over per-sample means",
            "changed by >= 10% and p < 0.01",
        ),  # fmt: skip
    )
    comparison = Comparison(
        mode=Mode.RATING,
        pairs=(ModelPair("base-model", EVIL_MODEL), ModelPair("plain", "plain")),
        rows=rows,
        tolerance=0.25,
        tolerance_share=0.05,
        seed=1,
        rounds=1000,
    )
    return VersionComparison(
        baseline="v1",
        candidate=EVIL_BATCH,
        comparison=comparison,
        drift=drift,
        unpaired_baseline=(),
        unpaired_candidate=("<b>new</b>",),
        shared_samples=40,
        baseline_only_samples=2,
        candidate_only_samples=0,
        has_anchors=False,
        notes=(NO_ANCHORS_NOTE,),
    )


def test_json_holds_the_schema_and_the_issues_keys() -> None:
    data = json.loads(render_comparison(_result(), "json"))
    jsonschema.validate(data, load_compare_schema())
    assert {"baseline", "candidate", "tolerance", "scenarios", "drift"} <= set(data)
    model = data["scenarios"][0]["models"][0]
    issue_keys = {"model", "baseline_model", "baseline_score", "candidate_score", "diff", "ci_low", "ci_high"}
    assert issue_keys | {"panel_shift", "verdict", "n"} <= set(model)
    assert set(data["drift"][0]) >= {
        "scenario",
        "model",
        "metric",
        "baseline",
        "candidate",
        "change",
        "p_value",
        "flag",
    }
    assert data["scenarios"][0]["scenario"] == EVIL_SCENARIO and model["model"] == EVIL_MODEL  # as typed
    assert data["candidate"] == EVIL_BATCH and NO_ANCHORS_NOTE in data["notes"]


def test_schema_lists_every_field_of_the_row_types() -> None:
    """A field added to CompareRow or DriftRow without the schema (or the other way round) fails here."""
    defs = load_compare_schema()["$defs"]
    compare_fields = {f.name for f in dataclasses.fields(CompareRow)} - {"scenario", "dimension"}
    assert set(defs["CompareRow"]["properties"]) == compare_fields == set(defs["CompareRow"]["required"])
    drift_fields = {f.name for f in dataclasses.fields(DriftRow)}
    assert set(defs["DriftRow"]["properties"]) == drift_fields == set(defs["DriftRow"]["required"])
    broken = json.loads(render_comparison(_result(), "json"))
    broken["scenarios"][0]["models"][0]["verdict"] = "worse"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(broken, load_compare_schema())


def test_html_is_self_contained_escaped_and_reads_verdicts_charts_drift() -> None:
    page = render_comparison(_result(), "html")
    tags = _Tags()
    tags.feed(page)
    assert tags.names <= ALLOWED_TAGS, tags.names - ALLOWED_TAGS
    assert not [a for a in tags.attributes if a == "src" or a == "href" or a.startswith("on")]
    assert "@import" not in page and "url(" not in page
    assert "&lt;script&gt;alert(&quot;m&quot;)&lt;/script&gt;|x" in page
    assert NO_ANCHORS_NOTE.replace("'", "&#x27;") in page or NO_ANCHORS_NOTE in page
    verdicts, chart, drift = page.index("<h2>Verdicts"), page.index("<svg"), page.index("<h2>Behaviour drift")
    assert verdicts < chart < drift
    assert page.count('<svg class="chart diff"') == 2  # one per dimension (correctness, overall)
    assert 'fill="#eaf4ea"' in page  # the tolerance band
    assert "#c1121f" in page  # a regression's colour


def test_markdown_opens_no_tag_and_keeps_its_tables_whole() -> None:
    text = render_comparison(_result(), "md")
    assert "<" not in text
    assert NO_ANCHORS_NOTE in text and "&lt;script>" in text
    tables: list[list[str]] = [[]]
    for line in text.splitlines():
        if line.startswith("|"):
            tables[-1].append(line)
        elif tables[-1]:
            tables.append([])
    tables = [t for t in tables if t]
    assert len(tables) == 2  # verdicts, drift
    for table in tables:  # an escaped "|" in a name does not add a column
        assert len({len(re.split(r"(?<!\\)\|", line)) for line in table}) == 1, table
    assert sum(EVIL_MODEL.replace("<", "&lt;").replace("|", "\\|") in line for t in tables for line in t) == 3


def test_csv_cells_are_no_formulas_and_numbers_stay_numbers() -> None:
    text = render_comparison(_result(), "csv")
    table = list(csv.DictReader(io.StringIO(text)))
    assert list(table[0]) == CSV_COLUMNS
    sections = [r["section"] for r in table]
    assert sections.index("note") < sections.index("verdict") < sections.index("drift")
    evil = [r for r in table if r["section"] == "verdict" and r["model"] == EVIL_MODEL]
    assert evil and all(r["scenario"] == "'" + EVIL_SCENARIO for r in evil)
    assert evil[0]["diff"] == "-0.8" and evil[0]["verdict"] == "regression"
    assert any(r["note"] == NO_ANCHORS_NOTE for r in table)


def test_unknown_format_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown format 'pdf'"):
        render_comparison(_result(), "pdf")
