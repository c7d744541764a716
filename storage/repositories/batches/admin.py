"""Queries behind the admin's housekeeping: archived batches, outputs per model, the identity-leak list,
per-person loads, the titles reviewers see, and deleting a batch with every row that belongs to it.

Unblinded: these read model names, so only admin pages and the command line use them.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import Table, delete, func, update
from sqlalchemy import select as sa_select
from sqlmodel import Session, SQLModel, col, select

from reviewer_app.domain.enums import AssignmentStatus, BatchStatus
from storage.models import Assignment, Batch, Model, Output, Reviewer, Sample, Scenario
from storage.repositories.query import execute_wide, pk


def batches(session: Session, *, archived: bool) -> list[Batch]:
    """The batches that are (``archived=True``) or are not archived, oldest first."""
    stmt = select(Batch).where(col(Batch.archived_at).is_not(None) if archived else col(Batch.archived_at).is_(None))
    return list(session.exec(stmt.order_by(col(Batch.id))))


def lock_batch(session: Session, batch_id: int) -> Batch | None:
    """The batch, row-locked on PostgreSQL: a submit or a claim in flight (they share this lock) finishes
    before the batch is archived or deleted, and the ones after see the change. SQLite's BEGIN IMMEDIATE
    already serializes writers."""
    stmt = select(Batch).where(col(Batch.id) == batch_id)
    if session.get_bind().dialect.name == "postgresql":
        stmt = stmt.with_for_update()
    return session.exec(stmt).one_or_none()


def set_archived(session: Session, batch_id: int, when: datetime | None) -> None:
    """Archive (``when`` set; the batch is closed too, so it takes no ratings) or restore (``None``; it stays
    closed until an admin opens it)."""
    values: dict[str, object] = {"archived_at": when}
    if when is not None:
        values["status"] = BatchStatus.CLOSED
    session.exec(update(Batch).where(col(Batch.id) == batch_id).values(**values))


def set_batch_display_name(session: Session, batch_id: int, title: str | None) -> None:
    """Set (or, with None, clear) the title reviewers see for the batch. Caller commits."""
    session.exec(update(Batch).where(col(Batch.id) == batch_id).values(display_name=title))


def set_scenario_display_names(session: Session, batch_id: int, titles: dict[str, str | None]) -> None:
    """Set the titles reviewers see for the batch's scenarios ({scenario name: title}; None clears one).
    Caller commits."""
    for name, title in titles.items():
        session.exec(
            update(Scenario)
            .where(col(Scenario.batch_id) == batch_id, col(Scenario.name) == name)
            .values(display_name=title)
        )


def outputs_per_model(session: Session, batch_ids: Iterable[int]) -> dict[int, dict[str, int]]:
    """{batch id: {model: outputs loaded}} for the given batches, models by name."""
    ids = list(batch_ids)
    if not ids:
        return {}
    rows = session.exec(
        select(col(Output.batch_id), col(Model.name), func.count())
        .join(Model, col(Model.id) == col(Output.model_id))
        .where(col(Output.batch_id).in_(ids))
        .group_by(col(Output.batch_id), col(Model.name))
        .order_by(col(Output.batch_id), col(Model.name))
    ).all()
    out: dict[int, dict[str, int]] = {i: {} for i in ids}
    for batch_id, model, n in rows:
        out[int(batch_id)][str(model)] = int(n)
    return out


@dataclass(frozen=True)
class LeakRow:
    """One output whose text names a model or vendor, as the load's scan found it."""

    scenario: str
    sample_id: str
    model: str
    repeat: int
    words: str  # comma-separated, as stored
    excluded: bool
    masked: bool


def leak_rows(session: Session, batch_id: int) -> list[LeakRow]:
    """Every output of the batch that the load's scan flagged, by scenario, sample, model and repeat."""
    stmt = (
        sa_select(
            col(Scenario.name),
            col(Sample.key),
            col(Model.name),
            col(Output.repeat),
            col(Output.leak_words),
            col(Output.excluded),
            col(Output.shown_text).is_not(None),
        )
        .join(Sample, col(Sample.id) == col(Output.sample_id))
        .join(Scenario, col(Scenario.id) == col(Sample.scenario_id))
        .join(Model, col(Model.id) == col(Output.model_id))
        .where(col(Output.batch_id) == batch_id, col(Output.leak_words) != "")
        .order_by(col(Scenario.name), col(Sample.key), col(Model.name), col(Output.repeat))
    )
    rows = execute_wide(session, stmt).all()
    return [LeakRow(sc, key, m, int(rep), words, bool(ex), bool(masked)) for sc, key, m, rep, words, ex, masked in rows]


def load_per_person(session: Session, batch_id: int) -> dict[str, int]:
    """{person: unfinished item showings they hold in the batch} (planned or claimed, not yet answered)."""
    rows = session.exec(
        select(col(Reviewer.name), func.count())
        .select_from(Assignment)
        .join(Reviewer, pk(Reviewer.id) == col(Assignment.reviewer_id))
        .where(col(Assignment.batch_id) == batch_id, col(Assignment.status) == AssignmentStatus.PENDING)
        .group_by(col(Reviewer.name))
    ).all()
    return {str(name): int(n) for name, n in rows}


def planned_people(session: Session, batch_id: int) -> list[str]:
    """The people with planned (not pool-claimed) showings in the batch: the admin's last choice for it."""
    rows = session.exec(
        select(col(Reviewer.name))
        .join(Assignment, col(Assignment.reviewer_id) == pk(Reviewer.id))
        .where(col(Assignment.batch_id) == batch_id, col(Assignment.reserved_until).is_(None))
        .distinct()
        .order_by(col(Reviewer.name))
    ).all()
    return [str(name) for name in rows]


def image_names(session: Session, *, batch_id: int, others: bool) -> set[str]:
    """The stored image names the batch's samples show (``others=False``), or those of every other batch."""
    where = col(Sample.batch_id) != batch_id if others else col(Sample.batch_id) == batch_id
    names: set[str] = set()
    for text in session.exec(select(col(Sample.images_json)).where(where, col(Sample.images_json) != "[]")):
        names.update(str(n) for n in json.loads(text))
    return names


def _batch_tables() -> list[Table]:
    """Every table with a ``batch_id`` column, children before parents.

    Found from the metadata rather than listed, so a table added later (drafts, caches) is deleted with its
    batch instead of making the delete fail on its foreign key."""
    return [
        t
        for t in reversed(SQLModel.metadata.sorted_tables)
        if "batch_id" in t.columns and t.name != Batch.__tablename__
    ]


def delete_batch(session: Session, batch_id: int) -> dict[str, int]:
    """Delete the batch and every row that belongs to it; returns {table: rows deleted}. Caller commits
    (one transaction: all of it or nothing)."""
    counts: dict[str, int] = {}
    for table in _batch_tables():
        result = session.exec(delete(table).where(table.c.batch_id == batch_id))
        counts[table.name] = int(result.rowcount or 0)
    session.exec(delete(Batch).where(col(Batch.id) == batch_id))
    return counts


def held_slots(session: Session, batch_id: int) -> int:
    """First showings in the batch that hold a slot (answered or waiting; "can't judge" gives its slot up)."""
    return int(
        session.exec(
            select(func.count())
            .select_from(Assignment)
            .where(
                col(Assignment.batch_id) == batch_id,
                col(Assignment.occurrence) == 0,
                col(Assignment.status) != AssignmentStatus.SKIPPED,
            )
        ).one()
    )
