"""Batch housekeeping for admins: the batches table with outputs per model, archiving, deleting, and what the
Assign form shows before anything is planned.

A batch loaded by mistake can be *archived* (closed, out of every list, every row kept, restorable) or
*deleted* (the batch with its ratings, assignments, items, outputs, samples and scenarios, in one
transaction, and then the stored images no other batch shows). Deleting asks for the batch's name typed
out, here in the service, so no front end can skip it.

Functions that change a batch take ``by``: the signed-in person on a page (only an admin may), or None from
the command line, whose user runs the server.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass, field

from sqlalchemy.engine import Engine

from reviewer_app.domain.enums import Role
from reviewer_app.domain.views import Person
from reviewer_app.errors import ConflictError, NotFoundError, Problem, ValidationError
from reviewer_app.services.batches import batch_rubric, find_batch, image_path
from reviewer_app.services.reviewers import require
from storage.engine import read_session, write_session
from storage.models import Batch, utcnow
from storage.repositories import batch_admin as repo
from storage.repositories import batches as batch_repo

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class BatchRow:
    """One line of the batches table: the batch, its counts and how many outputs each model has."""

    batch: Batch
    counts: batch_repo.BatchCounts
    per_model: dict[str, int] = field(default_factory=dict)

    @property
    def models_text(self) -> str:
        """``model outputs`` pairs, so a lopsided batch (one model with 805, the other missing) shows at once."""
        return ", ".join(f"{m} {n}" for m, n in self.per_model.items()) or "none"


def batch_table(engine: Engine, *, archived: bool = False) -> list[BatchRow]:
    """The batches that are not archived (or, with ``archived=True``, those that are), oldest first."""
    with read_session(engine) as session:
        batches = [b for b in repo.batches(session, archived=archived) if b.id is not None]
        per_model = repo.outputs_per_model(session, [b.id for b in batches if b.id is not None])
        return [
            BatchRow(b, batch_repo.batch_counts(session, b.id), per_model.get(b.id, {}))
            for b in batches
            if b.id is not None
        ]


def outputs_per_model(engine: Engine, batch_id: int) -> dict[str, int]:
    """{model: outputs loaded} for one batch, by model name."""
    with read_session(engine) as session:
        return repo.outputs_per_model(session, [batch_id]).get(batch_id, {})


def _allowed(by: Person | None) -> None:
    if by is not None:
        require(by, Role.ADMIN)


def archive_batch(engine: Engine, name: str, *, by: Person | None = None) -> Batch:
    """Archive a batch: it is closed (no new or revised ratings) and leaves every list, keeping all its rows.

    Raises :class:`NotFoundError`, :class:`AuthError` (``by`` is not an admin), :class:`ConflictError` when
    it is archived already."""
    _allowed(by)
    batch = find_batch(engine, name)
    assert batch.id is not None
    with write_session(engine) as session:
        locked = repo.lock_batch(session, batch.id)
        if locked is None:
            raise NotFoundError(f"batch {name!r} no longer exists")
        if locked.archived_at is not None:
            raise ConflictError(f"batch {batch.name!r} is archived already")
        repo.set_archived(session, batch.id, utcnow())
    log.info("batch %r (id %d) archived", batch.name, batch.id)
    return find_batch(engine, name)


def restore_batch(engine: Engine, name: str, *, by: Person | None = None) -> Batch:
    """Bring an archived batch back into the lists, closed: an admin opens it again when it should take ratings.

    Raises :class:`NotFoundError`, :class:`AuthError`, :class:`ConflictError` when it is not archived."""
    _allowed(by)
    batch = find_batch(engine, name)
    assert batch.id is not None
    with write_session(engine) as session:
        locked = repo.lock_batch(session, batch.id)
        if locked is None:
            raise NotFoundError(f"batch {name!r} no longer exists")
        if locked.archived_at is None:
            raise ConflictError(f"batch {batch.name!r} is not archived")
        repo.set_archived(session, batch.id, None)
    log.info("batch %r (id %d) restored", batch.name, batch.id)
    return find_batch(engine, name)


@dataclass(frozen=True)
class DeleteSummary:
    batch_name: str
    batch_id: int
    rows: dict[str, int]  # table -> rows deleted
    images: int  # stored image files removed (those no other batch shows)

    def lines(self) -> list[str]:
        r = self.rows
        return [
            f"Deleted batch {self.batch_name!r} (id {self.batch_id}) with {r.get('rating', 0)} rating(s), "
            f"{r.get('assignment', 0)} assignment(s), {r.get('item', 0)} item(s), {r.get('output', 0)} output(s), "
            f"{r.get('sample', 0)} sample(s), {r.get('scenario', 0)} scenario(s) and {self.images} stored image(s)."
        ]


class DeleteConfirmationError(ValidationError):
    """The typed confirmation does not match the batch's name."""

    what = "confirmation"


def delete_batch(engine: Engine, name: str, *, confirm: str, by: Person | None = None) -> DeleteSummary:
    """Delete a batch and everything that belongs to it, for good; ``confirm`` must be the batch's name.

    The rows go in one transaction (the batch row is locked first, so a submit in flight finishes before and
    any later one finds no batch); the stored images no other batch shows are removed after the commit.
    Raises :class:`DeleteConfirmationError` (field ``confirm``) when ``confirm`` is not the name,
    :class:`NotFoundError`, :class:`AuthError` (``by`` is not an admin)."""
    _allowed(by)
    batch = find_batch(engine, name)
    assert batch.id is not None
    if confirm.strip() != batch.name:
        raise DeleteConfirmationError(
            [Problem.argument("confirm", f"type the batch's name, {batch.name!r}, to delete it")]
        )
    with write_session(engine) as session:
        if repo.lock_batch(session, batch.id) is None:
            raise NotFoundError(f"batch {batch.name!r} no longer exists")
        images = repo.image_names(session, batch_id=batch.id, others=False)
        images -= repo.image_names(session, batch_id=batch.id, others=True)
        rows = repo.delete_batch(session, batch.id)
    removed = 0
    for stored in sorted(images):
        try:
            image_path(stored).unlink()
            removed += 1
        except (FileNotFoundError, NotFoundError):
            pass
    log.info("batch %r (id %d) deleted: %s, %d image(s)", batch.name, batch.id, rows, removed)
    return DeleteSummary(batch.name, batch.id, rows, removed)


@dataclass(frozen=True)
class LoadPreview:
    """What an Assign would roughly hand out, shown before the admin confirms it."""

    batch: str
    free_slots: int  # slots no one holds: items x k minus the first showings held
    items: int
    overlap: int
    current: dict[str, int]  # person -> unfinished showings they hold in the batch now
    per_person: int  # about this many new showings each (repeats for self-consistency come on top)

    def rows(self, chosen: list[str]) -> list[dict[str, object]]:
        return [{"person": p, "unfinished now": self.current.get(p, 0), "new (about)": self.per_person} for p in chosen]


def assign_defaults(engine: Engine, batch_name: str) -> list[str]:
    """The people an admin planned this batch for before (their last choice), or nobody: never every
    reviewer by default on the page (that once handed 845 items to each demo person)."""
    batch = find_batch(engine, batch_name)
    assert batch.id is not None
    with read_session(engine) as session:
        return repo.planned_people(session, batch.id)


def preview_assign(engine: Engine, batch_name: str, chosen: list[str]) -> LoadPreview:
    """How many new showings each of ``chosen`` would get from an Assign now (an estimate: the plan itself
    balances loads to within one and adds repeats), and what each holds already."""
    batch = find_batch(engine, batch_name)
    assert batch.id is not None
    k = batch_rubric(batch).overlap
    with read_session(engine) as session:
        items = batch_repo.batch_counts(session, batch.id).items
        free = max(0, items * k - repo.held_slots(session, batch.id))
        current = repo.load_per_person(session, batch.id)
    each = min(items, math.ceil(free / len(chosen))) if chosen else 0
    return LoadPreview(batch.name, free, items, k, current, each)
