"""Ratings in and out as files: import from other tools (validated like batches), export raw for leads.

Import formats (CSV, header required, extra columns ignored so an export can be imported elsewhere):
rating mode ``reviewer,sample_id,model,dimension,score``; pairwise ``reviewer,sample_id,model_a,model_b,
dimension,winner`` with winner ``a``, ``b``, ``tie`` or ``both_bad``.
"""

from __future__ import annotations

import csv
import io
import json
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from sqlalchemy.engine import Engine

from reviewer_app.errors import Problem, RatingsImportError
from reviewer_app.services.batches import batch_rubric, find_batch
from reviewer_app.services.blinding import draw_labels, rng_for
from storage.engine import read_session, write_session
from storage.models import utcnow
from storage.repositories import assignments as assignment_repo
from storage.repositories import items as item_repo
from storage.repositories import ratings as ratings_repo
from storage.repositories import reviewers as reviewer_repo
from storage.repositories.frames import ratings_frame

RATING_HEADER = ("reviewer", "sample_id", "model", "dimension", "score")
PAIRWISE_HEADER = ("reviewer", "sample_id", "model_a", "model_b", "dimension", "winner")


@dataclass
class ImportSummary:
    batch: str
    ratings: int
    items: int
    reviewers: list[str]
    created_reviewers: list[str]

    def lines(self) -> list[str]:
        out = [
            f"Imported {self.ratings} ratings on {self.items} item showings from {len(self.reviewers)} reviewer(s) "
            f"into {self.batch!r}."
        ]
        if self.created_reviewers:
            out.append(f"  New reviewers (no sign-in link): {', '.join(self.created_reviewers)}")
        return out


def import_ratings(engine: Engine, batch_name: str, path: Path) -> ImportSummary:
    """Check every row, then write all of them in one transaction (or nothing). Re-importing the same
    file updates the same ratings rather than duplicating them."""
    batch = find_batch(engine, batch_name)
    assert batch.id is not None
    rubric = batch_rubric(batch)
    pairwise = rubric.mode == "pairwise"
    header = PAIRWISE_HEADER if pairwise else RATING_HEADER
    name = str(path)
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except OSError as exc:
        raise RatingsImportError([Problem(name, None, None, f"cannot be read ({exc.strerror})")]) from exc
    except UnicodeDecodeError as exc:
        raise RatingsImportError([Problem(name, None, None, "is not UTF-8; re-save it as UTF-8")]) from exc
    reader = csv.DictReader(io.StringIO(text, newline=""))
    missing = [c for c in header if c not in (reader.fieldnames or [])]
    if missing:
        raise RatingsImportError(
            [
                Problem(
                    name,
                    1,
                    None,
                    f"header lacks {', '.join(missing)}; a {rubric.mode} batch takes columns {','.join(header)}",
                )
            ]
        )
    with read_session(engine) as session:
        index = item_repo.item_index(session, batch.id)
    problems: list[Problem] = []
    # (reviewer, item id, swapped) -> {dimension: value}
    answers: dict[tuple[str, int], dict[str, str]] = defaultdict(dict)
    swaps: dict[tuple[str, int], bool] = {}
    samples = {k[0] for k in index}
    for row in reader:
        line = reader.line_num
        reviewer = (row.get("reviewer") or "").strip()
        key = (row.get("sample_id") or "").strip()
        dim_name = (row.get("dimension") or "").strip()
        if not reviewer:
            problems.append(Problem(name, line, "reviewer", "missing"))
            continue
        if key not in samples:
            problems.append(Problem(name, line, "sample_id", f"{key!r} is not a sample of batch {batch.name!r}"))
            continue
        try:
            dim = rubric.dimension(dim_name)
        except KeyError:
            problems.append(
                Problem(
                    name,
                    line,
                    "dimension",
                    f"{dim_name!r} is not a dimension of the rubric ({', '.join(d.name for d in rubric.dimensions)})",
                )
            )
            continue
        if pairwise:
            ma, mb = (row.get("model_a") or "").strip(), (row.get("model_b") or "").strip()
            winner = (row.get("winner") or "").strip().lower()
            flipped = (key, mb, ma) in index
            item = index.get((key, ma, mb)) or index.get((key, mb, ma))
            if item is None:
                problems.append(Problem(name, line, "model_a", f"no pair ({ma!r}, {mb!r}) for sample {key!r}"))
                continue
            if winner not in ("a", "b", "tie", "both_bad"):
                problems.append(Problem(name, line, "winner", f"must be a, b, tie or both_bad, not {winner!r}"))
                continue
            # Stored as displayed: the imported model_a is taken to have been on the left.
            value = {"a": "left", "b": "right"}.get(winner, winner)
            swaps[(reviewer, item)] = flipped
        else:
            model = (row.get("model") or "").strip()
            item = index.get((key, model, None))
            if item is None:
                problems.append(Problem(name, line, "model", f"sample {key!r} has no output of model {model!r}"))
                continue
            value = (row.get("score") or "").strip()
            if value.endswith(".0") and value[:-2].lstrip("-").isdigit():
                value = value[:-2]
            if value not in dim.allowed_values():
                problems.append(
                    Problem(
                        name,
                        line,
                        "score",
                        f"{value!r} is not on the {dim.name} scale ({', '.join(dim.allowed_values())})",
                    )
                )
                continue
        slot = answers[(reviewer, item)]
        if dim.name in slot and slot[dim.name] != value:
            problems.append(
                Problem(
                    name, line, "dimension", f"{reviewer} rated {dim.name} of this item twice with different answers"
                )
            )
            continue
        slot[dim.name] = value
    if not answers and not problems:
        problems.append(Problem(name, None, None, "has no rating rows"))
    if problems:
        raise RatingsImportError(problems)

    now = utcnow()
    n_ratings = 0
    with write_session(engine) as session:
        # Unknown reviewers are created in the same transaction as their ratings: all of it, or nothing.
        people: dict[str, int] = {}
        created: list[str] = []
        for person in sorted({r for r, _ in answers}):
            row = reviewer_repo.get_by_name(session, person)
            if row is None:
                row = reviewer_repo.create(session, person, "reviewer", None)
                created.append(person)
            assert row.id is not None
            people[person] = row.id
        assignment_repo.lock_batch(session, batch.id, exclusive=True)
        taken = assignment_repo.taken_labels(session, batch.id)
        positions = assignment_repo.next_positions(session, batch.id)
        had = assignment_repo.reviewer_items(session, batch.id)
        new_rows: list[dict[str, Any]] = []
        already_had: set[tuple[str, int]] = set()  # the reviewer already had the item (planned, or imported before)
        keys = sorted(answers)
        labels = iter(draw_labels(rng_for(batch.seed, "import", len(taken)), len(keys), taken))
        for reviewer, item in keys:
            rid = people[reviewer]
            if item in had.get(rid, set()):
                already_had.add((reviewer, item))
                continue
            pos = positions.get(rid, 0)
            positions[rid] = pos + 1
            new_rows.append(
                {
                    "batch_id": batch.id,
                    "item_id": item,
                    "reviewer_id": rid,
                    "occurrence": 0,
                    "position": pos,
                    "label": next(labels),
                    "swapped": swaps.get((reviewer, item), False),
                    "status": "done",
                    "submitted_at": now,
                }
            )
        assignment_repo.insert_assignments(session, new_rows)
        ids = assignment_repo.assignment_ids(session, batch.id)
        rows = []
        for (reviewer, item), dims in answers.items():
            aid = ids[(people[reviewer], item)]
            if (reviewer, item) in already_had:  # new rows were inserted done; one UPDATE each was most of the time
                assignment_repo.update_assignment(
                    session,
                    aid,
                    status="done",
                    swapped=swaps.get((reviewer, item), False),
                    submitted_at=now,
                    reserved_until=None,
                )
            for dim_name, value in dims.items():
                rows.append(
                    {
                        "assignment_id": aid,
                        "batch_id": batch.id,
                        "item_id": item,
                        "reviewer_id": people[reviewer],
                        "dimension": dim_name,
                        "value": value,
                    }
                )
        for start in range(0, len(rows), 5000):
            ratings_repo.upsert_ratings(session, rows[start : start + 5000], now)
        n_ratings = len(rows)
    return ImportSummary(batch.name, n_ratings, len(answers), sorted(people), created)


def export_rows(engine: Engine, batch_name: str) -> list[dict[str, Any]]:
    """Raw, unblinded ratings: who rated which model's output how, with the canonical pairwise winner."""
    batch = find_batch(engine, batch_name)
    assert batch.id is not None
    with read_session(engine) as session:
        frame = ratings_frame(session, batch.id)
    rows = []
    pairwise = batch.mode == "pairwise"
    for rec in frame.to_dict("records"):
        row: dict[str, Any] = {
            "batch": batch.name,
            "scenario": rec["scenario"],
            "sample_id": rec["sample_id"],
            "reviewer": rec["reviewer"],
        }
        if pairwise:
            shown = rec["value"]
            winner = {"left": "b" if rec["swapped"] else "a", "right": "a" if rec["swapped"] else "b"}.get(shown, shown)
            row.update(
                model_a=rec["model_a"],
                model_b=rec["model_b"],
                dimension=rec["dimension"],
                winner=winner,
                shown_left=rec["model_b"] if rec["swapped"] else rec["model_a"],
            )
        else:
            row.update(
                model=rec["model_a"], repeat=int(rec["repeat_a"]), dimension=rec["dimension"], score=rec["value"]
            )
        seconds = rec["seconds_spent"]
        row.update(
            occurrence=int(rec["occurrence"]),
            is_gold=bool(rec["is_gold"]),
            position=int(rec["position"]),
            seconds_spent=None if seconds != seconds else round(float(seconds), 3),
        )
        rows.append(row)
    return rows


def export_ratings(
    engine: Engine, batch_name: str, fmt: str, path: Path | None, *, stream: TextIO | None = None
) -> int:
    """Write the export as CSV or JSONL to ``path`` (atomically) or ``stream``; returns the row count."""
    rows = export_rows(engine, batch_name)
    buf = io.StringIO()
    if fmt == "csv":
        fields = list(rows[0]) if rows else list(RATING_HEADER)
        writer = csv.DictWriter(buf, fieldnames=fields, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    elif fmt == "jsonl":
        for row in rows:
            buf.write(json.dumps(row, ensure_ascii=False) + "\n")
    else:
        raise RatingsImportError([Problem("--format", None, None, "must be csv or jsonl")])
    if path is not None:
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(buf.getvalue(), encoding="utf-8")
        tmp.replace(path)
    elif stream is not None:
        stream.write(buf.getvalue())
    return len(rows)
