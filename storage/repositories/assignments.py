"""Queries behind assignment: who holds which item, reviewer queues, and the locked claim of a free slot.

A slot of an item is *held* by an assignment that is done, or pending and either planned (no expiry) or
reserved until a time still in the future. Holding counts only first showings (occurrence 0): repeats and
gold items are extra to the overlap k. A reservation *released* because another reviewer submitted the
item first is set to :data:`RELEASED`, a time long past, so it holds nothing and its reviewer can be told
why their answer was not needed.

Pool claims walk the batch's items in ``Item.pool_key`` order from a point the caller picks
(:func:`pool_walk`), through the index ``ix_item_pool``, a bounded window of items per query, and finish a
long walk with one set-based query.

Locks (PostgreSQL): a claim or a submit that changes who holds an item takes the batch row shared (a plan,
which takes it exclusively, is not being made), then the item's row lock (``FOR NO KEY UPDATE``, which
does not block the foreign-key checks of inserts that reference the item), then assignment rows; always in
that order, so two of them never wait for each other.

Claims are logged at DEBUG (a line per step, by ids only: never a model name next to a reviewer); planned
and released assignments at INFO.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    BindParameter,
    ColumnElement,
    Integer,
    and_,
    bindparam,
    case,
    delete,
    false,
    func,
    insert,
    or_,
    true,
    update,
)
from sqlalchemy.orm import aliased
from sqlmodel import Session, col, select
from sqlmodel.sql.expression import Select
from sqlmodel.sql.sqltypes import UTCDateTime

from reviewer_app.domain.enums import AssignmentStatus, Role
from storage.models import POOL_KEY_BITS, Assignment, Batch, Item, Model, Output, Reviewer
from storage.repositories.query import pk

log = logging.getLogger(__name__)

RELEASED = datetime(2000, 1, 1, tzinfo=UTC)  # reserved_until of a reservation released for another's submit

# Pool walks examine 4 items first (the first is nearly always free: the walks of different reviewers start
# at different points), then 4 times more per query up to 1024 when they are not; after 2048 items examined
# the rest of the walk is one set-based query (a batch with few or no free items left).
_FIRST_WINDOW = 4
_LAST_WINDOW = 1024
_WALK_BOUND = 2048
POOL_KEY_MAX = 2**POOL_KEY_BITS - 1


def _holding(now: datetime | BindParameter[datetime]) -> ColumnElement[bool]:
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
        col(Assignment.batch_id) == batch_id, _holding(now)
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


def _taken(item_id: ColumnElement[int]) -> ColumnElement[int]:
    """How taken the item ``item_id`` is for this reviewer, from one look at its assignments (index
    ``ix_assignment_item_id``): each slot held counts 1 and any assignment of this reviewer counts
    ``overlap``, so "fewer than overlap" means a free slot and an item they never had. (A separate NOT EXISTS
    let PostgreSQL plan an anti-join that reads all of the reviewer's assignments again for every item.)"""
    return (
        select(
            func.coalesce(
                func.sum(
                    case(
                        (
                            col(Assignment.reviewer_id) == bindparam("reviewer_id", type_=Integer),
                            bindparam("overlap", type_=Integer),
                        ),
                        (_holding(bindparam("now", type_=UTCDateTime())), 1),  # as the column binds it
                        else_=0,
                    )
                ),
                0,
            )
        )
        .where(col(Assignment.item_id) == item_id)
        .scalar_subquery()
    )


def _pool_window_range() -> ColumnElement[bool]:
    """The items of a window: the batch's open non-gold items (``Item.is_open``: not yet holding the overlap
    of done answers) after the cursor ``(key, after_id)`` in ``(pool_key, id)`` order, with keys up to
    ``top`` (the index ``ix_item_pool`` gives the key range of the open items only, so full items cost
    nothing; the id settles ties on the cursor's key)."""
    key = bindparam("key", type_=Integer)
    return and_(
        col(Item.batch_id) == bindparam("batch_id", type_=Integer),
        col(Item.is_gold) == false(),
        col(Item.is_open) == true(),
        col(Item.pool_key) >= key,
        col(Item.pool_key) <= bindparam("top", type_=Integer),
        ~and_(col(Item.pool_key) == key, col(Item.id) <= bindparam("after_id", type_=Integer)),
    )


def _pool_window_statement() -> Select[int, int]:
    """One window of a pool walk, built once (it runs on every Next): of the next ``size`` items of the batch
    in ``(pool_key, id)`` order after the cursor, those this reviewer may claim. The inner query takes the
    window from the index ``ix_item_pool`` with no other filter, so one query examines at most ``size`` items
    however few of them are free; the outer one looks at the assignments of those items only. (No outer
    ORDER BY: the caller sorts the few rows, so the database need not.)"""
    window = (
        select(pk(Item.id).label("id"), col(Item.pool_key).label("pool_key"))
        .where(_pool_window_range())
        .order_by(col(Item.pool_key), col(Item.id))
        .limit(bindparam("size", type_=Integer))
        .subquery("pool_window")
    )
    return select(window.c.id, window.c.pool_key).where(_taken(window.c.id) < bindparam("overlap", type_=Integer))


def _pool_window_end_statement() -> Select[int, int]:
    """The last item of that window (its ``size``-th), where the next window starts; none when the window is
    the end of its part of the order. An index-only read of the window's keys."""
    return (
        select(col(Item.pool_key), pk(Item.id))
        .where(_pool_window_range())
        .order_by(col(Item.pool_key), col(Item.id))
        .offset(bindparam("size", type_=Integer) - 1)
        .limit(1)
    )


def _pool_rest_statement() -> Select[int, int]:
    """The rest of a pool walk in one set-based query, for when the windows have examined
    :data:`_WALK_BOUND` items without an end in sight (a batch with few or no free items): the batch's
    holders counted in one grouped pass and the reviewer's items as an anti-join (the cost of the claim before
    pool keys, once), then up to ``size`` free items in walk order after the cursor: ``part`` 0 is the keys
    from ``start`` up, 1 the keys below it (the wrap-around), and ``(part, key, after_id)`` is the last item
    examined."""
    batch_id = bindparam("batch_id", type_=Integer)
    held = (
        select(col(Assignment.item_id), func.count().label("n"))
        .where(col(Assignment.batch_id) == batch_id, _holding(bindparam("now", type_=UTCDateTime())))
        .group_by(col(Assignment.item_id))
        .subquery("held")
    )
    mine = select(col(Assignment.item_id)).where(
        col(Assignment.batch_id) == batch_id,
        col(Assignment.reviewer_id) == bindparam("reviewer_id", type_=Integer),
    )
    part = case((col(Item.pool_key) >= bindparam("start", type_=Integer), 0), else_=1)
    at = bindparam("part", type_=Integer)
    key = bindparam("key", type_=Integer)
    return (
        select(pk(Item.id), col(Item.pool_key))
        .outerjoin(held, held.c.item_id == col(Item.id))
        .where(
            col(Item.batch_id) == batch_id,
            col(Item.is_gold) == false(),
            col(Item.is_open) == true(),
            or_(
                part > at,
                and_(
                    part == at,
                    or_(
                        col(Item.pool_key) > key,
                        and_(col(Item.pool_key) == key, col(Item.id) > bindparam("after_id", type_=Integer)),
                    ),
                ),
            ),
            func.coalesce(held.c.n, 0) < bindparam("overlap", type_=Integer),
            col(Item.id).not_in(mine),
        )
        .order_by(part, col(Item.pool_key), col(Item.id))
        .limit(bindparam("size", type_=Integer))
    )


_POOL_WINDOW = _pool_window_statement()
_POOL_WINDOW_END = _pool_window_end_statement()
_POOL_REST = _pool_rest_statement()


def pool_walk(
    session: Session, batch_id: int, reviewer_id: int, overlap: int, now: datetime, *, start: int
) -> Iterator[int]:
    """Items of the batch with a free slot that this reviewer has never had (gold items are never pooled), in
    pool order (``Item.pool_key``, then id) from the key ``start`` to the end and then around from the
    beginning up to ``start``: every such item once.

    The database reads the order of the open items (``Item.is_open``) through the index ``ix_item_pool`` a
    window at a time (``LIMIT``; windows grow from :data:`_FIRST_WINDOW` to :data:`_LAST_WINDOW` items) and
    checks the holders and this reviewer's history of the window's items only, so the cost grows with how far
    the next free item lies from ``start``, not with the batch; items that hold their overlap of done answers
    are not in the index range at all, so a batch with nothing left costs two empty index reads. Once
    :data:`_WALK_BOUND` open items have been examined (many of them reserved or this reviewer's own), the rest
    of the walk is one set-based query (:func:`_pool_rest_statement`), not one probe per item. Windows are
    read whole before their items are handed out: the caller locks and claims on the same session in between.
    What is free can change meanwhile, so the caller re-checks under the item's lock.
    """
    params = {"batch_id": batch_id, "reviewer_id": reviewer_id, "overlap": overlap, "now": now}
    found = examined = 0
    size = _FIRST_WINDOW
    # From the start to the end of the order (part 0), then around from its beginning to just before the start
    # (part 1). The cursor is the last item examined.
    part, cursor = 0, (start, 0)  # ids start at 1: nothing is skipped at the first key
    while part < 2 and examined < _WALK_BOUND:
        top = POOL_KEY_MAX if part == 0 else start - 1
        window = {**params, "key": cursor[0], "after_id": cursor[1], "top": top, "size": size}
        for item_id, _key in sorted(session.exec(_POOL_WINDOW, params=window).all(), key=lambda r: (r[1], r[0])):
            found += 1
            yield int(item_id)
        examined += size
        end = session.exec(_POOL_WINDOW_END, params=window).first()
        if end is None:  # this part is done
            part, cursor = part + 1, (0, 0)
        else:
            cursor = (int(end[0]), int(end[1]))
        size = min(size * 4, _LAST_WINDOW)
    while part < 2:  # the bound is reached: the rest at once, a chunk of free items per query
        rest = session.exec(
            _POOL_REST,
            params={**params, "start": start, "part": part, "key": cursor[0], "after_id": cursor[1], "size": size},
        ).all()
        log.debug("pool: %d items examined, %d more free after them", examined, len(rest))
        for item_id, _key in rest:
            found += 1
            yield int(item_id)
        if len(rest) < size:
            break
        last_id, last_key = int(rest[-1][0]), int(rest[-1][1])
        part, cursor = (0 if last_key >= start else 1), (last_key, last_id)
    if not found:
        log.debug("pool: no free slot for reviewer %s in batch %s", reviewer_id, batch_id)


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
    stmt = select(func.count()).select_from(Assignment).where(col(Assignment.item_id) == item_id, _holding(now))
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


def shown_models(session: Session, assignment_id: int) -> tuple[str, str | None]:
    """The model names behind an assignment as displayed (left, right). Unblinding: for the demo's scripted
    colleagues and for tests only, never for anything served to a reviewer."""
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
    stmt = select(pk(Assignment.id)).where(
        col(Assignment.item_id) == item_id,
        col(Assignment.reviewer_id) == reviewer_id,
        col(Assignment.occurrence) == occurrence,
    )
    return int(session.exec(stmt).one())
