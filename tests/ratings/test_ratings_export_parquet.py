"""``export-ratings --format parquet``: the rows and columns of the JSONL export, typed (a score a double when
every dimension is a score, else text), the judges' rows marked as in CSV, and no Parquet on standard output."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from sqlalchemy.engine import Engine

from reviewer_app.cli.main import main
from reviewer_app.errors import RatingsImportError
from reviewer_app.ratings.export import RATING_EXPORT_COLUMNS, export_ratings, export_rows
from reviewer_app.ratings.files import import_ratings
from tests.exports.builders import pairwise_batch, rating_batch
from tests.ratings.test_ratings_jsonl_scores import RATINGS, _loaded


def test_parquet_has_the_jsonl_rows_with_scores_as_doubles(engine: Engine, tmp_path: Path) -> None:
    rating_batch(engine, tmp_path)  # correctness (Likert) and follows_format (binary): every answer a score
    out = tmp_path / "r.parquet"
    assert export_ratings(engine, "scores", "parquet", out) == 22
    table = pq.read_table(out)
    assert table.column_names == list(RATING_EXPORT_COLUMNS)
    assert str(table.schema.field("score").type) == "double" and str(table.schema.field("is_anchor").type) == "bool"
    expected = [{**r, "score": float(r["score"])} for r in export_rows(engine, "scores")]
    assert table.to_pylist() == expected


def test_a_rubric_with_a_categorical_dimension_writes_scores_as_text(engine: Engine, tmp_path: Path) -> None:
    _loaded(engine, tmp_path)
    f = tmp_path / "r.csv"
    f.write_text(RATINGS, encoding="utf-8")
    import_ratings(engine, "b", f)
    out = tmp_path / "r.parquet"
    export_ratings(engine, "b", "parquet", out)
    scores = {(r["sample_id"], r["dimension"]): r["score"] for r in pq.read_table(out).to_pylist()}
    assert scores == {
        ("s0", "correctness"): "4",
        ("s0", "follows_format"): "1",
        ("s0", "tone"): "casual",
        ("s0", "quality"): "72.5",
        ("s1", "quality"): "3.0",
        ("s1", "correctness"): "2",
    }


def test_pairwise_parquet_and_the_judges_rows(engine: Engine, demo: dict[str, str], tmp_path: Path) -> None:
    pairwise_batch(engine, tmp_path)
    out = tmp_path / "p.parquet"
    export_ratings(engine, "pairs", "parquet", out)
    assert pq.read_table(out).to_pylist() == export_rows(engine, "pairs")
    buf = io.StringIO()
    n = export_ratings(engine, "demo-pairwise", "jsonl", None, stream=buf, with_judges=True)
    assert export_ratings(engine, "demo-pairwise", "parquet", out, with_judges=True) == n
    assert pq.read_table(out).to_pylist() == [json.loads(line) for line in buf.getvalue().splitlines()]
    kinds = pq.read_table(out).column("rater_kind").to_pylist()
    assert {"reviewer", "judge"} == set(kinds) and kinds.index("judge") > kinds.index("reviewer")


def test_parquet_needs_a_file(engine: Engine, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pairwise_batch(engine, tmp_path)
    with pytest.raises(RatingsImportError, match="out: Parquet is a binary file"):
        export_ratings(engine, "pairs", "parquet", None)
    assert main(["export-ratings", "pairs", "--format", "parquet"]) == 1
    assert capsys.readouterr().err.startswith("error: --out: Parquet is a binary file: give a file to write it to")
    out = tmp_path / "cli.parquet"
    assert main(["export-ratings", "pairs", "--format", "parquet", "--out", str(out)]) == 0
    assert pq.read_table(out).num_rows == 11 and "Wrote 11 rows" in capsys.readouterr().err
