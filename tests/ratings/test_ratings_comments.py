"""Comments and "can't judge" reasons go out in the export and come back in with an import, exactly as typed.

An export row per rating carries its answer's ``comment``; a "can't judge" answer, which has no scores, is a
row of its own with no dimension and no score and its reason in ``cant_judge_reason``. Exporting a batch and
importing the CSV into a copy of it must give back the same answers, comments and reasons, however hostile
the text (a spreadsheet formula, markup, quotes, pipes, several lines).
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select
from sqlalchemy.engine import Engine

from reviewer_app.batches.loading import load_batch
from reviewer_app.errors import RatingsImportError
from reviewer_app.people.people import add_reviewer
from reviewer_app.ratings.columns import read_text_cell, text_cell
from reviewer_app.ratings.export import export_ratings, export_rows
from reviewer_app.ratings.files import import_ratings
from reviewer_app.review.assignment import assign
from reviewer_app.review.reviews import next_item, submit_review
from storage.engine import read_session
from storage.models import Assignment, Rating
from tests.helpers import PAIRWISE_RUBRIC, RATING_RUBRIC, make_records, write_batch, write_rubric

HOSTILE = [
    '=HYPERLINK("http://evil.example","click")',
    "+1, clear and right",
    "-- misses the second part",
    "@SUM(A1:A2)",
    "'=already quoted",
    "''two quotes",
    "'plain quote' is fine",
    "-3",
    "<script>alert(1)</script> and <img src=x onerror=alert(2)>",
    "[a link](javascript:alert(1)) | a | pipe | row",
    'two\nlines, "quoted", and a comma',
    "ünïcödé → ✓",
]


def answer_everything(engine: Engine, batch_id: int, reviewer_id: int, scores: dict[str, str], k: int = 0) -> int:
    """Answer a reviewer's whole queue, counting answers on from ``k``: every third one "can't judge", the others
    scored, each with the k-th hostile text as its comment (and the next one as the reason); returns the next k."""
    while (view := next_item(engine, batch_id, reviewer_id)) is not None:
        comment, reason = HOSTILE[k % len(HOSTILE)], HOSTILE[(k + 1) % len(HOSTILE)]
        if k % 3 == 2:
            submit_review(engine, reviewer_id, view.assignment_id, {}, comment=comment, cant_judge=reason)
        else:
            submit_review(engine, reviewer_id, view.assignment_id, scores, comment=comment)
        k += 1
    return k


def answers(engine: Engine, batch: str) -> list[tuple[Any, ...]]:
    """What the export says of every answer, without what an import cannot carry over (queue position,
    time spent, the batch's name)."""
    keep = ("reviewer", "sample_id", "model", "model_a", "model_b", "dimension", "score", "winner", "comment",
            "cant_judge_reason")  # fmt: skip
    return sorted((tuple(r.get(k) for k in keep) for r in export_rows(engine, batch)), key=lambda t: tuple(map(str, t)))


def rating_batch(engine: Engine, folder: Path, name: str, n_samples: int = 6) -> int:
    batch = load_batch(
        engine,
        [write_batch(folder, make_records(n_samples, ["m1", "m2"]))],
        write_rubric(folder, RATING_RUBRIC.format(overlap=1) + f"# {name}\n"),  # one batch per name
        name=name,
        open_now=True,
    )
    return batch.batch_id


def test_export_has_comments_on_every_row_and_cant_judge_rows_of_their_own(engine: Engine, tmp_path: Path) -> None:
    batch_id = rating_batch(engine, tmp_path, "b", n_samples=2)
    ann = add_reviewer(engine, "ann")[0]
    assign(engine, "b")
    views = []
    while (view := next_item(engine, batch_id, ann.id)) is not None:
        views.append(view)
        if len(views) == 1:
            submit_review(engine, ann.id, view.assignment_id, {"correctness": "4", "follows_format": "1"}, comment="A")
        elif len(views) == 2:
            submit_review(engine, ann.id, view.assignment_id, {}, comment="B", cant_judge="The output is cut off")
        else:
            submit_review(engine, ann.id, view.assignment_id, {"correctness": "2", "follows_format": "0"})
    rows = export_rows(engine, "b")
    assert len(rows) == 2 + 1 + 2 * 2  # two rating rows each for three scored answers, one can't-judge row
    assert list(rows[0])[-3:] == ["comment", "cant_judge_reason", "is_anchor"]  # is_anchor last (issue 10)
    scored, cant = rows[:-1], rows[-1]  # can't-judge rows come after every rating
    assert [r["comment"] for r in scored].count("A") == 2
    assert {r["comment"] for r in scored} == {"A", None}
    assert {r["cant_judge_reason"] for r in scored} == {None}
    assert (cant["dimension"], cant["score"], cant["comment"], cant["cant_judge_reason"]) == (
        None,
        None,
        "B",
        "The output is cut off",
    )
    assert cant["reviewer"] == "ann" and cant["model"] in ("m1", "m2")
    out = tmp_path / "e.csv"
    assert export_ratings(engine, "b", "csv", out) == len(rows)
    with out.open(newline="", encoding="utf-8") as f:
        last = list(csv.DictReader(f))[-1]
    assert (last["dimension"], last["score"], last["comment"], last["cant_judge_reason"]) == (
        "",
        "",
        "B",
        "The output is cut off",
    )
    jl = tmp_path / "e.jsonl"
    export_ratings(engine, "b", "jsonl", jl)
    assert [json.loads(line) for line in jl.read_text(encoding="utf-8").splitlines()] == rows


@pytest.mark.parametrize("text", HOSTILE)
def test_a_text_cell_reads_back_as_typed_and_never_runs_as_a_formula(text: str) -> None:
    cell = text_cell(text)
    assert cell is not None and read_text_cell(cell) == text
    assert not cell.startswith(("=", "+", "@", "\t", "\r")) and (not cell.startswith("-") or cell == "-3")
    assert text_cell(None) is None


def test_a_csv_export_imports_back_with_its_comments_and_cant_judge_answers(engine: Engine, tmp_path: Path) -> None:
    batch_id = rating_batch(engine, tmp_path / "a", "orig")
    ann, bob = (add_reviewer(engine, name)[0] for name in ("ann", "bob"))
    assign(engine, "orig")
    k = answer_everything(engine, batch_id, ann.id, {"correctness": "5", "follows_format": "1"})
    # 12 items, and the 2 ann could not judge went back to the pool for bob.
    assert answer_everything(engine, batch_id, bob.id, {"correctness": "1", "follows_format": "0"}, k) == 14
    rows = export_rows(engine, "orig")
    assert {r["comment"] for r in rows} == set(HOSTILE) and len({r["cant_judge_reason"] for r in rows}) == 5
    exported = tmp_path / "orig.csv"
    export_ratings(engine, "orig", "csv", exported)
    raw = exported.read_text(encoding="utf-8")
    assert "\n=" not in raw and ",=" not in raw and ",+1" not in raw  # no cell starts a formula
    copy_id = rating_batch(engine, tmp_path / "b", "copy")
    summary = import_ratings(engine, "copy", exported)
    assert summary.cant_judge == 4 and summary.comments == 14
    assert "  Of those showings, 4 answered can't judge and 14 have a comment." in summary.lines()
    assert answers(engine, "copy") == answers(engine, "orig")
    with read_session(engine) as s:
        statuses = s.execute(
            select(Assignment.status, Assignment.cant_judge).where(Assignment.batch_id == copy_id)
        ).all()
    assert sorted(str(st) for st, _ in statuses).count("skipped") == 4
    assert all((str(st) == "skipped") == (reason is not None) for st, reason in statuses)
    # Importing the same file again changes nothing.
    import_ratings(engine, "copy", exported)
    assert answers(engine, "copy") == answers(engine, "orig")


def test_a_pairwise_cant_judge_answer_round_trips(engine: Engine, tmp_path: Path) -> None:
    for name in ("p", "q"):
        load_batch(
            engine,
            [write_batch(tmp_path / name, make_records(2, ["alpha", "beta"]))],
            write_rubric(tmp_path / name, PAIRWISE_RUBRIC.format(overlap=1) + f"# {name}\n"),
            name=name,
            open_now=True,
        )
    f = tmp_path / "p.csv"
    f.write_text(
        "reviewer,sample_id,model_a,model_b,dimension,winner,comment,cant_judge_reason\n"
        "ann,s0,beta,alpha,overall,a,beta reads better,\n"
        "ann,s1,beta,alpha,,,both | empty,Neither output loads\n",
        encoding="utf-8",
    )
    import_ratings(engine, "p", f)
    rows = export_rows(engine, "p")
    assert [(r["dimension"], r["winner"], r["comment"], r["cant_judge_reason"]) for r in rows] == [
        ("overall", "b", "beta reads better", None),
        (None, None, "both | empty", "Neither output loads"),
    ]
    assert rows[1]["shown_left"] == "beta"  # the side the file gave first, as for a scored answer
    again = tmp_path / "again.csv"
    export_ratings(engine, "p", "csv", again)
    import_ratings(engine, "q", again)
    assert answers(engine, "q") == answers(engine, "p")


def test_an_import_turns_a_scored_answer_into_cant_judge_and_back(engine: Engine, tmp_path: Path) -> None:
    rating_batch(engine, tmp_path, "b", n_samples=1)
    header = "reviewer,sample_id,model,dimension,score,comment,cant_judge_reason\n"
    f = tmp_path / "r.csv"
    f.write_text(header + "ann,s0,m1,correctness,4,first look,\nann,s0,m1,follows_format,1,first look,\n")
    import_ratings(engine, "b", f)
    f.write_text(header + "ann,s0,m1,,,,The prompt is missing\n")
    import_ratings(engine, "b", f)
    with read_session(engine) as s:
        a = s.execute(select(Assignment)).scalar_one()
        assert (str(a.status), a.comment, a.cant_judge) == ("skipped", "first look", "The prompt is missing")
        assert s.execute(select(Rating)).first() is None  # a can't-judge answer keeps no scores
    f.write_text(header + "ann,s0,m1,correctness,3,,\nann,s0,m1,follows_format,0,,\n")
    import_ratings(engine, "b", f)
    with read_session(engine) as s:
        a = s.execute(select(Assignment)).scalar_one()
        # Scored again: no longer a can't-judge answer; a file without a comment erases none.
        assert (str(a.status), a.comment, a.cant_judge) == ("done", "first look", None)
    assert sorted(r["score"] for r in export_rows(engine, "b")) == [0, 3]


BAD = {
    "reason with a score": (
        "ann,s0,m1,correctness,4,,cannot tell\n",
        "r.csv:2: cant_judge_reason: a can't-judge answer has no scores: leave dimension and score empty on its "
        "row, or the reason",
    ),
    "scored and can't judge": (
        "ann,s0,m1,correctness,4,,\nann,s0,m1,,,,cannot tell\n",
        "r.csv:3: cant_judge_reason: ann answered this item both with scores and as can't judge; a can't-judge "
        "answer has no scores",
    ),
    "two reasons": (
        "ann,s0,m1,,,,cannot tell\nann,s0,m1,,,,no idea\n",
        "r.csv:3: cant_judge_reason: ann gave two different can't-judge reasons for this item",
    ),
    "two comments": (
        "ann,s0,m1,correctness,4,good,\nann,s0,m1,follows_format,1,,\nann,s0,m1,follows_format,1,bad,\n",
        "r.csv:4: comment: ann gave this item two different comments",
    ),
    "too long": (
        "ann,s0,m1,correctness,4," + "x" * 31 + ",\n",
        "r.csv:2: comment: is 31 characters long; the limit is 30 (BLIND_REVIEW_MAX_COMMENT_CHARS)",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_a_file_that_contradicts_itself_on_comments_or_cant_judge_is_refused(
    engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, case: str
) -> None:
    monkeypatch.setenv("BLIND_REVIEW_MAX_COMMENT_CHARS", "30")
    rating_batch(engine, tmp_path, "b", n_samples=1)
    rows, expected = BAD[case]
    f = tmp_path / "r.csv"
    f.write_text("reviewer,sample_id,model,dimension,score,comment,cant_judge_reason\n" + rows, encoding="utf-8")
    with pytest.raises(RatingsImportError) as err:
        import_ratings(engine, "b", f)
    assert [str(p).replace(str(tmp_path) + "/", "") for p in err.value.problems] == [expected]
    assert export_rows(engine, "b") == []
