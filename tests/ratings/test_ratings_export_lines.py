"""The export writes its rows without building a dict per row: each CSV and JSONL line must still be exactly
what the dict of :func:`export_rows` gives through ``csv.writer`` (every string cell made inert, the free texts
through ``text_cell``) and through ``json.dumps(row, ensure_ascii=False)``, whatever the names, answers,
comments and times hold.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import update
from sqlalchemy.engine import Engine
from sqlmodel import col

from reviewer_app.batches.loading import load_batch
from reviewer_app.domain.csv_safety import neutralise_cell
from reviewer_app.domain.enums import PairwiseChoice
from reviewer_app.people.people import add_reviewer
from reviewer_app.ratings.columns import RATING_HEADER, text_cell
from reviewer_app.ratings.export import export_ratings, export_rows
from reviewer_app.review.assignment import assign
from reviewer_app.review.reviews import next_item, submit_review
from storage.engine import write_session
from storage.models import Assignment
from tests.helpers import PAIRWISE_RUBRIC, RATING_RUBRIC, write_batch, write_rubric
from tests.ratings.test_ratings_comments import HOSTILE

NAMES = ["=cmd|' /C calc'!A0", "+plain", "-ann", "@mention", "\tqa", 'comma, and "quotes"', "ünï → ✓", "-3"]
SECONDS = [0.1 + 0.2, 1e-7, 12345.6789, 2.0005, 1e22, 0.0, None]


def records(models: list[str]) -> list[dict[str, Any]]:
    return [
        {
            "sample_id": NAMES[i % len(NAMES)] + f" {i}",
            "scenario": NAMES[(i + 3) % len(NAMES)],
            "prompt": f"Question {i}?",
            "model": m,
            "output": f"Answer {i}.",
        }
        for i in range(8)
        for m in models
    ]


def answered_batch(engine: Engine, folder: Path, rubric: str, name: str, answers: list[dict[str, str]]) -> None:
    """A batch with hostile names everywhere, every answer given in the app by reviewers with hostile names:
    scores (one by one through the dimension's answers), "can't judge" and hostile comments, then odd times."""
    models = ["=m1", 'm2, "b"', "@m3"]
    batch_id = load_batch(
        engine,
        [write_batch(folder, records(models))],
        write_rubric(folder, rubric + f"# {name}\n"),
        name=name,
        open_now=True,
    ).batch_id
    people = [add_reviewer(engine, f"{n} {name}")[0].id for n in NAMES[:3]]
    assign(engine, name)
    k = 0
    for who in people:
        while (view := next_item(engine, batch_id, who)) is not None:
            comment = HOSTILE[k % len(HOSTILE)] if k % 4 else ""
            if k % 5 == 4:
                submit_review(engine, who, view.assignment_id, {}, comment=comment, cant_judge=HOSTILE[-k % 12])
            else:
                submit_review(engine, who, view.assignment_id, answers[k % len(answers)], comment=comment)
            with write_session(engine) as s:
                s.execute(
                    update(Assignment)
                    .where(col(Assignment.id) == view.assignment_id)
                    .values(seconds_spent=SECONDS[k % len(SECONDS)])
                )
            k += 1


def reference_csv(rows: list[dict[str, Any]]) -> str:
    """The export's CSV as it was written from the dicts, one formula check per string cell."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    fields = list(rows[0]) if rows else list(RATING_HEADER)
    writer.writerow(fields)
    for row in rows:
        cells = [neutralise_cell(v) for v in row.values()]
        cells[fields.index("comment")] = text_cell(row["comment"])
        cells[fields.index("cant_judge_reason")] = text_cell(row["cant_judge_reason"])
        writer.writerow(cells)
    return out.getvalue()


@pytest.mark.parametrize("mode", ["rating", "pairwise"])
def test_export_lines_are_the_rows_dicts_written_one_by_one(engine: Engine, tmp_path: Path, mode: str) -> None:
    if mode == "rating":
        scores = [{"correctness": str(v), "follows_format": str(v % 2)} for v in range(1, 6)]
        answered_batch(engine, tmp_path, RATING_RUBRIC.format(overlap=2), "=b", scores)
    else:
        winners = [{"overall": str(c)} for c in PairwiseChoice]
        answered_batch(engine, tmp_path, PAIRWISE_RUBRIC.format(overlap=2), "=b", winners)
    rows = export_rows(engine, "=b")
    assert len(rows) > 20 and any(r["cant_judge_reason"] for r in rows) and any(r["comment"] for r in rows)
    assert {r["seconds_spent"] for r in rows} >= {0.3, 12345.679, 1e22, 0.0, None}
    csv_out = tmp_path / "out.csv"
    assert export_ratings(engine, "=b", "csv", csv_out) == len(rows)
    assert csv_out.read_text(encoding="utf-8") == reference_csv(rows)
    assert "'=b," in csv_out.read_text(encoding="utf-8")  # the batch's own name is made inert too
    jsonl_out = tmp_path / "out.jsonl"
    assert export_ratings(engine, "=b", "jsonl", jsonl_out) == len(rows)
    assert jsonl_out.read_text(encoding="utf-8") == "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)


def test_an_empty_export_names_the_import_columns(engine: Engine, tmp_path: Path) -> None:
    rubric = write_rubric(tmp_path, RATING_RUBRIC.format(overlap=1))
    load_batch(engine, [write_batch(tmp_path, records(["m1"]))], rubric, name="e", open_now=True)
    out = tmp_path / "e.csv"
    assert export_ratings(engine, "e", "csv", out) == 0
    assert out.read_text() == reference_csv([]) == ",".join(RATING_HEADER) + "\n"
    assert export_ratings(engine, "e", "jsonl", tmp_path / "e.jsonl") == 0
    assert (tmp_path / "e.jsonl").read_text() == ""
