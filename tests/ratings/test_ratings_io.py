"""Ratings from elsewhere come in validated; raw ratings go out unblinded and round-trip."""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, select
from sqlalchemy.engine import Engine

from reviewer_app.batches.loading import load_batch
from reviewer_app.errors import RatingsImportError
from reviewer_app.people.people import add_reviewer
from reviewer_app.ratings.export import export_ratings, export_rows
from reviewer_app.ratings.files import import_ratings
from reviewer_app.review.assignment import assign
from reviewer_app.review.reviews import next_item, submit_review
from storage.engine import read_session
from storage.models import Assignment, Rating, Reviewer
from storage.repositories.ratings import exports as export_repo
from storage.repositories.ratings import imports as ratings_repo
from tests.helpers import PAIRWISE_RUBRIC, RATING_RUBRIC, make_records, write_batch, write_rubric


def n_ratings(engine: Engine) -> int:
    with read_session(engine) as s:
        return int(s.execute(select(func.count()).select_from(Rating)).scalar_one())


def test_import_rating_mode_creates_reviewers_and_is_idempotent(engine: Engine, tmp_path: Path) -> None:
    load_batch(
        engine,
        [write_batch(tmp_path, make_records(2, ["m1", "m2"]))],
        write_rubric(tmp_path, RATING_RUBRIC.format(overlap=2)),
        name="b",
        open_now=True,
    )
    f = tmp_path / "r.csv"
    f.write_text(
        "reviewer,sample_id,model,dimension,score\nann,s0,m1,correctness,4\nann,s0,m1,follows_format,1\n"
        "bob,s1,m2,correctness,2.0\n"
    )
    summary = import_ratings(engine, "b", f)
    assert summary.ratings == 3 and summary.created_reviewers == ["ann", "bob"]
    assert import_ratings(engine, "b", f).ratings == 3 and n_ratings(engine) == 3
    rows = export_rows(engine, "b")
    assert sorted((r["reviewer"], r["model"], r["dimension"], r["score"]) for r in rows) == [
        ("ann", "m1", "correctness", 4),  # scores as numbers, as the JSONL export writes them (issue 27)
        ("ann", "m1", "follows_format", 1),
        ("bob", "m2", "correctness", 2),
    ]


def test_bad_import_lists_every_problem_and_writes_nothing(engine: Engine, tmp_path: Path) -> None:
    load_batch(
        engine,
        [write_batch(tmp_path, make_records(1, ["m1"]))],
        write_rubric(tmp_path, RATING_RUBRIC.format(overlap=1)),
        name="b",
        open_now=True,
    )
    f = tmp_path / "r.csv"
    f.write_text(
        "reviewer,sample_id,model,dimension,score\nann,s0,m1,correctness,9\nann,s7,m1,correctness,3\n"
        "ann,s0,m9,correctness,3\nann,s0,m1,tone,3\n"
    )
    with pytest.raises(RatingsImportError) as err:
        import_ratings(engine, "b", f)
    text = str(err.value)
    assert "r.csv:2: score: '9' is not on the correctness scale (1, 2, 3, 4, 5)" in text
    assert "r.csv:3: sample_id: 's7' is not a sample" in text
    assert "r.csv:4: model: sample 's0' has no output of model 'm9'" in text
    assert "r.csv:5: dimension: 'tone' is not a dimension" in text
    assert n_ratings(engine) == 0


def test_pairwise_import_maps_winners_to_the_canonical_order(engine: Engine, tmp_path: Path) -> None:
    load_batch(
        engine,
        [write_batch(tmp_path, make_records(1, ["alpha", "beta"]))],
        write_rubric(tmp_path, PAIRWISE_RUBRIC.format(overlap=1)),
        name="p",
        open_now=True,
    )
    f = tmp_path / "p.csv"
    f.write_text(
        "reviewer,sample_id,model_a,model_b,dimension,winner\nann,s0,beta,alpha,overall,a\n"
        "bob,s0,alpha,beta,overall,tie\n"
    )
    import_ratings(engine, "p", f)
    rows = sorted(export_rows(engine, "p"), key=lambda r: r["reviewer"])
    assert [(r["model_a"], r["model_b"], r["winner"]) for r in rows] == [
        ("alpha", "beta", "b"),
        ("alpha", "beta", "tie"),
    ]
    assert rows[0]["shown_left"] == "beta"


def test_export_of_reviewed_ratings_is_unblinded_csv_and_jsonl(engine: Engine, tmp_path: Path) -> None:
    batch = load_batch(
        engine,
        [write_batch(tmp_path, make_records(2, ["m1", "m2"]))],
        write_rubric(tmp_path, RATING_RUBRIC.format(overlap=1)),
        name="b",
        open_now=True,
    )
    ann = add_reviewer(engine, "ann")[0]
    assign(engine, "b")
    while (view := next_item(engine, batch.batch_id, ann.id)) is not None:
        submit_review(engine, ann.id, view.assignment_id, {"correctness": "3", "follows_format": "0"}, comment="ok")
    out = tmp_path / "ratings.csv"
    assert export_ratings(engine, "b", "csv", out) == 8
    with out.open(newline="") as f:
        rows = list(csv.DictReader(f))
    assert {r["model"] for r in rows} == {"m1", "m2"} and {r["reviewer"] for r in rows} == {"ann"}
    jl = tmp_path / "ratings.jsonl"
    export_ratings(engine, "b", "jsonl", jl)
    assert [json.loads(line)["score"] for line in jl.read_text().splitlines()].count(3) == 4  # a number
    reimport = tmp_path / "again.csv"
    reimport.write_text(out.read_text())
    load_batch(
        engine,
        [write_batch(tmp_path / "c", make_records(2, ["m1", "m2"]))],
        write_rubric(tmp_path / "c", RATING_RUBRIC.format(overlap=1) + "\n"),
        name="copy",
        open_now=True,
    )
    assert import_ratings(engine, "copy", reimport).ratings == 8


def test_an_import_that_fails_while_writing_leaves_nothing_behind(
    engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    load_batch(
        engine,
        [write_batch(tmp_path, make_records(3, ["m1", "m2"]))],
        write_rubric(tmp_path, RATING_RUBRIC.format(overlap=2)),
        name="b",
        open_now=True,
    )
    f = tmp_path / "r.csv"
    f.write_text("reviewer,sample_id,model,dimension,score\nann,s0,m1,correctness,4\nbob,s2,m2,correctness,1\n")

    def broken(*args: object, **kwargs: object) -> int:
        raise RuntimeError("the disk filled up")

    # The assignments and the new reviewers are written by then: the whole transaction must go.
    monkeypatch.setattr(ratings_repo, "upsert_rating_rows", broken)
    with pytest.raises(RuntimeError):
        import_ratings(engine, "b", f)
    with read_session(engine) as s:
        counts = [int(s.execute(select(func.count()).select_from(t)).scalar_one()) for t in (Assignment, Reviewer)]
    assert counts == [0, 0] and n_ratings(engine) == 0
    monkeypatch.undo()
    assert import_ratings(engine, "b", f).ratings == 2


def test_an_export_that_fails_midway_keeps_the_old_file(
    engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    load_batch(
        engine,
        [write_batch(tmp_path, make_records(2, ["m1"]))],
        write_rubric(tmp_path, RATING_RUBRIC.format(overlap=1)),
        name="b",
        open_now=True,
    )
    f = tmp_path / "r.csv"
    f.write_text("reviewer,sample_id,model,dimension,score\nann,s0,m1,correctness,4\nann,s1,m1,correctness,2\n")
    import_ratings(engine, "b", f)
    out = tmp_path / "export.csv"
    out.write_text("the previous export\n")
    real = export_repo.export_chunks

    def failing(*args: Any, **kwargs: Any) -> Iterator[Any]:
        rows = real(*args, **kwargs)
        yield next(rows)
        raise RuntimeError("connection lost")

    monkeypatch.setattr(export_repo, "export_chunks", failing)
    with pytest.raises(RuntimeError):
        export_ratings(engine, "b", "csv", out)
    assert out.read_text() == "the previous export\n"
    assert not (tmp_path / "export.csv.tmp").exists()
