"""The batches there are: one found by its name (or id), the list of them, open or closed, and their rubrics.

Every page and command that works on a batch starts here: :func:`find_batch` (and :func:`no_such_batch`, the
one error for a name that names no batch), :func:`batch_list`, :func:`set_batch_open` and
:func:`batch_rubric`, the parsed rubric every page view and submit needs. Loading a batch is
:mod:`reviewer_app.batches.loading`; archiving and deleting one, :mod:`reviewer_app.batches.admin`.
"""

from __future__ import annotations

import functools
import logging

from sqlalchemy.engine import Engine
from sqlmodel import Session

from reviewer_app.domain.enums import BatchStatus
from reviewer_app.domain.rubric import Rubric
from reviewer_app.errors import ConflictError, NotFoundError
from storage.engine import read_session, write_session
from storage.models import Batch
from storage.repositories.batches import batches as repo

log = logging.getLogger(__name__)


def find_batch(engine: Engine, name: str) -> Batch:
    """The batch named ``name``; :class:`NotFoundError` listing the known names otherwise."""
    with read_session(engine) as session:
        batch = repo.get_batch_by_name(session, name)
        if batch is None and name.isdigit():
            batch = repo.get_batch(session, int(name))
        if batch is None:
            raise no_such_batch(session, name)
        return batch


def no_such_batch(session: Session, name: str) -> NotFoundError:
    """The one error for a batch name that names no batch (load, assign, report, compare, ...): which name,
    the names there are, and the command that lists them."""
    known = ", ".join(b.name for b in repo.list_batches(session)) or "none yet"
    return NotFoundError(f"no batch named {name!r} (known batches: {known}); see `blind-review list-batches`")


def batch_list(engine: Engine) -> list[Batch]:
    """Every batch (not archived), oldest first, without counts: a picker's choices (the counts of a big batch
    take a third of a second to read)."""
    with read_session(engine) as session:
        return [b for b in repo.list_batches(session) if b.id is not None]


def set_batch_open(engine: Engine, name: str, is_open: bool) -> Batch:
    """Open or close a batch; a closed batch keeps its ratings but takes no new or revised ones."""
    batch = find_batch(engine, name)
    assert batch.id is not None
    if is_open and batch.archived_at is not None:
        raise ConflictError(f"batch {batch.name!r} is archived; restore it before opening it")
    status = BatchStatus.OPEN if is_open else BatchStatus.CLOSED
    with write_session(engine) as session:
        repo.set_batch_status(session, batch.id, status)
    log.info("batch %r (id %d) is now %s", batch.name, batch.id, status)
    return find_batch(engine, name)


def batch_rubric(batch: Batch) -> Rubric:
    """The batch's rubric, parsed once per process: every page view and submit needs it, and a batch's
    rubric never changes once loaded."""
    return _parse_rubric_json(batch.rubric_json)


@functools.lru_cache(maxsize=256)
def _parse_rubric_json(text: str) -> Rubric:
    # Keyed by the stored text itself, so a rebuilt database (same batch id, other rubric) is never served
    # a stale parse.
    return Rubric.from_json(text)
