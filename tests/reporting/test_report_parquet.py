"""``report --format parquet``: the CSV's one long table with its numbers as numbers, every column typed even
when a section is empty, and never on standard output (it is binary)."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from sqlalchemy.engine import Engine

from reviewer_app.cli.main import main
from reviewer_app.reporting.formats import CSV_COLUMNS, render
from reviewer_app.reporting.report_parquet import report_schema, to_parquet
from reviewer_app.results.batch_reports import batch_report


def test_the_parquet_table_is_the_csv_table_typed(engine: Engine, demo: dict[str, str]) -> None:
    for batch in ("demo", "demo-pairwise"):
        report = batch_report(engine, batch=batch, rounds=100)
        table = pq.read_table(pa.BufferReader(to_parquet(report)))
        assert table.column_names == CSV_COLUMNS and table.schema == report_schema()
        rows = list(csv.reader(io.StringIO(render(report, "csv"))))[1:]
        assert len(rows) == table.num_rows > 0
        as_text = [["" if v is None else str(v) for v in r.values()] for r in table.to_pylist()]
        assert as_text == rows
    types = {f.name: str(f.type) for f in report_schema()}
    assert types["score"] == "double" and types["rank"] == "int64" and types["separated"] == "bool"
    assert types["level"] == "string" and types["model"] == "string"


def test_the_command_writes_parquet_to_a_file_only(
    engine: Engine, demo: dict[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "tables.parquet"
    assert main(["report", "demo", "--format", "parquet", "--rounds", "100", "--out", str(out)]) == 0
    assert capsys.readouterr().out.startswith(f"Wrote {out} (parquet): ")
    assert pq.read_table(out).num_rows > 0
    assert main(["report", "demo", "--format", "parquet", "--out", "-"]) == 1
    assert capsys.readouterr().err == (
        "error: --out -: Parquet is a binary file, not for standard output; give a file name\n"
    )
