"""Queries behind pool claims: the walk over a batch's items for the next free slot a reviewer may take.

Pool claims walk the batch's items in ``Item.pool_key`` order from a point the caller picks
(:func:`pool_walk`), through the index ``ix_item_pool``, a bounded window of items per query, and finish a
long walk with one set-based query. What a claim then locks, re-counts and writes is in
:mod:`storage.repositories.review.assignments` (who holds which item).

Walks are logged at DEBUG, by ids only: never a model name next to a reviewer.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from datetime import datetime

from sqlalchemy import ColumnElement, Integer, and_, bindparam, case, false, func, or_, true
from sqlmodel import Session, col, select
from sqlmodel.sql.expression import Select
from sqlmodel.sql.sqltypes import UTCDateTime

from storage.models import POOL_KEY_BITS, Assignment, Item
from storage.repositories.query import pk
from storage.repositories.review.assignments import holding

log = logging.getLogger(__name__)

# Pool walks examine 4 items first (the first is nearly always free: the walks of different reviewers start
# at different points), then 4 times more per query up to 1024 when they are not; after 2048 items examined
# the rest of the walk is one set-based query (a batch with few or no free items left).
_FIRST_WINDOW = 4
_LAST_WINDOW = 1024
_WALK_BOUND = 2048
POOL_KEY_MAX = 2**POOL_KEY_BITS - 1


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
                        (holding(bindparam("now", type_=UTCDateTime())), 1),  # as the column binds it
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
    """The items of a window: the batch's open released non-gold items (``Item.is_open``: not yet holding the
    overlap of done answers; ``Item.held_back``: an adaptive batch's sample not yet released) after the cursor
    ``(key, after_id)`` in ``(pool_key, id)`` order, with keys up to ``top`` (the index ``ix_item_pool`` gives
    the key range of the open released items only, so full or held-back items cost nothing; the id settles
    ties on the cursor's key)."""
    key = bindparam("key", type_=Integer)
    return and_(
        col(Item.batch_id) == bindparam("batch_id", type_=Integer),
        col(Item.is_gold) == false(),
        col(Item.is_open) == true(),
        col(Item.held_back) == false(),
        col(Item.pool_key) >= key,
        col(Item.pool_key) <= bindparam("top", type_=Integer),
        ~and_(col(Item.pool_key) == key, col(Item.id) <= bindparam("after_id", type_=Integer)),
    )


def _pool_window_statement() -> Select[int, int, int]:
    """One window of a pool walk, built once (it runs on every Next): the next ``size`` items of the batch in
    ``(pool_key, id)`` order after the cursor, each with how taken it is for this reviewer (:func:`_taken`).
    The inner query takes the window from the index ``ix_item_pool`` with no other filter, so one query
    examines at most ``size`` items however few of them are free; the outer one looks at the assignments of
    those items only. Every item of the window comes back, free or not, so the window's last item (where the
    next one starts) is read in the same statement, from the same snapshot: a second query for it, under
    PostgreSQL's READ COMMITTED, saw the window after any item in it had filled meanwhile, and the next window
    then started one item too far and never examined that item. (No outer ORDER BY: the caller sorts the few
    rows, so the database need not.)"""
    window = (
        select(pk(Item.id).label("id"), col(Item.pool_key).label("pool_key"))
        .where(_pool_window_range())
        .order_by(col(Item.pool_key), col(Item.id))
        .limit(bindparam("size", type_=Integer))
        .subquery("pool_window")
    )
    return select(window.c.id, window.c.pool_key, _taken(window.c.id))


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
        .where(col(Assignment.batch_id) == batch_id, holding(bindparam("now", type_=UTCDateTime())))
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
            col(Item.held_back) == false(),
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
        rows = sorted(session.exec(_POOL_WINDOW, params=window).all(), key=lambda r: (r[1], r[0]))
        for item_id, _key, taken in rows:
            if taken < overlap:
                found += 1
                yield int(item_id)
        examined += size
        if len(rows) < size:  # this part is done
            part, cursor = part + 1, (0, 0)
        else:
            cursor = (int(rows[-1][1]), int(rows[-1][0]))
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
