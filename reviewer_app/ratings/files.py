"""Ratings in and out as files: import from other tools (validated like batches), export raw for leads.

Import formats (CSV, header required, extra columns ignored so an export can be imported elsewhere):
rating mode ``reviewer,sample_id,model,dimension,score``; pairwise ``reviewer,sample_id,model_a,model_b,
dimension,winner`` with winner ``a``, ``b``, ``tie`` or ``both_bad``. Optional ``comment`` and
``cant_judge_reason`` columns are read too (see ``ratings_check``), so an export imports back with its
comments and its "can't judge" answers.

Exports have one row per rating, then one per "can't judge" answer (no dimension, no score, the reason in
``cant_judge_reason``); an answer's ``comment`` is on each of its rows. The last column, ``is_anchor``, is
True on the ratings of a follow-up batch's anchor items (baseline outputs shown again: ``model`` names the
baseline's model), False everywhere else; an import refuses rows where it is True (see ``ratings_check``).
"""

from __future__ import annotations

import csv
import io
import logging
from array import array
from collections.abc import Callable, Generator, Iterator
from contextlib import closing
from dataclasses import dataclass
from datetime import datetime
from json.encoder import encode_basestring as _json_string
from pathlib import Path
from typing import Any, TextIO

import numpy as np
import numpy.typing as npt
from sqlalchemy.engine import Engine
from sqlmodel import Session
from tqdm import tqdm

from reviewer_app.batches.loading import batch_rubric, find_batch
from reviewer_app.domain.csv_safety import neutralise_cell
from reviewer_app.domain.enums import AssignmentStatus, Mode, PairwiseChoice, Role
from reviewer_app.domain.keyed_random import KeyedRandom, secret_bytes
from reviewer_app.errors import Problem, RatingsImportError
from reviewer_app.ratings.check import (
    RATING_HEADER,
    Ints,
    Showings,
    check_rows,
    count_lines,
    text_cell,
)
from reviewer_app.review.blinding import draw_labels
from storage.engine import read_session, write_session
from storage.gc_pause import cycle_collection_paused
from storage.models import Batch, utcnow
from storage.repositories import assignments as assignment_repo
from storage.repositories import items as item_repo
from storage.repositories import ratings as ratings_repo
from storage.repositories import reviewers as reviewer_repo

log = logging.getLogger(__name__)

PROGRESS_DELAY = 2.0  # seconds before a progress bar appears: small files stay quiet


@dataclass
class ImportSummary:
    batch: str
    ratings: int
    items: int
    reviewers: list[str]
    created_reviewers: list[str]
    cant_judge: int = 0  # showings answered "can't judge" (counted in ``items``)
    comments: int = 0  # showings given a comment

    def lines(self) -> list[str]:
        out = [
            f"Imported {self.ratings} ratings on {self.items} item showings from {len(self.reviewers)} reviewer(s) "
            f"into {self.batch!r}."
        ]
        if self.cant_judge or self.comments:
            out.append(
                f"  Of those showings, {self.cant_judge} answered can't judge and {self.comments} have a comment."
            )
        if self.created_reviewers:
            out.append(f"  New reviewers (no sign-in link): {', '.join(self.created_reviewers)}")
        return out


@cycle_collection_paused()  # a row's columns are fresh objects kept to the end: see services.gc_pause
def import_ratings(engine: Engine, batch_name: str, path: Path) -> ImportSummary:
    """Check every row, then write all of them in one transaction (or nothing). Re-importing the same
    file updates the same ratings rather than duplicating them; unknown reviewers are created without a
    sign-in link. Raises :class:`NotFoundError` for an unknown batch and :class:`RatingsImportError`
    listing every bad row.

    The file is read as it streams (never whole) and its rows kept column by column; the writes are one
    compiled statement each, executed over many rows through the driver."""
    batch = find_batch(engine, batch_name)
    assert batch.id is not None
    rubric = batch_rubric(batch)
    total = count_lines(path)
    with read_session(engine) as session:
        index = item_repo.item_index(session, batch.id)
    with path.open(encoding="utf-8-sig", newline="") as f:
        lines = tqdm(f, desc=f"checking {path.name}", unit=" lines", total=total, delay=PROGRESS_DELAY)
        showings = check_rows(lines, str(path), index, rubric, batch.name)
    del index
    # Plan and write in one transaction: the plan needs the queues as they are under the batch lock.
    now = utcnow()
    with write_session(engine) as session:
        people, created = _people_for(session, sorted(showings.reviewer_names))
        assignment_repo.lock_batch(session, batch.id, exclusive=True)
        reviewer_ids = np.array([people[n] for n in showings.reviewer_names], dtype=np.int64)
        n_ratings = _write(session, batch, showings, reviewer_ids, now)
    log.info(
        "imported %d ratings on %d item showings from %d reviewer(s) into batch %r (%d new reviewers)",
        n_ratings,
        len(showings.item),
        len(people),
        batch.name,
        len(created),
    )
    return ImportSummary(
        batch.name,
        n_ratings,
        len(showings.item),
        sorted(people),
        created,
        cant_judge=int(showings.skipped.sum()),
        comments=int((showings.comment >= 0).sum()),
    )


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


def _existing(session: Session, batch_id: int, showings: Showings, reviewer_ids: Ints) -> tuple[Ints, Ints]:
    """For each showing of the file: whether the reviewer already has the item in this batch (planned, or
    imported before), as 0/1, and the id of their first showing of it (-1 where none)."""
    columns: tuple[array[int], ...] = (array("q"), array("q"), array("q"), array("q"))
    appends = [c.append for c in columns]
    for row in ratings_repo.batch_showings(session, batch_id, reviewer_ids.tolist()):
        for append, value in zip(appends, row, strict=True):
            append(value)
    their_reviewer, their_item, occurrence, ids = (np.array(c, dtype=np.int64) for c in columns)
    items = np.unique(showings.item)
    by_id = np.argsort(reviewer_ids)
    number = by_id[np.searchsorted(reviewer_ids, their_reviewer, sorter=by_id)]
    place = np.searchsorted(items, their_item)
    place[(place >= len(items)) | (items[np.minimum(place, len(items) - 1)] != their_item)] = len(items)
    have = number * (len(items) + 1) + place  # an item the file does not name matches no showing
    wanted = showings.reviewer * (len(items) + 1) + np.searchsorted(items, showings.item)
    had = np.isin(wanted, have).astype(np.int64)
    first = occurrence == 0
    first_keys, first_ids = have[first], ids[first]
    order = np.argsort(first_keys)
    first_keys, first_ids = first_keys[order], first_ids[order]
    found = np.minimum(np.searchsorted(first_keys, wanted), max(len(first_keys) - 1, 0))
    aid = np.full(len(wanted), -1, dtype=np.int64)
    if len(first_keys):
        hit = first_keys[found] == wanted
        aid[hit] = first_ids[found[hit]]
    return had, aid


def _write(session: Session, batch: Batch, showings: Showings, reviewer_ids: Ints, now: datetime) -> int:
    """Insert the showings the reviewers never had (answered, at the end of their queues, under fresh
    batch-unique labels), mark the ones they had answered, and upsert every rating; returns the ratings
    written. A showing answered "can't judge" is skipped with its reason and keeps no ratings."""
    assert batch.id is not None
    had, aid = _existing(session, batch.id, showings, reviewer_ids)
    new = np.flatnonzero(had == 0)  # in (reviewer name, item id) order
    n_ratings = showings.n_ratings
    total = len(new) + (len(had) - len(new)) + n_ratings
    status = np.where(showings.skipped, str(AssignmentStatus.SKIPPED), str(AssignmentStatus.DONE))
    comment, reason = _Texts(showings.comment, showings.texts), _Texts(showings.reason, showings.texts)
    with (
        ratings_repo.bulk_write_cache(session),
        ratings_repo.open_flags_recounted_once(session, batch.id),
        tqdm(total=total, desc="writing ratings", unit=" rows", delay=PROGRESS_DELAY) as bar,
    ):
        if len(new):
            taken = assignment_repo.taken_labels(session, batch.id)
            # Labels reviewers will see on their previous items: drawn from the batch's secret, never the seed.
            labels = draw_labels(KeyedRandom(secret_bytes(batch.secret), "import", len(taken)), len(new), taken)
            del taken
            aid[new] = ratings_repo.reserve_ids(session, "assignment", len(new))
            reviewer = showings.reviewer[new]
            starts = np.flatnonzero(np.append(True, reviewer[1:] != reviewer[:-1]))
            runs = np.diff(np.append(starts, len(new)))
            nexts = assignment_repo.next_positions(session, batch.id)
            queue_end = np.array([nexts.get(int(r), 0) for r in reviewer_ids.tolist()], dtype=np.int64)
            position = queue_end[reviewer] + np.arange(len(new)) - np.repeat(starts, runs)
            rows = _tuples(
                aid[new],
                np.full(len(new), batch.id),
                showings.item[new],
                reviewer_ids[reviewer],
                position,
                labels,
                showings.swapped[new],
                status[new],
                comment.part(new),
                reason.part(new),
            )
            bar.update(ratings_repo.insert_answered_showings(session, rows, now))
            log.info("inserted %d assignments into batch %s", len(new), batch.id)
        again = np.flatnonzero(had == 1)
        if len(again):
            marks = _tuples(showings.swapped[again], status[again], comment.part(again), reason.part(again), aid[again])
            bar.update(ratings_repo.mark_showings_answered(session, marks, now))
            # A showing answered with scores before and "can't judge" now keeps none of its scores.
            ratings_repo.delete_ratings_of(session, aid[again[showings.skipped[again]]].tolist())
        dims = [d.name for d in batch_rubric(batch).dimensions]
        answers = showings.answers
        s = showings.rating_showing
        rating_rows = _tuples(
            aid[s],
            np.full(n_ratings, batch.id),
            showings.item[s],
            reviewer_ids[showings.reviewer[s]],
            _Lookup(showings.rating_dimension, dims),
            _Lookup(showings.rating_answer, answers),
        )
        bar.update(ratings_repo.upsert_rating_rows(session, rating_rows, now))
    return n_ratings


@dataclass(frozen=True)
class _Lookup:
    """A column of indices read as the names they stand for, a slice at a time."""

    index: Ints
    names: list[str]

    def __len__(self) -> int:
        return len(self.index)

    def __getitem__(self, part: slice) -> list[str]:
        return [self.names[i] for i in self.index[part].tolist()]


@dataclass(frozen=True)
class _Texts:
    """A column of indices into ``texts`` (-1: none) read as the texts, a slice at a time."""

    index: Ints
    texts: list[str]

    def part(self, rows: Ints) -> _Texts:
        return _Texts(self.index[rows], self.texts)

    def __len__(self) -> int:
        return len(self.index)

    def __getitem__(self, part: slice) -> list[str | None]:
        return [self.texts[i] if i >= 0 else None for i in self.index[part].tolist()]


def _tuples(
    *columns: Ints | npt.NDArray[np.bool_] | npt.NDArray[np.str_] | list[str] | _Lookup | _Texts,
) -> Iterator[tuple[Any, ...]]:
    """Rows of plain Python values (what the drivers take) from columns, converted a chunk at a time."""
    n = len(columns[0])
    step = ratings_repo.IMPORT_CHUNK
    for start in range(0, n, step):
        part = slice(start, start + step)
        yield from zip(*(c[part].tolist() if isinstance(c, np.ndarray) else c[part] for c in columns), strict=True)


def export_rows(engine: Engine, batch_name: str) -> list[dict[str, Any]]:
    """Raw, unblinded ratings: who rated which model's output how, with the canonical pairwise winner, the
    answer's comment and, on a row of its own, each "can't judge" answer with its reason."""
    batch = find_batch(engine, batch_name)
    with read_session(engine) as session:
        return list(_export_dicts(session, batch))


def _export_dicts(session: Session, batch: Batch) -> Generator[dict[str, Any]]:
    """The export's rows, one dict each (the key order is the column order), as the database streams them."""
    assert batch.id is not None
    pairwise = batch.mode == Mode.PAIRWISE
    with closing(ratings_repo.export_chunks(session, batch.id)) as chunks:
        for chunk in chunks:
            for rec in chunk:
                yield _export_dict(batch.name, pairwise, rec)


def _canonical(swapped: bool, value: str | None) -> str | None:
    """The pairwise winner in the canonical order (``a`` is model a): the stored answer is the side shown."""
    if value == PairwiseChoice.LEFT:
        return "b" if swapped else "a"
    if value == PairwiseChoice.RIGHT:
        return "a" if swapped else "b"
    return value


def _seconds(seconds: float | None) -> float | None:
    return None if seconds is None else round(float(seconds), 3)


def _export_dict(batch: str, pairwise: bool, rec: ratings_repo.ExportRow) -> dict[str, Any]:
    """One export row: the pairwise winner in the canonical order (the stored answer is the side shown).

    A "can't judge" answer has no scores: its row has dimension and score (winner) None and the reason in
    ``cant_judge_reason``; the answer's ``comment`` is on each of its rows. The two text columns come last, so
    the columns before them read as they always did; ``is_anchor`` (added after them) is the last.
    :func:`_csv_rows` and :func:`_jsonl_lines` write these same rows without building the dicts."""
    scenario, sample, reviewer, occurrence, position, swapped, dimension, value, model_a, model_b = rec[:10]
    repeat_a, seconds, is_gold, comment, reason, is_anchor = rec[10:]
    if pairwise:
        return {
            "batch": batch,
            "scenario": scenario,
            "sample_id": sample,
            "reviewer": reviewer,
            "model_a": model_a,
            "model_b": model_b,
            "dimension": dimension,
            "winner": _canonical(swapped, value),
            "shown_left": model_b if swapped else model_a,
            "occurrence": int(occurrence),
            "is_gold": bool(is_gold),
            "position": int(position),
            "seconds_spent": _seconds(seconds),
            "comment": comment,
            "cant_judge_reason": reason,
            "is_anchor": bool(is_anchor),
        }
    return {
        "batch": batch,
        "scenario": scenario,
        "sample_id": sample,
        "reviewer": reviewer,
        "model": model_a,
        "repeat": int(repeat_a),
        "dimension": dimension,
        "score": value,
        "occurrence": int(occurrence),
        "is_gold": bool(is_gold),
        "position": int(position),
        "seconds_spent": _seconds(seconds),
        "comment": comment,
        "cant_judge_reason": reason,
        "is_anchor": bool(is_anchor),
    }


@cycle_collection_paused()
def export_ratings(
    engine: Engine, batch_name: str, fmt: str, path: Path | None, *, stream: TextIO | None = None
) -> int:
    """Write the export as CSV or JSONL to ``path`` (atomically: a temporary file renamed into place) or
    ``stream``; returns the row count.

    Rows are written as the database streams them, so memory does not grow with the batch. CSV cells that a
    spreadsheet would run as a formula are neutralised (:func:`neutralise_cell`); JSONL carries every value
    exactly as stored."""
    batch = find_batch(engine, batch_name)
    if fmt not in ("csv", "jsonl"):
        raise RatingsImportError([Problem.argument("format", f"must be csv or jsonl, not {fmt!r}")])
    with read_session(engine) as session:
        if path is None:
            return _write_export(session, batch, fmt, stream if stream is not None else io.StringIO())
        tmp = path.with_name(path.name + ".tmp")
        try:
            with tmp.open("w", encoding="utf-8", newline="") as f:
                n = _write_export(session, batch, fmt, f)
            tmp.replace(path)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
        return n


def _write_export(session: Session, batch: Batch, fmt: str, out: TextIO) -> int:
    """The rows of :func:`_export_dict`, written a database chunk at a time without building a dict per row:
    at 3 million ratings the dicts, and a formula check on every cell, were half an export's time."""
    assert batch.id is not None
    pairwise = batch.mode == Mode.PAIRWISE
    n = 0
    if fmt == "jsonl":
        with closing(ratings_repo.export_chunks(session, batch.id, _json_string)) as chunks:
            for chunk in chunks:
                out.write("".join(_jsonl_lines(_json_string(batch.name), pairwise, chunk)))
                n += len(chunk)
        return n
    # Names and comments come from imports and reviewers as they were typed: no cell may run as a formula.
    # Names are made inert once, as they are read; dimensions and answers per row (neutralise_cell is called
    # only for a string starting so). The free texts (comment, cant_judge_reason) are written so that an import
    # reads back exactly what was typed (text_cell).
    writer = csv.writer(out, lineterminator="\n")
    with closing(ratings_repo.export_chunks(session, batch.id, neutralise_cell)) as chunks:
        for chunk in chunks:
            if n == 0:
                writer.writerow(PAIRWISE_EXPORT_COLUMNS if pairwise else RATING_EXPORT_COLUMNS)
            writer.writerows(_csv_rows(neutralise_cell(batch.name), pairwise, chunk))
            n += len(chunk)
    if n == 0:
        writer.writerow(RATING_HEADER)  # an empty export still names the columns an import needs
    return n


RATING_EXPORT_COLUMNS = (
    "batch", "scenario", "sample_id", "reviewer", "model", "repeat", "dimension", "score", "occurrence", "is_gold",
    "position", "seconds_spent", "comment", "cant_judge_reason", "is_anchor",
)  # fmt: skip
PAIRWISE_EXPORT_COLUMNS = (
    "batch", "scenario", "sample_id", "reviewer", "model_a", "model_b", "dimension", "winner", "shown_left",
    "occurrence", "is_gold", "position", "seconds_spent", "comment", "cant_judge_reason", "is_anchor",
)  # fmt: skip


class _Cells(dict[Any, str | None]):
    """Cells worked out once per distinct value: a batch has a handful of dimensions and answers (a Likert
    scale's points, a pair's winners), so a dict lookup replaces a function call per cell, which at millions of
    rows was a visible part of an export. A continuous scale has endless answers: past ``_CELLS_KEPT``
    distinct ones the rest are worked out each time and not kept. Pure functions of the value, so one
    module-wide dict serves every export."""

    def __init__(self, form: Callable[[Any], str | None]) -> None:
        super().__init__()
        self.form = form

    def __missing__(self, value: Any) -> str | None:
        cell = self.form(value)
        if len(self) < _CELLS_KEPT:
            self[value] = cell
        return cell


_CELLS_KEPT = 10_000


def _inert(value: str | None) -> str | None:
    """A dimension or an answer as its CSV cell (names are made inert once, when they are read)."""
    return None if value is None else neutralise_cell(value)


def _json_value(value: str | None) -> str:
    return "null" if value is None else _json_string(value)


_CSV_CELLS = _Cells(_inert)
_CSV_WINNERS = _Cells(lambda shown: _inert(_canonical(*shown)))  # (swapped, answer as shown) -> canonical winner
_JSON_CELLS = _Cells(_json_value)
_JSON_WINNERS = _Cells(lambda shown: _json_value(_canonical(*shown)))
_JSON_BOOL = {False: "false", True: "true"}


def _csv_rows(batch: str, pairwise: bool, chunk: list[ratings_repo.ExportRow]) -> list[tuple[Any, ...]]:
    """:func:`_export_dict`'s rows as CSV cells; ``batch`` and the chunk's names are already inert."""
    cells, winners = _CSV_CELLS, _CSV_WINNERS
    if pairwise:
        return [
            (batch, scenario, sample, who, ma, mb, cells[dim], winners[swap, value], mb if swap else ma, occ, gold,
             pos, None if secs is None else round(float(secs), 3), comment and text_cell(comment),
             reason and text_cell(reason), anchor)
            for scenario, sample, who, occ, pos, swap, dim, value, ma, mb, _, secs, gold, comment, reason, anchor
            in chunk
        ]  # fmt: skip
    return [
        (batch, scenario, sample, who, ma, rep, cells[dim], cells[value], occ, gold, pos,
         None if secs is None else round(float(secs), 3), comment and text_cell(comment), reason and text_cell(reason),
         anchor)
        for scenario, sample, who, occ, pos, _, dim, value, ma, _, rep, secs, gold, comment, reason, anchor in chunk
    ]  # fmt: skip


def _json_float(value: float) -> str:
    """Seconds, rounded as the export rounds them, as ``json`` writes a float (``NaN`` and ``Infinity``
    included)."""
    value = round(float(value), 3)
    if value != value:
        return "NaN"
    if value in (float("inf"), float("-inf")):
        return "Infinity" if value > 0 else "-Infinity"
    return repr(value)


def _json_line(columns: tuple[str, ...]) -> str:
    """The line ``json.dumps`` writes for a dict with these keys, a ``%s`` for each value's JSON text (ints
    print as ``%d`` would): the templates follow the column lists instead of being a third copy of them."""
    return "{" + ", ".join(f"{_json_string(c)}: %s" for c in columns) + "}\n"


_RATING_LINE = _json_line(RATING_EXPORT_COLUMNS)
_PAIRWISE_LINE = _json_line(PAIRWISE_EXPORT_COLUMNS)


def _jsonl_lines(batch: str, pairwise: bool, chunk: list[ratings_repo.ExportRow]) -> list[str]:
    """:func:`_export_dict`'s rows as the lines ``json.dumps(row, ensure_ascii=False)`` writes (the digest
    tests hold them to that); ``batch`` and the chunk's names are JSON strings already."""
    cells, winners, flag, text = _JSON_CELLS, _JSON_WINNERS, _JSON_BOOL, _json_string
    if pairwise:
        return [
            _PAIRWISE_LINE % (batch, scenario, sample, who, ma, "null" if mb is None else mb, cells[dim],
                              winners[swap, value], mb if swap else ma, occ, flag[gold], pos,
                              "null" if secs is None else _json_float(secs),
                              "null" if comment is None else text(comment), "null" if reason is None else text(reason),
                              flag[anchor])
            for scenario, sample, who, occ, pos, swap, dim, value, ma, mb, _, secs, gold, comment, reason, anchor
            in chunk
        ]  # fmt: skip
    return [
        _RATING_LINE % (batch, scenario, sample, who, ma, rep, cells[dim], cells[value], occ, flag[gold], pos,
                        "null" if secs is None else _json_float(secs), "null" if comment is None else text(comment),
                        "null" if reason is None else text(reason), flag[anchor])
        for scenario, sample, who, occ, pos, _, dim, value, ma, _, rep, secs, gold, comment, reason, anchor in chunk
    ]  # fmt: skip
