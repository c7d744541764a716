"""Queries behind the lead's progress page: one row per assignment of one batch, with reviewer names."""

from __future__ import annotations

from sqlalchemy import select
from sqlmodel import Session

from storage.models import Assignment, Item, Reviewer, Sample, Scenario


def batch_progress_rows(session: Session, batch_id: int) -> list[tuple[str, str, str, float | None]]:
    """(scenario, reviewer name, status, seconds spent) for every assignment of ``batch_id``."""
    stmt = (
        select(Scenario.name, Reviewer.name, Assignment.status, Assignment.seconds_spent)
        .join(Item, Item.id == Assignment.item_id)
        .join(Sample, Sample.id == Item.sample_id)
        .join(Scenario, Scenario.id == Sample.scenario_id)
        .join(Reviewer, Reviewer.id == Assignment.reviewer_id)
        .where(Assignment.batch_id == batch_id)
    )
    return [(s, r, st, None if sec is None else float(sec)) for s, r, st, sec in session.execute(stmt)]


def finished_assignments(
    session: Session, batch_id: int, reviewer_id: int, limit: int
) -> list[tuple[int, str, int, str]]:
    """(assignment id, label, position, status) of the reviewer's latest finished items, newest first."""
    stmt = (
        select(Assignment.id, Assignment.label, Assignment.position, Assignment.status)
        .where(
            Assignment.batch_id == batch_id,
            Assignment.reviewer_id == reviewer_id,
            Assignment.status.in_(("done", "skipped")),
        )  # type: ignore[attr-defined]
        .order_by(Assignment.position.desc())  # type: ignore[attr-defined]
        .limit(limit)
    )
    return [(int(i), str(lb), int(p), str(s)) for i, lb, p, s in session.execute(stmt)]
