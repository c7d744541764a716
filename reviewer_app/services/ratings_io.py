"""Ratings in and out as files: import from other tools (validated like batches), export raw for leads.

Import formats (CSV, header required, extra columns ignored so an export can be imported elsewhere):
rating mode ``reviewer,sample_id,model,dimension,score``; pairwise ``reviewer,sample_id,model_a,model_b,
dimension,winner`` with winner ``a``, ``b``, ``tie`` or ``both_bad``.
"""

from __future__ import annotations

import csv
import io
import json
import logging
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, TextIO

from sqlalchemy.engine import Engine
from sqlmodel import Session

from reviewer_app.domain.csv_safety import neutralise_cell
from reviewer_app.domain.enums import AssignmentStatus, Mode, PairwiseChoice, Role
from reviewer_app.domain.rubric import Rubric
from reviewer_app.errors import Problem, RatingsImportError
from reviewer_app.services.batches import batch_rubric, find_batch
from reviewer_app.services.blinding import draw_labels, rng_for
from storage.engine import read_session, write_session
from storage.models import Batch, utcnow
from storage.repositories import assignments as assignment_repo
from storage.repositories import items as item_repo
from storage.repositories import ratings as ratings_repo
from storage.repositories import reviewers as reviewer_repo
from storage.repositories.frames import ratings_frame

log = logging.getLogger(__name__)

RATING_HEADER = ("reviewer", "sample_id", "model", "dimension", "score")
PAIRWISE_HEADER = ("reviewer", "sample_id", "model_a", "model_b", "dimension", "winner")
WINNERS = ("a", "b", PairwiseChoice.TIE, PairwiseChoice.BOTH_BAD)

ItemIndex = dict[tuple[str, str, str | None], int]  # (sample key, model a, model b or None) -> item id
Showing = tuple[str, int]  # (reviewer name, item id)


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


@dataclass
class _CheckedRatings:
    """Every row of a ratings file, checked: the answers per showing, and which pairs were shown swapped."""

    answers: dict[Showing, dict[str, str]] = field(default_factory=lambda: defaultdict(dict))
    swaps: dict[Showing, bool] = field(default_factory=dict)


@dataclass(frozen=True)
class _Row:
    """One checked row: an answer of ``reviewer`` on ``item``; ``swapped`` for a pair given in reverse."""

    reviewer: str
    item: int
    dimension: str
    value: str
    swapped: bool | None  # None in rating mode


def import_ratings(engine: Engine, batch_name: str, path: Path) -> ImportSummary:
    """Check every row, then write all of them in one transaction (or nothing). Re-importing the same
    file updates the same ratings rather than duplicating them; unknown reviewers are created without a
    sign-in link. Raises :class:`NotFoundError` for an unknown batch and :class:`RatingsImportError`
    listing every bad row."""
    batch = find_batch(engine, batch_name)
    assert batch.id is not None
    rubric = batch_rubric(batch)
    # Check: the file, its header, every row against the batch's items and the rubric's scales.
    reader = _open_csv(path, rubric.mode)
    with read_session(engine) as session:
        index = item_repo.item_index(session, batch.id)
    checked = _check_rows(reader, str(path), index, rubric, batch.name)
    # Plan and write in one transaction: the plan needs the queues as they are under the batch lock.
    now = utcnow()
    with write_session(engine) as session:
        people, created = _people_for(session, sorted({r for r, _ in checked.answers}))
        assignment_repo.lock_batch(session, batch.id, exclusive=True)
        new_rows, already_had = _plan_showings(session, batch, checked, people, now)
        assignment_repo.insert_assignments(session, new_rows)
        n_ratings = _write_ratings(session, batch.id, checked, people, already_had, now)
    log.info(
        "imported %d ratings on %d item showings from %d reviewer(s) into batch %r (%d new reviewers)",
        n_ratings,
        len(checked.answers),
        len(people),
        batch.name,
        len(created),
    )
    return ImportSummary(batch.name, n_ratings, len(checked.answers), sorted(people), created)


def _open_csv(path: Path, mode: Mode) -> csv.DictReader[str]:
    name = str(path)
    header = PAIRWISE_HEADER if mode == Mode.PAIRWISE else RATING_HEADER
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
                    name, 1, None, f"header lacks {', '.join(missing)}; a {mode} batch takes columns {','.join(header)}"
                )
            ]
        )
    return reader


def _check_rows(
    reader: csv.DictReader[str], name: str, index: ItemIndex, rubric: Rubric, batch_name: str
) -> _CheckedRatings:
    problems: list[Problem] = []
    checked = _CheckedRatings()
    samples = {k[0] for k in index}
    for row in reader:
        line = reader.line_num
        result = _check_row(row, name, line, samples, index, rubric, batch_name)
        if isinstance(result, Problem):
            problems.append(result)
            continue
        showing = (result.reviewer, result.item)
        slot = checked.answers[showing]
        if result.dimension in slot and slot[result.dimension] != result.value:
            problems.append(
                Problem(
                    name,
                    line,
                    "dimension",
                    f"{result.reviewer} rated {result.dimension} of this item twice with different answers",
                )
            )
            continue
        slot[result.dimension] = result.value
        if result.swapped is not None:
            checked.swaps[showing] = result.swapped
    if not checked.answers and not problems:
        problems.append(Problem(name, None, None, "has no rating rows"))
    if problems:
        raise RatingsImportError(problems)
    return checked


def _check_row(
    row: dict[str, str], name: str, line: int, samples: set[str], index: ItemIndex, rubric: Rubric, batch_name: str
) -> _Row | Problem:
    """One row checked against the batch and the rubric: the answer it gives, or what is wrong with it."""
    reviewer = (row.get("reviewer") or "").strip()
    key = (row.get("sample_id") or "").strip()
    dim_name = (row.get("dimension") or "").strip()
    if not reviewer:
        return Problem(name, line, "reviewer", "missing")
    if key not in samples:
        return Problem(name, line, "sample_id", f"{key!r} is not a sample of batch {batch_name!r}")
    try:
        dim = rubric.dimension(dim_name)
    except KeyError:
        known = ", ".join(d.name for d in rubric.dimensions)
        return Problem(name, line, "dimension", f"{dim_name!r} is not a dimension of the rubric ({known})")
    if rubric.mode == Mode.PAIRWISE:
        ma, mb = (row.get("model_a") or "").strip(), (row.get("model_b") or "").strip()
        winner = (row.get("winner") or "").strip().lower()
        flipped = (key, mb, ma) in index
        item = index.get((key, ma, mb)) or index.get((key, mb, ma))
        if item is None:
            return Problem(name, line, "model_a", f"no pair ({ma!r}, {mb!r}) for sample {key!r}")
        if winner not in WINNERS:
            return Problem(name, line, "winner", f"must be a, b, tie or both_bad, not {winner!r}")
        # Stored as displayed: the imported model_a is taken to have been on the left.
        value = {"a": PairwiseChoice.LEFT, "b": PairwiseChoice.RIGHT}.get(winner, winner)
        return _Row(reviewer, item, dim.name, str(value), flipped)
    model = (row.get("model") or "").strip()
    rated = index.get((key, model, None))
    if rated is None:
        return Problem(name, line, "model", f"sample {key!r} has no output of model {model!r}")
    value = (row.get("score") or "").strip()
    if value.endswith(".0") and value[:-2].lstrip("-").isdigit():
        value = value[:-2]
    if not dim.accepts(value):
        allowed = dim.value_hint()
        return Problem(name, line, "score", f"{value!r} is not on the {dim.name} scale ({allowed})")
    return _Row(reviewer, rated, dim.name, value, None)


def _people_for(session: Session, names: list[str]) -> tuple[dict[str, int], list[str]]:
    """Reviewer ids by name, creating the unknown ones (without a sign-in link) in the caller's transaction,
    so a failed import leaves nobody behind. Returns the ids and the names created."""
    people: dict[str, int] = {}
    created: list[str] = []
    for person in names:
        reviewer = reviewer_repo.get_by_name(session, person)
        if reviewer is None:
            reviewer = reviewer_repo.create(session, person, Role.REVIEWER, None)
            created.append(person)
        assert reviewer.id is not None
        people[person] = reviewer.id
    return people, created


def _plan_showings(
    session: Session, batch: Batch, checked: _CheckedRatings, people: dict[str, int], now: datetime
) -> tuple[list[dict[str, Any]], set[Showing]]:
    """The assignment rows to insert (already done) for showings the reviewer never had, at the end of
    their queue under fresh batch-unique labels; and the showings they already had (planned, or imported
    before), which are updated instead."""
    assert batch.id is not None
    taken = assignment_repo.taken_labels(session, batch.id)
    positions = assignment_repo.next_positions(session, batch.id)
    had = assignment_repo.reviewer_items(session, batch.id)
    new_rows: list[dict[str, Any]] = []
    already_had: set[Showing] = set()
    keys = sorted(checked.answers)
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
                "swapped": checked.swaps.get((reviewer, item), False),
                "status": AssignmentStatus.DONE,
                "submitted_at": now,
            }
        )
    return new_rows, already_had


def _write_ratings(
    session: Session,
    batch_id: int,
    checked: _CheckedRatings,
    people: dict[str, int],
    already_had: set[Showing],
    now: datetime,
) -> int:
    """Mark the showings done and upsert their ratings; returns the number of ratings written."""
    ids = assignment_repo.assignment_ids(session, batch_id)
    rows = []
    for (reviewer, item), dims in checked.answers.items():
        aid = ids[(people[reviewer], item)]
        if (reviewer, item) in already_had:  # new rows were inserted done; one UPDATE each was most of the time
            assignment_repo.update_assignment(
                session,
                aid,
                status=AssignmentStatus.DONE,
                swapped=checked.swaps.get((reviewer, item), False),
                submitted_at=now,
                reserved_until=None,
            )
        for dim_name, value in dims.items():
            rows.append(
                {
                    "assignment_id": aid,
                    "batch_id": batch_id,
                    "item_id": item,
                    "reviewer_id": people[reviewer],
                    "dimension": dim_name,
                    "value": value,
                }
            )
    for start in range(0, len(rows), 5000):
        ratings_repo.upsert_ratings(session, rows[start : start + 5000], now)
    return len(rows)


def export_rows(engine: Engine, batch_name: str) -> list[dict[str, Any]]:
    """Raw, unblinded ratings: who rated which model's output how, with the canonical pairwise winner."""
    batch = find_batch(engine, batch_name)
    assert batch.id is not None
    with read_session(engine) as session:
        frame = ratings_frame(session, batch.id)
    rows = []
    pairwise = batch.mode == Mode.PAIRWISE
    for rec in frame.to_dict("records"):
        row: dict[str, Any] = {
            "batch": batch.name,
            "scenario": rec["scenario"],
            "sample_id": rec["sample_id"],
            "reviewer": rec["reviewer"],
        }
        if pairwise:
            shown = rec["value"]
            swapped = bool(rec["swapped"])
            winner = {PairwiseChoice.LEFT: "b" if swapped else "a", PairwiseChoice.RIGHT: "a" if swapped else "b"}.get(
                shown, shown
            )
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
    """Write the export as CSV or JSONL to ``path`` (atomically) or ``stream``; returns the row count.

    CSV cells that a spreadsheet would run as a formula are neutralised (:func:`neutralise_cell`); JSONL
    carries every value exactly as stored."""
    rows = export_rows(engine, batch_name)
    buf = io.StringIO()
    if fmt == "csv":
        fields = list(rows[0]) if rows else list(RATING_HEADER)
        writer = csv.DictWriter(buf, fieldnames=fields, lineterminator="\n")
        writer.writeheader()
        # Names and comments come from imports and reviewers as they were typed: no cell may run as a formula.
        writer.writerows({k: neutralise_cell(v) for k, v in row.items()} for row in rows)
    elif fmt == "jsonl":
        for row in rows:
            buf.write(json.dumps(row, ensure_ascii=False) + "\n")
    else:
        raise RatingsImportError([Problem.argument("format", f"must be csv or jsonl, not {fmt!r}")])
    if path is not None:
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(buf.getvalue(), encoding="utf-8")
        tmp.replace(path)
    elif stream is not None:
        stream.write(buf.getvalue())
    return len(rows)
