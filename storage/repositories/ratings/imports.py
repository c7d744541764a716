"""Ratings imported from elsewhere: the bulk writes of a whole batch's answers (showings, their status and
ratings) in one transaction.

Writes go through the driver: on SQLite one compiled statement executed over many rows, on PostgreSQL COPY
(executemany there still paid a round trip per row); SQLAlchemy's per-value processing and a 40,000-parameter
INSERT compiled per 5,000 rows were most of an import's time. (Which item a file's row names is
:mod:`storage.repositories.ratings.items`; the export is :mod:`storage.repositories.ratings.exports`.)
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from itertools import islice
from typing import Any

from sqlalchemy import DateTime, delete, exists, func, text, update
from sqlalchemy import select as sa_select
from sqlalchemy.orm import aliased
from sqlmodel import Session, col, select

from reviewer_app.domain.enums import AssignmentStatus
from storage.models import Assignment, Batch, Item, Rating
from storage.repositories.query import next_ids, pk, through_items

IMPORT_CHUNK = 20_000  # rows per executemany call: bounded memory for the tuples, progress between calls
BULK_CACHE_KIB = 512 * 1024  # SQLite page cache during a bulk write (an upper bound: pages are taken as needed)


def stored_datetime(session: Session, value: datetime) -> Any:
    """``value`` as SQLAlchemy would bind it to a DateTime column of this database (the text SQLite stores,
    the datetime itself for PostgreSQL), for rows written through the driver."""
    dialect = session.get_bind().dialect
    process = DateTime().dialect_impl(dialect).bind_processor(dialect)
    return value if process is None else process(value)


def _driver_sql(session: Session, sql: str) -> str:
    """``sql`` written with ``?`` placeholders, in the paramstyle of this database's driver."""
    return sql if session.get_bind().dialect.name == "sqlite" else sql.replace("?", "%s")


def _execute_many(session: Session, sql: str, rows: Iterable[tuple[Any, ...]]) -> int:
    """Run one statement over ``rows`` in chunks of :data:`IMPORT_CHUNK`; returns the number of rows."""
    statement = _driver_sql(session, sql)
    conn = session.connection()
    rows = iter(rows)
    done = 0
    while chunk := list(islice(rows, IMPORT_CHUNK)):
        conn.exec_driver_sql(statement, chunk)
        done += len(chunk)
    return done


def _is_postgres(session: Session) -> bool:
    return session.get_bind().dialect.name == "postgresql"


def _copy(session: Session, table: str, columns: Sequence[str], rows: Iterable[tuple[Any, ...]]) -> int:
    """COPY ``rows`` into ``table`` (PostgreSQL) in the session's transaction; returns the number of rows."""
    driver = session.connection().connection.driver_connection
    assert driver is not None
    n = 0
    with driver.cursor() as cur, cur.copy(f"COPY {table} ({', '.join(columns)}) FROM STDIN") as copy:
        for row in rows:
            copy.write_row(row)
            n += 1
    return n


def _as_stored_timestamp(session: Session, value: datetime) -> Any:
    """``value`` as PostgreSQL stores it in a timestamp-without-zone column when it is bound as a parameter
    (converted to the session's time zone): what COPY, which takes the text as it is, must be given."""
    stmt = text("SELECT CAST(:v AS TIMESTAMP WITHOUT TIME ZONE)")
    return session.connection().execute(stmt, {"v": value}).scalar_one()


@contextmanager
def bulk_write_cache(session: Session) -> Iterator[None]:
    """A large page cache on SQLite for the length of a bulk write.

    Labels are random, so each inserted assignment lands at a random place in the label indexes; with
    SQLite's default 2 MB cache a 300,000-row import spent most of its time re-reading index pages. The
    connection's own setting is put back afterwards (it is pooled). PostgreSQL's shared buffers need no help.
    """
    conn = session.connection()
    if conn.dialect.name != "sqlite":
        yield
        return
    before = conn.exec_driver_sql("PRAGMA cache_size").scalar_one()
    conn.exec_driver_sql(f"PRAGMA cache_size = {-BULK_CACHE_KIB}")
    try:
        yield
    finally:
        conn.exec_driver_sql(f"PRAGMA cache_size = {int(before)}")


@contextmanager
def open_flags_recounted_once(session: Session, batch_id: int) -> Iterator[None]:
    """Around a bulk write of a batch's answers: ``Item.is_open`` counted once for the whole batch at the end
    instead of by a trigger per written assignment.

    SQLite's triggers (migration 0012) run per row: an import of 300,000 answered showings took 16 s instead
    of 7.6 s. Here, inside the caller's transaction, the assignment triggers are dropped as they are stored,
    the rows are written, the batch's items are counted in one statement, and the triggers are created again
    from the same stored text. SQLite's DDL is transactional and a writer holds the database alone, so no
    other connection ever writes without them; if the write fails, the rollback puts everything back.
    PostgreSQL's triggers run per statement, but each recount of the items an import's COPY touched took
    7 s at 300,000 answers: they skip their work while ``blind_review.recount_later`` is on, which ``SET
    LOCAL`` confines to this transaction (other sessions' triggers run as ever)."""
    conn = session.connection()
    if conn.dialect.name != "sqlite":
        conn.exec_driver_sql("SET LOCAL blind_review.recount_later = 'on'")
        yield  # a failed write aborts the transaction, and its rollback takes the setting with it
        recount_open(session, batch_id)
        conn.exec_driver_sql("SET LOCAL blind_review.recount_later = 'off'")
        return
    saved = conn.exec_driver_sql(
        "SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'assignment' ORDER BY name"
    ).all()
    for name, _sql in saved:
        conn.exec_driver_sql(f'DROP TRIGGER "{name}"')
    try:
        yield
        recount_open(session, batch_id)
    finally:
        for _name, sql in saved:
            conn.exec_driver_sql(sql)


def recount_open(session: Session, batch_id: int) -> None:
    """Set ``Item.is_open`` of every item of the batch from its done first showings and the batch's overlap
    (what the triggers of migration 0012 do per item).

    The counts are taken in one grouped pass over the batch's items in id order (:func:`through_items`). A
    count per item, as a subquery of the update, visited the items in their pool index's random order, and so
    the assignments at random too: 27 s after an import of 3 million ratings, against 12 s this way."""
    first_done = (col(Assignment.occurrence) == 0, col(Assignment.status) == AssignmentStatus.DONE)
    counted = aliased(Item)
    done = (
        through_items(sa_select(pk(counted.id).label("item_id"), func.count().label("n")), batch_id, counted)
        .where(*first_done)
        .group_by(pk(counted.id))
        .subquery()
    )
    overlap = select(col(Batch.overlap)).where(col(Batch.id) == batch_id).scalar_subquery()
    # An item with no done first showing left (an answer changed to "can't judge") is open; only items closed
    # before are looked at.
    session.exec(
        update(Item)
        .where(
            col(Item.batch_id) == batch_id,
            col(Item.is_open).is_(False),
            ~exists().where(col(Assignment.item_id) == col(Item.id), *first_done),
        )
        .values(is_open=True)
    )
    # Only the rows whose flag changes are written (on PostgreSQL an item row written is a new version of it).
    should = done.c.n < overlap
    session.exec(
        update(Item)
        .where(
            col(Item.id) == done.c.item_id, col(Item.batch_id) == batch_id, col(Item.is_open).is_distinct_from(should)
        )
        .values(is_open=should)
    )


def reserve_ids(session: Session, table: str, count: int) -> list[int]:
    """``count`` new, increasing primary keys of ``table`` for rows the caller inserts with their ids.

    PostgreSQL draws them from the table's sequence, so reviewers' claims in other batches are not held up
    behind a table lock for the length of an import; SQLite's writer already holds the database lock."""
    if count <= 0:
        return []
    conn = session.connection()
    if conn.dialect.name == "postgresql":
        rows = conn.execute(
            text("SELECT nextval(pg_get_serial_sequence(:t, 'id')) FROM generate_series(1, :n)"),
            {"t": table, "n": count},
        )
        return [int(i) for (i,) in rows]
    start = next_ids(session, table, count)
    return list(range(start, start + count))


def batch_showings(session: Session, batch_id: int, reviewer_ids: Sequence[int]) -> Iterator[tuple[int, int, int, int]]:
    """(reviewer id, item id, occurrence, assignment id) of every assignment these reviewers have in the
    batch, in any state, streamed."""
    if not reviewer_ids:
        return
    stmt = select(
        col(Assignment.reviewer_id), col(Assignment.item_id), col(Assignment.occurrence), pk(Assignment.id)
    ).where(col(Assignment.batch_id) == batch_id, col(Assignment.reviewer_id).in_(list(reviewer_ids)))
    yield from session.exec(stmt.execution_options(yield_per=IMPORT_CHUNK))


ShowingRow = tuple[int, int, int, int, int, str, bool, str, str | None, str | None]


def insert_answered_showings(session: Session, rows: Iterable[ShowingRow], now: datetime) -> int:
    """Insert first showings already answered elsewhere: rows of (id, batch id, item id, reviewer id,
    position, label, swapped, status, comment, can't-judge reason), status done or skipped (can't judge),
    submitted ``now``. Returns the number inserted."""
    sql = (
        "INSERT INTO assignment (id, batch_id, item_id, reviewer_id, occurrence, position, label, swapped, status,"
        " comment, cant_judge, submitted_at) VALUES (?, ?, ?, ?, 0, ?, ?, ?, ?, ?, ?, ?)"
    )
    if _is_postgres(session):
        stamp = _as_stored_timestamp(session, now)
        columns = ("id", "batch_id", "item_id", "reviewer_id", "occurrence", "position", "label", "swapped")
        copied = ((*r[:4], 0, *r[4:], stamp) for r in rows)
        return _copy(session, "assignment", (*columns, "status", "comment", "cant_judge", "submitted_at"), copied)
    stamp = stored_datetime(session, now)
    return _execute_many(session, sql, ((*r, stamp) for r in rows))


def mark_showings_answered(
    session: Session, rows: Iterable[tuple[bool, str, str | None, str | None, int]], now: datetime
) -> int:
    """Mark existing assignments answered elsewhere: rows of (swapped, status, comment, can't-judge reason,
    assignment id), status done or skipped (can't judge). A comment of None keeps the one the assignment has
    (a file without comments erases none); the reason is set as given (None on a done answer: it is no longer
    a can't-judge answer). Any reservation the assignments carried is dropped. Returns the number of rows
    given."""
    sql = (
        "UPDATE assignment SET status = ?, swapped = ?, comment = COALESCE(?, comment), cant_judge = ?,"
        " submitted_at = ?, reserved_until = NULL WHERE id = ?"
    )
    if _is_postgres(session):
        conn = session.connection()
        conn.exec_driver_sql(
            "CREATE TEMP TABLE import_done (id bigint PRIMARY KEY, swapped boolean, status text, comment text,"
            " cant_judge text) ON COMMIT DROP"
        )
        n = _copy(session, "import_done", ("swapped", "status", "comment", "cant_judge", "id"), rows)
        conn.exec_driver_sql(
            "UPDATE assignment AS a SET status = d.status, swapped = d.swapped, comment = COALESCE(d.comment,"
            " a.comment), cant_judge = d.cant_judge, submitted_at = %s, reserved_until = NULL"
            " FROM import_done AS d WHERE a.id = d.id",
            (now,),
        )
        conn.exec_driver_sql("DROP TABLE import_done")
        return n
    stamp = stored_datetime(session, now)
    return _execute_many(
        session, sql, ((status, swapped, comment, reason, stamp, aid) for swapped, status, comment, reason, aid in rows)
    )


def delete_ratings_of(session: Session, assignment_ids: Sequence[int]) -> int:
    """Delete every rating of these assignments (answers that became "can't judge", which have no scores);
    returns the number of assignments given."""
    for start in range(0, len(assignment_ids), IMPORT_CHUNK):
        part = list(assignment_ids[start : start + IMPORT_CHUNK])
        session.exec(delete(Rating).where(col(Rating.assignment_id).in_(part)))
    return len(assignment_ids)


def upsert_rating_rows(session: Session, rows: Iterable[tuple[int, int, int, int, str, str]], now: datetime) -> int:
    """``review.answers.upsert_ratings`` for many rows of (assignment id, batch id, item id, reviewer id,
    dimension, value), executed in the order given (new ratings get increasing ids in that order, as exports
    read them). Returns the number of rows given."""
    sql = (
        "INSERT INTO rating (assignment_id, batch_id, item_id, reviewer_id, dimension, value, created_at, updated_at)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (assignment_id, dimension)"
        " DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at"
    )
    if _is_postgres(session):
        return _upsert_rating_rows_postgres(session, rows, now)
    stamp = stored_datetime(session, now)
    return _execute_many(session, sql, ((*r, stamp, stamp) for r in rows))


def _upsert_rating_rows_postgres(
    session: Session, rows: Iterable[tuple[int, int, int, int, str, str]], now: datetime
) -> int:
    """COPY into a scratch table that draws each row's id from the rating sequence as it arrives (so in the
    order given, as an INSERT per row did), then one INSERT ... ON CONFLICT from it: a rating that exists
    keeps its id and takes the new value."""
    conn = session.connection()
    # DDL takes no parameters: the sequence's name comes from the catalogue, quoted by the server.
    sequence = conn.exec_driver_sql("SELECT quote_literal(pg_get_serial_sequence('rating', 'id'))").scalar_one()
    conn.exec_driver_sql(
        f"CREATE TEMP TABLE import_rating (id bigint DEFAULT nextval({sequence}::regclass), assignment_id bigint,"
        " batch_id bigint, item_id bigint, reviewer_id bigint, dimension text, value text) ON COMMIT DROP"
    )
    columns = ("assignment_id", "batch_id", "item_id", "reviewer_id", "dimension", "value")
    n = _copy(session, "import_rating", columns, rows)
    conn.exec_driver_sql(
        "INSERT INTO rating (id, assignment_id, batch_id, item_id, reviewer_id, dimension, value, created_at,"
        " updated_at) SELECT id, assignment_id, batch_id, item_id, reviewer_id, dimension, value, %(now)s, %(now)s"
        " FROM import_rating ON CONFLICT (assignment_id, dimension)"
        " DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at",
        {"now": now},
    )
    conn.exec_driver_sql("DROP TABLE import_rating")
    return n
