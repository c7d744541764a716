"""Ratings: the dialect-specific upsert lives here and nowhere else."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import delete, func, select
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlmodel import Session

from storage.models import Assignment, Item, Output, Rating, Sample, Scenario


def upsert_ratings(session: Session, rows: Sequence[dict[str, Any]], now: datetime) -> None:
    """Insert or update (assignment, dimension) ratings: a second submit is an update, never a duplicate."""
    if not rows:
        return
    dialect = session.get_bind().dialect.name
    insert_fn = pg_insert if dialect == "postgresql" else sqlite_insert
    values = [{**r, "created_at": now, "updated_at": now} for r in rows]
    stmt = insert_fn(Rating).values(values)
    stmt = stmt.on_conflict_do_update(
        index_elements=["assignment_id", "dimension"],
        set_={"value": stmt.excluded.value, "updated_at": stmt.excluded.updated_at},
    )
    session.execute(stmt)


def delete_ratings(session: Session, assignment_id: int, keep: Sequence[str] = ()) -> None:
    stmt = delete(Rating).where(Rating.assignment_id == assignment_id)
    if keep:
        stmt = stmt.where(Rating.dimension.not_in(list(keep)))  # type: ignore[attr-defined]
    session.execute(stmt)


def ratings_for(session: Session, assignment_id: int) -> dict[str, str]:
    stmt = select(Rating.dimension, Rating.value).where(Rating.assignment_id == assignment_id)
    return dict(session.execute(stmt).tuples().all())


def item_content(session: Session, item_id: int) -> tuple[Item, Sample, str, Output, Output | None]:
    """The item with its sample, scenario name and outputs (the caller decides what a reviewer may see)."""
    item = session.get(Item, item_id)
    assert item is not None
    sample = session.get(Sample, item.sample_id)
    assert sample is not None
    scenario = session.get(Scenario, sample.scenario_id)
    assert scenario is not None
    a = session.get(Output, item.output_a_id)
    assert a is not None
    b = session.get(Output, item.output_b_id) if item.output_b_id else None
    return item, sample, scenario.name, a, b


def reviewer_progress(session: Session, batch_id: int, reviewer_id: int) -> tuple[int, int]:
    """(done, assigned) for one reviewer in one batch; skipped ("can't judge") items count as done."""
    stmt = (
        select(Assignment.status, func.count())
        .where(Assignment.batch_id == batch_id, Assignment.reviewer_id == reviewer_id)
        .group_by(Assignment.status)
    )
    counts = dict(session.execute(stmt).tuples().all())
    done = int(counts.get("done", 0)) + int(counts.get("skipped", 0))
    return done, done + int(counts.get("pending", 0))


def progress_rows(session: Session) -> list[tuple[int, str, int, str, float | None]]:
    """(batch id, scenario, reviewer id, status, seconds spent) for every assignment, for the lead's page."""
    stmt = (
        select(Assignment.batch_id, Scenario.name, Assignment.reviewer_id, Assignment.status, Assignment.seconds_spent)
        .join(Item, Item.id == Assignment.item_id)
        .join(Sample, Sample.id == Item.sample_id)
        .join(Scenario, Scenario.id == Sample.scenario_id)
    )
    return [(int(b), s, int(r), st, sec) for b, s, r, st, sec in session.execute(stmt)]
