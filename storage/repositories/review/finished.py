"""The reviewer's list of their own finished items, a page at a time, numbered as their progress bar counts.

Blind: it reads assignments and the prompt of each item's sample, never an output or a model.
"""

from __future__ import annotations

from sqlalchemy import func
from sqlalchemy import select as sa_select
from sqlmodel import Session, col, select

from reviewer_app.domain.enums import FINISHED_STATUSES, AssignmentStatus
from storage.models import Assignment, Item, Sample
from storage.repositories.query import execute_wide, pk


def count_finished(session: Session, batch_id: int, reviewer_id: int) -> int:
    """How many of the reviewer's items of the batch are finished (done or "can't judge")."""
    stmt = (
        select(func.count())
        .select_from(Assignment)
        .where(
            col(Assignment.batch_id) == batch_id,
            col(Assignment.reviewer_id) == reviewer_id,
            col(Assignment.status).in_(FINISHED_STATUSES),
        )
    )
    return int(session.exec(stmt).one())


def finished_page(
    session: Session, batch_id: int, reviewer_id: int, *, offset: int, limit: int, before: int | None = None
) -> list[tuple[int, str, int, AssignmentStatus, str]]:
    """(assignment id, label, place in the queue, status, prompt JSON) of finished items, newest first.

    The place is the 1-based rank of the assignment's position among all of the reviewer's assignments of
    the batch (what the progress bar's "item N of M" counts), not the stored position, which has gaps.
    ``before``: only items placed before that stored position (the item before the one being looked at)."""
    places = (
        select(
            pk(Assignment.id).label("aid"),
            func.row_number().over(order_by=col(Assignment.position)).label("place"),
        )
        .where(col(Assignment.batch_id) == batch_id, col(Assignment.reviewer_id) == reviewer_id)
        .subquery()
    )
    stmt = (
        sa_select(
            pk(Assignment.id),
            col(Assignment.label),
            places.c.place,
            col(Assignment.status),
            col(Sample.prompt_json),
        )
        .join(places, places.c.aid == col(Assignment.id))
        .join(Item, col(Item.id) == col(Assignment.item_id))
        .join(Sample, col(Sample.id) == col(Item.sample_id))
        .where(col(Assignment.status).in_(FINISHED_STATUSES))
        .order_by(col(Assignment.position).desc())
        .offset(offset)
        .limit(limit)
    )
    if before is not None:
        stmt = stmt.where(col(Assignment.position) < before)
    return [(i, lb, int(p), AssignmentStatus(s), pj) for i, lb, p, s, pj in execute_wide(session, stmt)]
