"""``export-ratings`` says which ratings are a follow-up's anchors (issue 10): an ``is_anchor`` column, the
last of every row, True on the anchor items' ratings (whose ``model`` is the baseline's) and False on every
other row and batch; ``import-ratings`` reads such an export back, refusing its anchor rows by line."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from sqlalchemy.engine import Engine

from reviewer_app.batches.loading import load_batch
from reviewer_app.errors import RatingsImportError
from reviewer_app.ratings.export import export_ratings, export_rows
from reviewer_app.ratings.files import import_ratings
from tests.helpers import write_batch
from tests.support.compare_chain import SAMPLE_EFFECT, SCENARIOS, load, rate_items, ratings, records


def _follow_up(engine: Engine, tmp_path: Path) -> int:
    load(engine, tmp_path, "v1", records({"m1": "m1", "m2": "m2"}))
    import_ratings(
        engine, "v1", ratings(tmp_path / "v1.csv", {(s, m): 3.5 for s in SCENARIOS for m in ("m1", "m2")}, seed=1)
    )
    batch = write_batch(tmp_path / "v2", records({"m1-v2": "m1", "m2": "m2"}))
    summary = load_batch(
        engine, [batch], None, name="v2", follow_up="v1", anchor_share=0.5, on_leak="flag", open_now=True
    )
    assert summary.anchor_items > 0
    rate_items(engine, summary.batch_id, lambda i, _m, _a: 3.5 + SAMPLE_EFFECT[i], seed=5)
    return summary.anchor_items


def test_anchor_ratings_are_marked_in_every_format(engine: Engine, tmp_path: Path) -> None:
    anchors = _follow_up(engine, tmp_path)
    rows = export_rows(engine, "v2")
    assert all(list(r)[-1] == "is_anchor" and list(r)[-3:-1] == ["comment", "cant_judge_reason"] for r in rows)
    marked = [r for r in rows if r["is_anchor"] is True]
    assert len(marked) == 3 * anchors  # three reviewers per item in rate_items
    assert {r["model"] for r in marked} <= {"m1", "m2"}  # the baseline's outputs, named as the baseline names them
    assert {r["model"] for r in rows if r["is_anchor"] is False} == {"m1-v2", "m2"}
    assert all(r["is_anchor"] is False for r in export_rows(engine, "v1"))
    csv_text = io.StringIO()
    assert export_ratings(engine, "v2", "csv", None, stream=csv_text) == len(rows)
    table = list(csv.reader(io.StringIO(csv_text.getvalue(), newline="")))
    assert table[0][-1] == "is_anchor"
    assert [r[-1] for r in table[1:]] == [str(r["is_anchor"]) for r in rows]  # True/False, as is_gold is written
    jsonl = io.StringIO()
    export_ratings(engine, "v2", "jsonl", None, stream=jsonl)
    assert [json.loads(line)["is_anchor"] for line in jsonl.getvalue().splitlines()] == [r["is_anchor"] for r in rows]


def test_an_export_imports_back_but_its_anchor_rows_are_refused_by_line(engine: Engine, tmp_path: Path) -> None:
    _follow_up(engine, tmp_path)
    load(engine, tmp_path, "copy", records({"m1-v2": "m1", "m2": "m2"}))
    path = tmp_path / "v2-export.csv"
    export_ratings(engine, "v2", "csv", path)
    with path.open(encoding="utf-8", newline="") as f:
        table = list(csv.reader(f))
    anchor_lines = [k + 1 for k, row in enumerate(table) if row[-1] == "True"]
    with pytest.raises(RatingsImportError) as caught:
        import_ratings(engine, "copy", path)
    problems = caught.value.problems
    assert [p.line for p in problems] == anchor_lines
    assert {p.field for p in problems} == {"is_anchor"}
    assert "anchor rating" in problems[0].message and "leave the anchor rows out" in problems[0].message
    # Without the anchor rows the same file imports: is_anchor False is read as an ordinary rating.
    kept = tmp_path / "v2-own.csv"
    with kept.open("w", encoding="utf-8", newline="") as f:
        csv.writer(f, lineterminator="\n").writerows(r for r in table if r[-1] != "True")
    summary = import_ratings(engine, "copy", kept)
    assert summary.ratings == len(table) - 1 - len(anchor_lines)
    assert all(r["is_anchor"] is False for r in export_rows(engine, "copy"))


def test_an_is_anchor_cell_that_is_not_a_truth_value_is_a_problem(engine: Engine, tmp_path: Path) -> None:
    load(engine, tmp_path, "v1", records({"m1": "m1"}))
    path = tmp_path / "odd.csv"
    path.write_text("reviewer,sample_id,model,dimension,score,is_anchor\nana,s0,m1,correctness,4,maybe\n", "utf-8")
    with pytest.raises(RatingsImportError) as caught:
        import_ratings(engine, "v1", path)
    [problem] = caught.value.problems
    assert (problem.line, problem.field) == (2, "is_anchor") and "not 'maybe'" in problem.message
