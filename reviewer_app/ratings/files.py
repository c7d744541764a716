"""Ratings files in: an import from other tools, checked like batches, written in one transaction.

Import formats (CSV, header required, extra columns ignored so an export can be imported elsewhere):
rating mode ``reviewer,sample_id,model,dimension,score``; pairwise ``reviewer,sample_id,model_a,model_b,
dimension,winner`` with winner ``a``, ``b``, ``tie`` or ``both_bad``. Optional ``comment`` and
``cant_judge_reason`` columns are read too (see :mod:`reviewer_app.ratings.check`), so an export imports
back with its comments and its "can't judge" answers. A JSONL export (one object per line, scores as numbers
or, as older exports wrote them, as text) imports as well: a file whose first line is a JSON object is read as
one.

The unblinded export, which imports back here, is :mod:`reviewer_app.ratings.export`.
"""

from __future__ import annotations

import logging
from array import array
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
from sqlalchemy.engine import Engine
from sqlmodel import Session
from tqdm import tqdm

from reviewer_app.batches.catalog import batch_rubric, find_batch
from reviewer_app.domain.enums import AssignmentStatus, Role
from reviewer_app.domain.keyed_random import KeyedRandom, secret_bytes
from reviewer_app.ratings.check import check_rating_lines, count_lines
from reviewer_app.ratings.showings import Ints, Showings
from reviewer_app.review.blinding import draw_labels
from storage.engine import read_session, write_session
from storage.gc_pause import cycle_collection_paused
from storage.models import Batch, utcnow
from storage.repositories import people as reviewer_repo
from storage.repositories.ratings import imports as ratings_repo
from storage.repositories.ratings import items as item_repo
from storage.repositories.review import assignments as assignment_repo

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
        showings = check_rating_lines(lines, str(path), index, rubric, batch.name)
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
