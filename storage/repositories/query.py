"""Query pieces the repositories share: typed primary keys, a batch's assignments reached through its items,
a typed run of wide selects, and the driver-level bulk insert (with ids reserved up front) that loads and
imports use.

Blind: every repository stands on this module, the reviewer's too, so nothing here names a model. (The join of
an item to its models' names is ``ratings.items.ItemModels``.)
"""

from __future__ import annotations

from typing import Any, TypeVar, TypeVarTuple, cast

from sqlalchemy import Result, Select, text
from sqlalchemy import orm as sa_orm
from sqlalchemy.orm import Mapped
from sqlmodel import Session, col

from storage.models import Assignment, Item

_Select = TypeVar("_Select", bound=Select[*tuple[Any, ...]])
_Ts = TypeVarTuple("_Ts")


def pk(column: int | None) -> Mapped[int]:
    """``col()`` of a primary key, typed as it comes back in a row: ``id: int | None`` is the SQLModel idiom
    for an object not yet flushed, but the column itself is never NULL."""
    return cast("Mapped[int]", col(column))


def through_items(stmt: _Select, batch_id: int, item: type[Item] = Item) -> _Select:
    """``stmt`` over the assignments of a batch, reached through the batch's items (``item``: ``Item`` or an
    alias of it) in id order.

    Filtered on ``assignment.batch_id`` instead, SQLite (which has no ANALYZE statistics here) walks the
    ``(batch_id, label)`` index; labels are drawn at random, so every assignment is then read at random: 3
    million answers counted per item took 12.5 s that way and 3.5 s this way. Every assignment belongs to its
    item's batch, so the rows are the same."""
    return (
        stmt.select_from(item)
        .join(Assignment, col(Assignment.item_id) == pk(item.id))
        .where(col(item.batch_id) == batch_id)
    )


def execute_wide(session: Session, stmt: Select[*_Ts]) -> Result[*_Ts]:
    """Run a select of more columns than sqlmodel's typed ``select`` takes (four), keeping its row type.

    sqlmodel's ``Session.exec`` accepts only its own selects and its ``Session.execute`` is deprecated and
    untyped; SQLAlchemy's ``Session.execute`` underneath is the same call, typed by the statement.
    """
    return sa_orm.Session.execute(session, stmt)


def next_ids(session: Session, table: str, count: int) -> int:
    """Reserve ``count`` consecutive primary keys of ``table`` and return the first.

    Bulk loads assign ids themselves so that 100,000 outputs go in as one executemany with no RETURNING
    round trips. On SQLite the writer already holds the database lock (BEGIN IMMEDIATE); on PostgreSQL the
    table is locked against other writers for the rest of the load and the sequence moved past our ids.
    """
    conn = session.connection()  # plain SQL: the session's transaction without the ORM
    if conn.dialect.name == "postgresql":
        conn.execute(text(f'LOCK TABLE "{table}" IN SHARE ROW EXCLUSIVE MODE'))
        start = int(conn.execute(text(f'SELECT COALESCE(MAX(id), 0) + 1 FROM "{table}"')).scalar_one())
        conn.execute(
            text("SELECT setval(pg_get_serial_sequence(:t, 'id'), :v, false)"), {"t": table, "v": start + count}
        )
        return start
    return int(conn.execute(text(f'SELECT COALESCE(MAX(id), 0) + 1 FROM "{table}"')).scalar_one())


def bulk_insert(session: Session, table: str, rows: list[dict[str, Any]]) -> None:
    """executemany straight through the driver: 100,000 rows without per-value ORM type processing (which
    tripled the load time). Values must already be plain str/int/bool/None."""
    if rows:
        columns = tuple(rows[0])
        insert_tuples(session, table, columns, [tuple(r[c] for c in columns) for r in rows])


def insert_tuples(session: Session, table: str, columns: tuple[str, ...], rows: list[tuple[Any, ...]]) -> None:
    """:func:`bulk_insert` of rows already in column order: a load makes 100,000 of them, and a dict per row
    turned into a tuple per row cost a tenth of the load."""
    if not rows:
        return
    placeholder = "?" if session.get_bind().dialect.name == "sqlite" else "%s"
    names = ", ".join(f'"{c}"' for c in columns)
    sql = f'INSERT INTO "{table}" ({names}) VALUES ({", ".join([placeholder] * len(columns))})'
    session.connection().exec_driver_sql(sql, rows)
