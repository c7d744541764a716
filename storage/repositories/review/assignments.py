"""Queries behind assignment: who holds which item, plans, reviewer queues, and the locks a claim or a submit
takes. (The walk that finds a free slot for a pool claim is :mod:`storage.repositories.review.claims`.)

A slot of an item is *held* by an assignment that is done, or pending and either planned (no expiry) or
reserved until a time still in the future (:func:`holding`). Holding counts only first showings (occurrence
0): repeats and gold items are extra to the overlap k. A reservation *released* because another reviewer
submitted the item first is set to :data:`RELEASED`, a time long past, so it holds nothing and its reviewer can
be told why their answer was not needed.

Locks (PostgreSQL): a claim or a submit that changes who holds an item takes the batch row shared (a plan,
which takes it exclusively, is not being made), then the item's row lock (``FOR NO KEY UPDATE``, which
does not block the foreign-key checks of inserts that reference the item), then assignment rows; always in
that order, so two of them never wait for each other.

Blind: model ids only (for counterbalancing sides), never a model's name. Claims are logged at DEBUG (a line
per step, by ids only: never a model name next to a reviewer); planned and released assignments at INFO.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Sequence
from datetime import UTC, datetime
from enum import Enum
from typing import Any

from sqlalchemy import BindParameter, ColumnElement, and_, delete, func, insert, or_, update
from sqlalchemy.orm import aliased
from sqlmodel import Session, col, select

from reviewer_app.domain.enums import AssignmentStatus, Role
from storage.models import Assignment, Batch, Item, Output, Reviewer
from storage.repositories.query import pk

log = logging.getLogger(__name__)

RELEASED = datetime(2000, 1, 1, tzinfo=UTC)  # reserved_until of a reservation released for another's submit


def holding(now: datetime | BindParameter[datetime]) -> ColumnElement[bool]:
    """Whether an assignment holds a slot of its item at ``now`` (see the module's docstring): the one
    definition the plans, the pool walk (:mod:`storage.repositories.review.claims`) and the submits count by."""
    return and_(
        col(Assignment.occurrence) == 0,
        or_(
            col(Assignment.status) == AssignmentStatus.DONE,
            and_(
                col(Assignment.status) == AssignmentStatus.PENDING,
                or_(col(Assignment.reserved_until).is_(None), col(Assignment.reserved_until) > now),
            ),
        ),
    )


def lock_batch(session: Session, batch_id: int, *, exclusive: bool) -> Batch | None:
    """Row-lock the batch on PostgreSQL: ``assign`` takes it exclusively, claims share it, so a plan is never
    made while slots are being claimed. SQLite's BEGIN IMMEDIATE already serializes writers."""
    stmt = select(Batch).where(col(Batch.id) == batch_id)
    if session.get_bind().dialect.name == "postgresql":
        stmt = stmt.with_for_update(read=not exclusive)
    return session.exec(stmt).one_or_none()


def plan_inputs(session: Session, batch_id: int) -> list[tuple[int, int, int | None, bool]]:
    """(item id, model id of output a, model id of output b or None, is_gold) for every item, in the batch's
    pool order (``Item.pool_key``, then id): a secret order, where ids follow the files (so the models)."""
    out_a, out_b = aliased(Output), aliased(Output)
    stmt = (
        select(pk(Item.id), col(out_a.model_id), col(out_b.model_id), col(Item.is_gold))
        .join(out_a, col(out_a.id) == col(Item.output_a_id))
        .outerjoin(out_b, col(out_b.id) == col(Item.output_b_id))
        .where(col(Item.batch_id) == batch_id)
        .order_by(col(Item.pool_key), col(Item.id))
    )
    return [(int(a), int(b), None if c is None else int(c), bool(d)) for a, b, c, d in session.exec(stmt)]


def holders(session: Session, batch_id: int, now: datetime) -> dict[int, set[int]]:
    """item id -> reviewers holding one of its slots."""
    stmt = select(col(Assignment.item_id), col(Assignment.reviewer_id)).where(
        col(Assignment.batch_id) == batch_id, holding(now)
    )
    out: dict[int, set[int]] = defaultdict(set)
    for item_id, reviewer_id in session.exec(stmt):
        out[item_id].add(reviewer_id)
    return out


def reviewer_items(session: Session, batch_id: int) -> dict[int, set[int]]:
    """reviewer id -> every item they have in this batch in any state (nobody gets an item twice)."""
    out: dict[int, set[int]] = defaultdict(set)
    for reviewer_id, item_id in session.exec(
        select(col(Assignment.reviewer_id), col(Assignment.item_id)).where(col(Assignment.batch_id) == batch_id)
    ):
        out[reviewer_id].add(item_id)
    return out


def taken_labels(session: Session, batch_id: int) -> set[str]:
    return set(session.exec(select(col(Assignment.label)).where(col(Assignment.batch_id) == batch_id)))


def label_taken(session: Session, batch_id: int, label: str) -> bool:
    stmt = (
        select(pk(Assignment.id)).where(col(Assignment.batch_id) == batch_id, col(Assignment.label) == label).limit(1)
    )
    return session.exec(stmt).first() is not None


def next_position(session: Session, batch_id: int, reviewer_id: int) -> int:
    stmt = select(func.max(Assignment.position)).where(
        col(Assignment.batch_id) == batch_id, col(Assignment.reviewer_id) == reviewer_id
    )
    top = session.exec(stmt).one()
    return 0 if top is None else int(top) + 1


def next_positions(session: Session, batch_id: int) -> dict[int, int]:
    stmt = (
        select(col(Assignment.reviewer_id), func.max(Assignment.position))
        .where(col(Assignment.batch_id) == batch_id)
        .group_by(col(Assignment.reviewer_id))
    )
    return {r: int(p) + 1 for r, p in session.exec(stmt)}


def insert_assignments(session: Session, rows: Sequence[dict[str, Any]]) -> None:
    """Insert assignment rows (column name -> value). A row with ``reserved_until`` set is a pool claim."""
    if not rows:
        return
    session.exec(insert(Assignment), params=list(rows))
    claims = [r for r in rows if r.get("reserved_until") is not None]
    for r in claims:
        log.debug(
            "pool claim granted: reviewer %s, item %s of batch %s, reserved until %s",
            r.get("reviewer_id"),
            r.get("item_id"),
            r.get("batch_id"),
            r["reserved_until"],
        )
    if len(claims) < len(rows):
        log.info("inserted %d assignments into batch %s", len(rows) - len(claims), rows[0].get("batch_id"))


def release_unstarted(session: Session, batch_id: int) -> int:
    """Drop pending assignments nobody has opened yet, so a new plan can spread them over more reviewers."""
    result = session.exec(
        delete(Assignment).where(
            col(Assignment.batch_id) == batch_id,
            col(Assignment.status) == AssignmentStatus.PENDING,
            col(Assignment.shown_at).is_(None),
        )
    )
    released = result.rowcount
    log.info("released %d unopened assignments of batch %s for a new plan", released, batch_id)
    return released


def release_reviewer(session: Session, reviewer_id: int) -> int:
    """Drop a reviewer's pending assignments (they left); their slots go back to the pool."""
    result = session.exec(
        delete(Assignment).where(
            col(Assignment.reviewer_id) == reviewer_id, col(Assignment.status) == AssignmentStatus.PENDING
        )
    )
    released = result.rowcount
    log.info("released %d pending assignments of reviewer %s to the pool", released, reviewer_id)
    return released


def lock_item(session: Session, item_id: int, *, wait: bool = False) -> bool:
    """Lock an item row against other claims and submits of it (PostgreSQL ``FOR NO KEY UPDATE``).

    A claim passes ``wait=False`` (``SKIP LOCKED``: False if another transaction has the item, so the claim
    tries another item); a submit passes ``wait=True`` and waits for a claim or submit in progress to
    commit, so what it counts next includes theirs. Always True on SQLite (writers are serial)."""
    stmt = select(pk(Item.id)).where(col(Item.id) == item_id)
    if session.get_bind().dialect.name == "postgresql":
        stmt = stmt.with_for_update(key_share=True, skip_locked=not wait)
    locked = session.exec(stmt).one_or_none() is not None
    if not locked:
        log.debug("item %s is being claimed in another transaction; skipped", item_id)
    return locked


class SlotLock(Enum):
    """What :func:`lock_free_slot` found."""

    FREE = "free"  # locked, with a free slot: claim it in this transaction
    FULL = "full"  # every slot held (the lock is given back at once)
    BUSY = "busy"  # another transaction has the item (a claim or a submit of it in progress)


def lock_free_slot(session: Session, item_id: int, now: datetime, overlap: int, *, wait: bool) -> SlotLock:
    """Lock the item for a claim and count its holders under the lock (:func:`lock_item`, :func:`held_count`).

    On PostgreSQL the attempt runs in a savepoint that is rolled back unless a slot is free, which gives the
    row lock back (PostgreSQL releases row locks at a savepoint's rollback): a claim holds the lock of the one
    item it takes and no other, so a claim that waits for an item (``wait=True``) never waits for a claim that
    waits for it in turn."""
    if session.get_bind().dialect.name != "postgresql":
        return SlotLock.FREE if held_count(session, item_id, now) < overlap else SlotLock.FULL
    attempt = session.begin_nested()
    if not lock_item(session, item_id, wait=wait):
        attempt.rollback()
        return SlotLock.BUSY
    if held_count(session, item_id, now) >= overlap:
        attempt.rollback()
        return SlotLock.FULL
    attempt.commit()  # RELEASE SAVEPOINT: the lock stays with the transaction
    return SlotLock.FREE


def first_showings(session: Session, item_id: int) -> list[Assignment]:
    """The item's first-showing assignments (occurrence 0) in every state; read under :func:`lock_item`."""
    stmt = (
        select(Assignment)
        .where(col(Assignment.item_id) == item_id, col(Assignment.occurrence) == 0)
        .order_by(col(Assignment.id))
    )
    return list(session.exec(stmt))


def release_reservations(session: Session, assignment_ids: Sequence[int]) -> None:
    """Release pending assignments whose item another reviewer completed first (see :data:`RELEASED`)."""
    if not assignment_ids:
        return
    session.exec(
        update(Assignment)
        .where(col(Assignment.id).in_(list(assignment_ids)), col(Assignment.status) == AssignmentStatus.PENDING)
        .values(reserved_until=RELEASED)
    )
    log.debug("released assignments %s: their item was completed by another reviewer", list(assignment_ids))


def item_is_gold(session: Session, item_id: int) -> bool:
    item = session.get(Item, item_id)
    return item is not None and item.is_gold


def reviewer_role(session: Session, reviewer_id: int) -> Role | None:
    """The person's role (None for an unknown id)."""
    reviewer = session.get(Reviewer, reviewer_id)
    return None if reviewer is None else Role(reviewer.role)


def held_count(session: Session, item_id: int, now: datetime, *, excluding: int | None = None) -> int:
    stmt = select(func.count()).select_from(Assignment).where(col(Assignment.item_id) == item_id, holding(now))
    if excluding is not None:
        stmt = stmt.where(col(Assignment.id) != excluding)
    return int(session.exec(stmt).one())


def pending_queue(session: Session, batch_id: int, reviewer_id: int, *, limit: int | None = None) -> list[Assignment]:
    stmt = (
        select(Assignment)
        .where(
            col(Assignment.batch_id) == batch_id,
            col(Assignment.reviewer_id) == reviewer_id,
            col(Assignment.status) == AssignmentStatus.PENDING,
        )
        .order_by(col(Assignment.position))
    )
    if limit is not None:
        stmt = stmt.limit(limit)
    return list(session.exec(stmt))


def reviewer_assignments(session: Session, batch_id: int, reviewer_id: int) -> list[Assignment]:
    stmt = (
        select(Assignment)
        .where(col(Assignment.batch_id) == batch_id, col(Assignment.reviewer_id) == reviewer_id)
        .order_by(col(Assignment.position))
    )
    return list(session.exec(stmt))


def get_assignment(session: Session, assignment_id: int, *, lock: bool = False) -> Assignment | None:
    """One assignment; ``lock`` takes its row lock (PostgreSQL) and reads its latest committed state."""
    stmt = select(Assignment).where(col(Assignment.id) == assignment_id)
    if lock and session.get_bind().dialect.name == "postgresql":
        stmt = stmt.with_for_update()
    if lock:
        stmt = stmt.execution_options(populate_existing=True)  # not the session's cached copy
    return session.exec(stmt).one_or_none()


def update_assignment(session: Session, assignment_id: int, **values: Any) -> None:
    """Set columns of one assignment; ``reserved_until`` in the future renews a claim's reservation."""
    session.exec(update(Assignment).where(col(Assignment.id) == assignment_id).values(**values))
    if values.get("reserved_until") is not None:
        log.debug("assignment %s reserved until %s", assignment_id, values["reserved_until"])


def delete_assignment(session: Session, assignment_id: int) -> None:
    """Delete one assignment (an expired reservation whose slot someone else has taken meanwhile)."""
    session.exec(delete(Assignment).where(col(Assignment.id) == assignment_id))
    log.debug("assignment %s deleted", assignment_id)


def reviewer_sides(session: Session, batch_id: int, reviewer_id: int) -> dict[int, int]:
    """model id -> (times shown left) - (times shown right) for this reviewer, for pool counterbalancing."""
    out_a, out_b = aliased(Output), aliased(Output)
    stmt = (
        select(col(out_a.model_id), col(out_b.model_id), col(Assignment.swapped))
        .join(Item, col(Item.id) == col(Assignment.item_id))
        .join(out_a, col(out_a.id) == col(Item.output_a_id))
        .join(out_b, col(out_b.id) == col(Item.output_b_id))
        .where(
            col(Assignment.batch_id) == batch_id,
            col(Assignment.reviewer_id) == reviewer_id,
            col(Item.output_b_id).is_not(None),
        )
    )
    balance: dict[int, int] = defaultdict(int)
    for a, b, swapped in session.exec(stmt):
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
    stmt = select(col(Assignment.reviewer_id), col(Assignment.item_id), pk(Assignment.id)).where(
        col(Assignment.batch_id) == batch_id, col(Assignment.occurrence) == 0
    )
    return {(r, i): int(a) for r, i, a in session.exec(stmt)}


def assignment_id_for(session: Session, item_id: int, reviewer_id: int, occurrence: int = 0) -> int:
    stmt = select(pk(Assignment.id)).where(
        col(Assignment.item_id) == item_id,
        col(Assignment.reviewer_id) == reviewer_id,
        col(Assignment.occurrence) == occurrence,
    )
    return int(session.exec(stmt).one())
