"""Ratings: the dialect-specific upsert lives here and nowhere else, with the bulk writes of imports and the
streamed read of exports."""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from itertools import islice
from typing import Any

from sqlalchemy import DateTime, case, delete, exists, func, null, text, update
from sqlalchemy import select as sa_select
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.orm import aliased
from sqlmodel import Session, col, select

from reviewer_app.domain.enums import AssignmentStatus, Mode
from storage.models import Assignment, Batch, Item, Model, Output, Rating, Reviewer, Sample, Scenario
from storage.repositories.query import execute_wide, next_ids, pk, through_items


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
    session.exec(stmt)


def delete_ratings(session: Session, assignment_id: int, keep: Sequence[str] = ()) -> None:
    stmt = delete(Rating).where(col(Rating.assignment_id) == assignment_id)
    if keep:
        stmt = stmt.where(col(Rating.dimension).not_in(list(keep)))
    session.exec(stmt)


def ratings_for(session: Session, assignment_id: int) -> dict[str, str]:
    stmt = select(col(Rating.dimension), col(Rating.value)).where(col(Rating.assignment_id) == assignment_id)
    return dict(session.exec(stmt).all())


def item_content(session: Session, item_id: int) -> tuple[Item, Sample, str, Output, Output | None]:
    """The item with its sample, scenario name and outputs (the caller decides what a reviewer may see).

    One query (one round trip) rather than a lookup per row: this runs on every item a reviewer opens."""
    out_a = aliased(Output)
    out_b = aliased(Output)
    stmt = (  # five entities: more than sqlmodel's typed select takes, hence SQLAlchemy's and execute_wide
        sa_select(Item, Sample, col(Scenario.name), out_a, out_b)
        .join(Sample, col(Sample.id) == col(Item.sample_id))
        .join(Scenario, col(Scenario.id) == col(Sample.scenario_id))
        .join(out_a, col(out_a.id) == col(Item.output_a_id))
        .outerjoin(out_b, col(out_b.id) == col(Item.output_b_id))
        .where(col(Item.id) == item_id)
    )
    item, sample, scenario, a, b = execute_wide(session, stmt).one()
    return item, sample, scenario, a, b


def item_scenario(session: Session, item_id: int) -> str:
    """The scenario name of an item (what a submit needs to pick the rubric's dimensions)."""
    stmt = (
        select(col(Scenario.name))
        .join(Sample, col(Sample.scenario_id) == col(Scenario.id))
        .join(Item, col(Item.sample_id) == col(Sample.id))
        .where(col(Item.id) == item_id)
    )
    return session.exec(stmt).one()


def reviewer_progress_by_batch(session: Session, reviewer_id: int) -> dict[int, tuple[int, int]]:
    """{batch id: (done, assigned)} for one reviewer over every batch they have assignments in, in one query.

    Grouped by (batch, status) in the order of the queue index, so the database counts along the index
    without sorting a big reviewer's thousands of rows."""
    stmt = (
        select(col(Assignment.batch_id), col(Assignment.status), func.count())
        .where(col(Assignment.reviewer_id) == reviewer_id)
        .group_by(col(Assignment.batch_id), col(Assignment.status))
    )
    counts: dict[int, dict[str, int]] = {}
    for batch_id, status, n in session.exec(stmt):
        counts.setdefault(batch_id, {})[status] = n
    return {b: _done_assigned(c) for b, c in counts.items()}


def _done_assigned(counts: dict[str, int]) -> tuple[int, int]:
    done = counts.get(AssignmentStatus.DONE, 0) + counts.get(AssignmentStatus.SKIPPED, 0)
    return done, done + counts.get(AssignmentStatus.PENDING, 0)


def queue_counts(session: Session, batch_id: int, reviewer_id: int, position: int) -> tuple[int, int, int]:
    """(done, assigned, 1-based place of ``position``) in one reviewer's queue of one batch, in one query.

    Skipped ("can't judge") items count as done; the place counts every assignment up to ``position``."""
    stmt = (
        select(
            col(Assignment.status),
            func.count(),
            func.sum(case((col(Assignment.position) <= position, 1), else_=0)),
        )
        .where(col(Assignment.batch_id) == batch_id, col(Assignment.reviewer_id) == reviewer_id)
        .group_by(col(Assignment.status))
    )
    counts: dict[str, int] = {}
    place = 0
    for status, n, up_to in session.exec(stmt):
        counts[status] = n
        place += int(up_to or 0)
    done, assigned = _done_assigned(counts)
    return done, assigned, place


# Imports and exports of whole batches. Writes go through the driver: on SQLite one compiled statement
# executed over many rows, on PostgreSQL COPY (executemany there still paid a round trip per row); SQLAlchemy's
# per-value processing and a 40,000-parameter INSERT compiled per 5,000 rows were most of an import's time.
# Exports read through a streaming cursor, so memory does not grow with the batch.

IMPORT_CHUNK = 20_000  # rows per executemany call: bounded memory for the tuples, progress between calls
BULK_CACHE_KIB = 512 * 1024  # SQLite page cache during a bulk write (an upper bound: pages are taken as needed)

# (scenario, sample key, reviewer, occurrence, position, swapped, dimension, value, model a, model b, repeat of
# output a, seconds spent, is gold, comment, can't-judge reason, is anchor): see export_chunks.
ExportRow = tuple[
    str,
    str,
    str,
    int,
    int,
    bool,
    str | None,
    str | None,
    str,
    str | None,
    int,
    float | None,
    bool,
    str | None,
    str | None,
    bool,
]


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
    """:func:`upsert_ratings` for many rows of (assignment id, batch id, item id, reviewer id, dimension,
    value), executed in the order given (new ratings get increasing ids in that order, as exports read
    them). Returns the number of rows given."""
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


def export_chunks(session: Session, batch_id: int, name: Callable[[str], str] = str) -> Generator[list[ExportRow]]:
    """Every answer of a batch for an export, read through a streaming cursor, in lists of up to
    ``IMPORT_CHUNK`` rows: first every rating in the order of :func:`frames.ratings_frame` (rating id), then
    every "can't judge" answer (which has no ratings) in assignment id order, each as (scenario, sample key,
    reviewer, occurrence, position, swapped, dimension, value, model a, model b or None, repeat of output a,
    seconds spent or None, is gold, comment or None, can't-judge reason or None, is anchor: a follow-up's
    anchor item, whose models are the baseline's). A rating carries its answer's comment and no reason; a
    can't-judge answer has None for dimension and value.

    The ratings are the same rows as ``ratings_frame``. Names (samples, scenarios, models, reviewers) are read
    once into dicts and looked up per row: joining their tables on every rating was most of the query's time.
    ``name`` is applied to each name once, as it is read (an export's cell form of it: made inert for a
    spreadsheet, or already JSON), instead of to every row that shows it. Lists rather than a row at a time:
    at millions of rows a generator's step per row was a visible part of an export."""
    conn = session.connection()
    scenarios: dict[int, str] = {
        i: name(s)
        for i, s in conn.execute(
            sa_select(pk(Scenario.id), col(Scenario.name)).where(col(Scenario.batch_id) == batch_id)
        )
    }
    samples = {
        i: (scenarios[s], name(key))
        for i, key, s in conn.execute(
            sa_select(pk(Sample.id), col(Sample.key), col(Sample.scenario_id)).where(col(Sample.batch_id) == batch_id)
        )
    }
    raw_models: dict[int, str] = {int(i): m for i, m in conn.execute(sa_select(pk(Model.id), col(Model.name)))}
    models: dict[int, str] = {i: name(m) for i, m in raw_models.items()}
    # A pair's output a is a keyed coin per item (issue 33): rows name the pair in model-name order, as they
    # always did, and turn "b was shown on the left" with it (the answer's side as shown stays).
    rank = {m: r for r, m in enumerate(sorted(raw_models, key=raw_models.__getitem__))}
    pairwise = conn.execute(sa_select(col(Batch.mode)).where(pk(Batch.id) == batch_id)).scalar() == Mode.PAIRWISE
    reviewers: dict[int, str] = {i: name(r) for i, r in conn.execute(sa_select(pk(Reviewer.id), col(Reviewer.name)))}
    out_a, out_b = aliased(Output), aliased(Output)
    answer = (
        col(Item.sample_id),
        col(Assignment.reviewer_id),
        col(Assignment.occurrence),
        col(Assignment.position),
        col(Assignment.swapped),
    )
    about = (
        col(out_a.model_id),
        col(out_b.model_id),
        col(out_a.repeat),
        col(Assignment.seconds_spent),
        col(Item.is_gold),
        col(Assignment.comment),
    )
    ratings = (
        sa_select(*answer, col(Rating.dimension), col(Rating.value), *about, null(), col(Item.is_anchor))
        .select_from(Rating)
        .join(Assignment, col(Assignment.id) == col(Rating.assignment_id))
        .join(Item, col(Item.id) == col(Rating.item_id))
        .join(out_a, col(out_a.id) == col(Item.output_a_id))
        .outerjoin(out_b, col(out_b.id) == col(Item.output_b_id))
        .where(col(Rating.batch_id) == batch_id)
        .order_by(col(Rating.id))
    )
    cant_judge = (
        sa_select(*answer, null(), null(), *about, col(Assignment.cant_judge), col(Item.is_anchor))
        .select_from(Assignment)
        .join(Item, col(Item.id) == col(Assignment.item_id))
        .join(out_a, col(out_a.id) == col(Item.output_a_id))
        .outerjoin(out_b, col(out_b.id) == col(Item.output_b_id))
        .where(col(Assignment.batch_id) == batch_id, col(Assignment.status) == AssignmentStatus.SKIPPED)
        .order_by(pk(Assignment.id))
    )
    # Core execution on the session's connection: the ORM's row loading took a third of an export's time.
    streamed = conn.execution_options(stream_results=True, max_row_buffer=IMPORT_CHUNK)
    for stmt in (ratings, cant_judge):
        result = streamed.execute(stmt)
        try:
            for part in result.partitions(IMPORT_CHUNK):
                if not pairwise:
                    yield [
                        (*samples[sample], reviewers[who], occ, pos, swap, dim, value, models[ma], None, rep,
                         secs, gold, comment, reason, bool(anchor))
                        for sample, who, occ, pos, swap, dim, value, ma, _mb, rep, secs, gold, comment, reason, anchor
                        in part
                    ]  # fmt: skip
                    continue
                yield [
                    (*samples[sample], reviewers[who], occ, pos, bool(swap) != turn, dim, value, models[a], models[b],
                     rep, secs, gold, comment, reason, bool(anchor))
                    for sample, who, occ, pos, swap, dim, value, ma, mb, rep, secs, gold, comment, reason, anchor
                    in part
                    for turn in (rank[ma] > rank[mb],)
                    for a, b in ((mb, ma) if turn else (ma, mb),)
                ]  # fmt: skip
        finally:  # a consumer that stops early must not leave PostgreSQL's server-side cursor open
            result.close()
