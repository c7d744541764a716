"""A judge's ratings where people read ratings: the report's frame (in a reviewer's columns and conventions) and
``export-ratings --with-judges`` (marked, and refused by an import)."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from sqlalchemy.engine import Engine

from reviewer_app.analysis.prepare import canonical_outcome
from reviewer_app.cli.main import main
from reviewer_app.errors import RatingsImportError
from reviewer_app.generation.specs import parse_model_spec
from reviewer_app.judge.runs import judge_batch
from reviewer_app.ratings.export import export_ratings
from reviewer_app.ratings.files import import_ratings
from storage.engine import read_session
from storage.repositories.results.frames import RATING_COLUMNS, judge_frame
from tests.generation.test_runner import FAST
from tests.helpers import PAIRWISE_RUBRIC, RATING_RUBRIC
from tests.judge.test_runs import _load, _records
from tests.support.fake_judge import JudgeBehaviour, fake_judge
from tests.support.fake_openai import Behaviour, running_server


def _judge(engine: Engine, behaviour: JudgeBehaviour | None = None) -> None:
    with running_server(Behaviour(reply=fake_judge(behaviour))) as server:
        judge_batch(engine, "b", parse_model_spec(f"judge={server.base_url}"), policy=FAST, progress=False)


def test_a_pairwise_judges_frame_reads_as_a_reviewers_and_both_orders_agree(engine: Engine, tmp_path: Path) -> None:
    _load(engine, tmp_path, _records(4, {"m2": 0, "m1": 2}), PAIRWISE_RUBRIC)
    _judge(engine)
    with read_session(engine) as session:
        frame = judge_frame(session, 1, 1, "judge:j@abc")
    assert list(frame.columns) == RATING_COLUMNS and len(frame) == 8  # 4 items x 2 orders x 1 question
    assert set(frame["reviewer"]) == {"judge:j@abc"} and set(frame["rater_role"]) == {"judge"}
    assert sorted(frame["swapped"].value_counts().tolist()) == [4, 4]  # each item in both orders
    assert set(frame["model_a"]) == {"m1"} and set(frame["model_b"]) == {"m2"}  # model-name order, as people's
    outcome = canonical_outcome(frame).groupby(frame["item_id"]).nunique()
    assert (outcome == 1).all()  # a fair judge names the same winner in both orders, once turned back


def test_export_with_judges_marks_them_and_an_import_refuses_them(engine: Engine, tmp_path: Path) -> None:
    _load(engine, tmp_path, _records(2, {"m1": 0, "m2": 1}), RATING_RUBRIC)
    _judge(engine)
    plain = io.StringIO()
    export_ratings(engine, "b", "csv", None, stream=plain)
    assert "judge:" not in plain.getvalue() and "rater_kind" not in plain.getvalue()  # only when asked
    out = tmp_path / "with.csv"
    assert main(["export-ratings", "b", "--with-judges", "--out", str(out)]) == 0
    with out.open(encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 8 and {r["rater_kind"] for r in rows} == {"judge"}
    assert all(r["reviewer"].startswith("judge:judge@") and r["comment"] for r in rows)
    with pytest.raises(RatingsImportError) as refused:
        import_ratings(engine, "b", out)
    assert "with.csv:2: rater_kind" in str(refused.value) and "cannot be imported as a person's" in str(refused.value)
    lines = io.StringIO()
    export_ratings(engine, "b", "jsonl", None, stream=lines, with_judges=True)
    records = [json.loads(line) for line in lines.getvalue().splitlines()]
    assert len(records) == 8 and all(r["rater_kind"] == "judge" and isinstance(r["score"], int) for r in records)
    (tmp_path / "with.jsonl").write_text(lines.getvalue(), encoding="utf-8")
    with pytest.raises(RatingsImportError, match="rater_kind"):
        import_ratings(engine, "b", tmp_path / "with.jsonl")


def test_failed_judgements_are_not_in_the_frame(engine: Engine, tmp_path: Path) -> None:
    _load(engine, tmp_path, _records(2, {"m1": 0}), RATING_RUBRIC)
    _judge(engine, JudgeBehaviour(always_invalid_when="Question 1?"))
    with read_session(engine) as session:
        frame = judge_frame(session, 1, 1, "judge:j@abc")
    assert set(frame["sample_id"]) == {"s0"} and len(frame) == 2
