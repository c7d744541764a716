"""Queries behind assignment: who holds which item, reviewer queues, and the locked claim of a free slot.

A slot of an item is *held* by an assignment that is done, or pending and either planned (no expiry) or
reserved until a time still in the future. Holding counts only first showings (occurrence 0): repeats and
gold items are extra to the overlap k.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import and_, delete, func, insert, or_, select, update
from sqlalchemy.orm import aliased
from sqlmodel import Session

from storage.models import Assignment, Batch, Item, Output


def _holding(now: datetime) -> Any:
    return and_(
        Assignment.occurrence == 0,
        or_(
            Assignment.status == "done",
            and_(
                Assignment.status == "pending",
                or_(Assignment.reserved_until.is_(None), Assignment.reserved_until > now),
            ),  # type: ignore[union-attr]
        ),
    )


def lock_batch(session: Session, batch_id: int, *, exclusive: bool) -> Batch | None:
    """Row-lock the batch on PostgreSQL: ``assign`` takes it exclusively, claims share it, so a plan is never
    made while slots are being claimed. SQLite's BEGIN IMMEDIATE already serializes writers."""
    stmt = select(Batch).where(Batch.id == batch_id)
    if session.get_bind().dialect.name == "postgresql":
        stmt = stmt.with_for_update(read=not exclusive)
    return session.execute(stmt).scalar_one_or_none()


def plan_inputs(session: Session, batch_id: int) -> list[tuple[int, int, int | None, bool]]:
    """(item id, model id of output a, model id of output b or None, is_gold) for every item, in id order."""
    out_a, out_b = aliased(Output), aliased(Output)
    stmt = (
        select(Item.id, out_a.model_id, out_b.model_id, Item.is_gold)
        .join(out_a, out_a.id == Item.output_a_id)
        .outerjoin(out_b, out_b.id == Item.output_b_id)
        .where(Item.batch_id == batch_id)
        .order_by(Item.id)
    )
    return [(int(a), int(b), None if c is None else int(c), bool(d)) for a, b, c, d in session.execute(stmt)]


def holders(session: Session, batch_id: int, now: datetime) -> dict[int, set[int]]:
    """item id -> reviewers holding one of its slots."""
    stmt = select(Assignment.item_id, Assignment.reviewer_id).where(Assignment.batch_id == batch_id, _holding(now))
    out: dict[int, set[int]] = defaultdict(set)
    for item_id, reviewer_id in session.execute(stmt):
        out[item_id].add(reviewer_id)
    return out


def reviewer_items(session: Session, batch_id: int) -> dict[int, set[int]]:
    """reviewer id -> every item they have in this batch in any state (nobody gets an item twice)."""
    out: dict[int, set[int]] = defaultdict(set)
    for reviewer_id, item_id in session.execute(
        select(Assignment.reviewer_id, Assignment.item_id).where(Assignment.batch_id == batch_id)
    ):
        out[reviewer_id].add(item_id)
    return out


def taken_labels(session: Session, batch_id: int) -> set[str]:
    return set(session.execute(select(Assignment.label).where(Assignment.batch_id == batch_id)).scalars())


def label_taken(session: Session, batch_id: int, label: str) -> bool:
    stmt = select(Assignment.id).where(Assignment.batch_id == batch_id, Assignment.label == label).limit(1)
    return session.execute(stmt).first() is not None


def next_position(session: Session, batch_id: int, reviewer_id: int) -> int:
    stmt = select(func.max(Assignment.position)).where(
        Assignment.batch_id == batch_id, Assignment.reviewer_id == reviewer_id
    )
    top = session.execute(stmt).scalar_one()
    return 0 if top is None else int(top) + 1


def next_positions(session: Session, batch_id: int) -> dict[int, int]:
    stmt = select(Assignment.reviewer_id, func.max(Assignment.position)).where(Assignment.batch_id == batch_id)
    return {r: int(p) + 1 for r, p in session.execute(stmt.group_by(Assignment.reviewer_id))}


def insert_assignments(session: Session, rows: Sequence[dict[str, Any]]) -> None:
    if rows:
        session.execute(insert(Assignment), list(rows))


def release_unstarted(session: Session, batch_id: int) -> int:
    """Drop pending assignments nobody has opened yet, so a new plan can spread them over more reviewers."""
    result = session.execute(
        delete(Assignment).where(
            Assignment.batch_id == batch_id,
            Assignment.status == "pending",
            Assignment.shown_at.is_(None),  # type: ignore[union-attr]
        )
    )
    return int(result.rowcount or 0)


def release_reviewer(session: Session, reviewer_id: int) -> int:
    """Drop a reviewer's pending assignments (they left); their slots go back to the pool."""
    result = session.execute(
        delete(Assignment).where(Assignment.reviewer_id == reviewer_id, Assignment.status == "pending")
    )
    return int(result.rowcount or 0)


def pool_candidates(session: Session, batch_id: int, reviewer_id: int, overlap: int, now: datetime) -> list[int]:
    """Items of the batch with a free slot that this reviewer has never had (gold items are never pooled)."""
    held = (
        select(Assignment.item_id, func.count().label("n"))
        .where(Assignment.batch_id == batch_id, _holding(now))
        .group_by(Assignment.item_id)
        .subquery()
    )
    mine = select(Assignment.item_id).where(Assignment.batch_id == batch_id, Assignment.reviewer_id == reviewer_id)
    stmt = (
        select(Item.id)
        .outerjoin(held, held.c.item_id == Item.id)
        .where(
            Item.batch_id == batch_id,
            Item.is_gold.is_(False),  # type: ignore[attr-defined]
            func.coalesce(held.c.n, 0) < overlap,
            Item.id.not_in(mine),
        )  # type: ignore[union-attr]
    )
    return [int(i) for i in session.execute(stmt).scalars()]


def lock_item(session: Session, item_id: int) -> bool:
    """Lock an item row for a claim (PostgreSQL: ``FOR UPDATE SKIP LOCKED``; False if another claim has it)."""
    stmt = select(Item.id).where(Item.id == item_id)
    if session.get_bind().dialect.name == "postgresql":
        stmt = stmt.with_for_update(skip_locked=True)
    return session.execute(stmt).scalar_one_or_none() is not None


def held_count(session: Session, item_id: int, now: datetime, *, excluding: int | None = None) -> int:
    stmt = select(func.count()).select_from(Assignment).where(Assignment.item_id == item_id, _holding(now))
    if excluding is not None:
        stmt = stmt.where(Assignment.id != excluding)
    return int(session.execute(stmt).scalar_one())


def pending_queue(session: Session, batch_id: int, reviewer_id: int, *, limit: int | None = None) -> list[Assignment]:
    stmt = (
        select(Assignment)
        .where(Assignment.batch_id == batch_id, Assignment.reviewer_id == reviewer_id, Assignment.status == "pending")
        .order_by(Assignment.position)
    )
    if limit is not None:
        stmt = stmt.limit(limit)
    return list(session.execute(stmt).scalars())


def reviewer_assignments(session: Session, batch_id: int, reviewer_id: int) -> list[Assignment]:
    stmt = (
        select(Assignment)
        .where(Assignment.batch_id == batch_id, Assignment.reviewer_id == reviewer_id)
        .order_by(Assignment.position)
    )
    return list(session.execute(stmt).scalars())


def get_assignment(session: Session, assignment_id: int, *, lock: bool = False) -> Assignment | None:
    stmt = select(Assignment).where(Assignment.id == assignment_id)
    if lock and session.get_bind().dialect.name == "postgresql":
        stmt = stmt.with_for_update()
    return session.execute(stmt).scalar_one_or_none()


def update_assignment(session: Session, assignment_id: int, **values: Any) -> None:
    session.execute(update(Assignment).where(Assignment.id == assignment_id).values(**values))


def delete_assignment(session: Session, assignment_id: int) -> None:
    session.execute(delete(Assignment).where(Assignment.id == assignment_id))


def reviewer_sides(session: Session, batch_id: int, reviewer_id: int) -> dict[int, int]:
    """model id -> (times shown left) - (times shown right) for this reviewer, for pool counterbalancing."""
    out_a, out_b = aliased(Output), aliased(Output)
    stmt = (
        select(out_a.model_id, out_b.model_id, Assignment.swapped)
        .join(Item, Item.id == Assignment.item_id)
        .join(out_a, out_a.id == Item.output_a_id)
        .join(out_b, out_b.id == Item.output_b_id)
        .where(Assignment.batch_id == batch_id, Assignment.reviewer_id == reviewer_id, Item.output_b_id.is_not(None))  # type: ignore[union-attr]
    )
    balance: dict[int, int] = defaultdict(int)
    for a, b, swapped in session.execute(stmt):
        left, right = (b, a) if swapped else (a, b)
        balance[left] += 1
        balance[right] -= 1
    return balance


def item_models(session: Session, item_id: int) -> tuple[int, int | None]:
    item = session.get(Item, item_id)
    assert item is not None
    a = session.get(Output, item.output_a_id)
    b = session.get(Output, item.output_b_id) if item.output_b_id else None
    assert a is not None
    return a.model_id, (b.model_id if b else None)


def assignment_ids(session: Session, batch_id: int) -> dict[tuple[int, int], int]:
    """(reviewer id, item id) -> id of the first-showing assignment."""
    stmt = select(Assignment.reviewer_id, Assignment.item_id, Assignment.id).where(
        Assignment.batch_id == batch_id, Assignment.occurrence == 0
    )
    return {(r, i): int(a) for r, i, a in session.execute(stmt)}


def shown_models(session: Session, assignment_id: int) -> tuple[str, str | None]:
    """The model names behind an assignment as displayed (left, right). Unblinding: for the demo's scripted
    colleagues and for tests only, never for anything served to a reviewer."""
    from storage.models import Model

    a = session.get(Assignment, assignment_id)
    assert a is not None
    ids = item_models(session, a.item_id)
    names = []
    for mid in ids:
        if mid is not None:
            model = session.get(Model, mid)
            assert model is not None
            names.append(model.name)
    if len(names) == 1:
        return names[0], None
    return (names[1], names[0]) if a.swapped else (names[0], names[1])


def assignment_id_for(session: Session, item_id: int, reviewer_id: int, occurrence: int = 0) -> int:
    stmt = select(Assignment.id).where(
        Assignment.item_id == item_id, Assignment.reviewer_id == reviewer_id, Assignment.occurrence == occurrence
    )
    return int(session.execute(stmt).scalar_one())
