"""Production feedback events: the bulk insert of ``import-feedback`` and the frame ``monitor`` reads.

Unblinded: rows carry model names. Both paths go through the driver, not the ORM: an import writes a million
rows as executemany in one transaction, and the monitor reads them with the DBAPI cursor a block at a time,
column by column into numpy (as :mod:`storage.repositories.frames` does for ratings).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import numpy as np
import pandas as pd
from sqlalchemy import text
from sqlmodel import Session

TABLE = "feedback_event"
# The columns an import writes, in the order of each row tuple.
INSERT_COLUMNS = (
    "event_key",
    "content_digest",
    "model",
    "scenario",
    "ts_ms",
    "feedback",
    "scale_min",
    "scale_max",
    "latency_ms",
    "ttft_ms",
    "source_file",
    "imported_at",
)
# The monitor's frame: model and scenario (None: not given) as categoricals, ts_ms int64 (UTC ms), the rest float.
FRAME_COLUMNS = ["model", "scenario", "ts_ms", "feedback", "scale_min", "scale_max", "latency_ms", "ttft_ms"]
_CHUNK = 200_000  # rows fetched at a time
_SQLITE_CACHE_KB = 262_144  # 256 MB of page cache while an import writes
_KEYS_PER_QUERY = 5_000  # keys per IN (...) when checking for events already stored


def _placeholder(session: Session) -> str:
    return "?" if session.get_bind().dialect.name == "sqlite" else "%s"


def bind_time(session: Session, moment: datetime) -> Any:
    """``moment`` (aware) as a raw insert writes it to a ``UTCDateTime`` column: on SQLite the text SQLAlchemy
    itself writes (UTC, no offset), on PostgreSQL ISO 8601 with the offset (for COPY)."""
    if session.get_bind().dialect.name == "sqlite":
        return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S.%f")
    return moment.astimezone(UTC).isoformat()  # COPY's CSV takes the text; one string shared by every row


def has_events(session: Session) -> bool:
    """Whether any feedback event is stored (an import into an empty table need not look for stored keys)."""
    return session.connection().execute(text(f'SELECT 1 FROM "{TABLE}" LIMIT 1')).first() is not None


def stored_digests(session: Session, keys: Sequence[str]) -> dict[str, str]:
    """The content digest of each of ``keys`` already stored (keys not stored are left out)."""
    out: dict[str, str] = {}
    conn = session.connection()
    mark = _placeholder(session)
    for start in range(0, len(keys), _KEYS_PER_QUERY):
        part = list(keys[start : start + _KEYS_PER_QUERY])
        sql = f'SELECT event_key, content_digest FROM "{TABLE}" WHERE event_key IN ({", ".join([mark] * len(part))})'
        out.update((str(k), str(d)) for k, d in conn.exec_driver_sql(sql, tuple(part)).fetchall())
    return out


_INCOMING = "feedback_incoming"
_INCOMING_TYPES = (
    "text", "text", "text", "text", "bigint", "double precision", "double precision", "double precision",
    "double precision", "double precision", "text", "timestamptz",
)  # fmt: skip


class EventWriter:
    """Writes an import's rows, chunk by chunk, in the session's transaction (the caller commits or rolls back).

    Each row is the :data:`INSERT_COLUMNS` values followed by the row's line in the file (for problems). A row
    whose ``event_key`` is stored already is skipped (``ON CONFLICT (event_key) DO NOTHING``), so an import can
    be run twice. With ``check_stored`` (the table had rows when the import began) each chunk's keys are looked
    up first, and a key stored with another content digest is returned as a conflict.

    SQLite: one executemany per chunk (sqlite3 sums the row count over it). PostgreSQL: executemany is a round
    trip per row there (a minute per million), so each chunk is COPYed as CSV: into an empty table straight in,
    else into a temporary table and moved over with one ``INSERT ... SELECT ... ON CONFLICT DO NOTHING`` (the
    conflicts are one join).
    """

    def __init__(self, session: Session, *, check_stored: bool) -> None:
        self.session = session
        self.check_stored = check_stored
        self.postgres = session.get_bind().dialect.name == "postgresql"
        self._incoming = False

    def write(self, rows: list[tuple[Any, ...]]) -> tuple[int, list[tuple[str, int]]]:
        """Insert ``rows``; return how many were new and the (event_key, line) of the conflicts."""
        if not rows:
            return 0, []
        return self._write_postgres(rows) if self.postgres else self._write_sqlite(rows)

    def _write_sqlite(self, rows: list[tuple[Any, ...]]) -> tuple[int, list[tuple[str, int]]]:
        conflicts: list[tuple[str, int]] = []
        if self.check_stored:
            wanted = {r[0]: (r[1], r[-1]) for r in rows if r[0].startswith("request:")}
            stored = stored_digests(self.session, list(wanted))
            conflicts = [(k, wanted[k][1]) for k, d in stored.items() if d != wanted[k][0]]
        names = ", ".join(f'"{c}"' for c in INSERT_COLUMNS)
        values = ", ".join(["?"] * len(INSERT_COLUMNS))
        sql = f'INSERT INTO "{TABLE}" ({names}) VALUES ({values}) ON CONFLICT (event_key) DO NOTHING'
        width = len(INSERT_COLUMNS)
        conn = self.session.connection()
        # A page cache big enough for the key index: a million random keys thrash SQLite's default 2 MB
        # (a third of the insert time); the pooled connection gets its default back.
        conn.exec_driver_sql(f"PRAGMA cache_size=-{_SQLITE_CACHE_KB}")
        try:
            result = conn.exec_driver_sql(sql, [r[:width] for r in rows])
        finally:
            conn.exec_driver_sql("PRAGMA cache_size=-2000")
        return int(result.rowcount), conflicts

    def _write_postgres(self, rows: list[tuple[Any, ...]]) -> tuple[int, list[tuple[str, int]]]:
        conn = self.session.connection()
        if not self.check_stored:
            # Nothing was stored when the import began and the file's keys are unique (repeats are dropped before
            # they get here): straight in. A second import running at the same time into the empty table fails
            # on the unique key rather than adding anything twice.
            self._copy(rows, TABLE)
            return len(rows), []
        if not self._incoming:
            columns = ", ".join(f"{c} {t}" for c, t in zip(INSERT_COLUMNS, _INCOMING_TYPES, strict=True))
            conn.exec_driver_sql(f"CREATE TEMP TABLE IF NOT EXISTS {_INCOMING} ({columns}) ON COMMIT DROP")
            self._incoming = True
        conn.exec_driver_sql(f"TRUNCATE {_INCOMING}")
        self._copy(rows, _INCOMING)
        names = ", ".join(INSERT_COLUMNS)
        conflicts: list[tuple[str, int]] = []
        found = conn.exec_driver_sql(
            f'SELECT i.event_key FROM {_INCOMING} i JOIN "{TABLE}" f ON f.event_key = i.event_key '
            "WHERE f.content_digest <> i.content_digest"
        ).fetchall()
        if found:
            line_of = {r[0]: r[-1] for r in rows}
            conflicts = [(str(k), line_of[str(k)]) for (k,) in found]
        result = conn.exec_driver_sql(
            f'INSERT INTO "{TABLE}" ({names}) SELECT {names} FROM {_INCOMING} ON CONFLICT (event_key) DO NOTHING'
        )
        return int(result.rowcount), conflicts

    def _copy(self, rows: list[tuple[Any, ...]], table: str) -> None:
        dbapi = self.session.connection().connection.dbapi_connection
        assert dbapi is not None
        names = ", ".join(INSERT_COLUMNS)
        width = len(INSERT_COLUMNS)
        # The chunk as CSV by the csv module's C writer (psycopg's write_row is a Python call per row): an
        # unquoted empty field is NULL, names with commas or quotes are quoted, floats are written exactly.
        text = io.StringIO()
        csv.writer(text, lineterminator="\n").writerows(r[:width] for r in rows)
        cursor: Any = dbapi.cursor()  # psycopg's own cursor: COPY is not in the DBAPI
        try:
            with cursor.copy(f'COPY "{table}" ({names}) FROM STDIN WITH (FORMAT csv)') as copy:
                copy.write(text.getvalue())
        finally:
            cursor.close()


def feedback_models(session: Session) -> list[str]:
    """Every model with feedback, sorted."""
    result = session.connection().execute(text(f'SELECT DISTINCT model FROM "{TABLE}" ORDER BY model'))
    return [str(m) for (m,) in result.fetchall()]


def feedback_frame(session: Session, models: Sequence[str] | None = None) -> pd.DataFrame:
    """Every stored event (of ``models`` only, when given) as a frame with :data:`FRAME_COLUMNS`, in storage
    order; model and scenario are categoricals (a million rows hold one string per distinct name).

    Not through the ORM, nor row by row: on PostgreSQL the rows come as one ``COPY ... TO STDOUT`` in CSV that
    pandas' C parser reads; on SQLite through the DBAPI cursor in blocks, each block one 2-D object array with
    the numbers converted a column at a time. Most of SQLite's time is the driver making a Python object per
    cell (about 2 s per million rows)."""
    mark = _placeholder(session)
    sql = f'SELECT {", ".join(FRAME_COLUMNS)} FROM "{TABLE}"'
    params: tuple[str, ...] = ()
    if models is not None:
        params = tuple(dict.fromkeys(models))
        if not params:
            return _frame(np.empty((0, 2), dtype=object), np.empty((0, len(FRAME_COLUMNS) - 2)))
        sql += f" WHERE model IN ({', '.join([mark] * len(params))})"
    dbapi = session.connection().connection.dbapi_connection
    assert dbapi is not None
    cursor: Any = dbapi.cursor()
    try:
        if session.get_bind().dialect.name == "postgresql":
            return _copied(cursor, sql, params)
        names: list[np.ndarray] = []
        numbers: list[np.ndarray] = []
        cursor.execute(sql, params)
        while block := cursor.fetchmany(_CHUNK):
            cells = np.array(block, dtype=object)
            names.append(cells[:, :2])
            numbers.append(cells[:, 2:].astype(float))  # None -> NaN
    finally:
        cursor.close()
    if not names:
        return _frame(np.empty((0, 2), dtype=object), np.empty((0, len(FRAME_COLUMNS) - 2)))
    return _frame(np.concatenate(names), np.concatenate(numbers))


def _copied(cursor: Any, sql: str, params: tuple[str, ...]) -> pd.DataFrame:
    """PostgreSQL: the query's rows as CSV through COPY, parsed by pandas. Only an empty field is missing (a
    model called "NA" stays a name); float8 is written in its shortest exact form."""
    buffer = io.BytesIO()
    with cursor.copy(f"COPY ({sql}) TO STDOUT WITH (FORMAT csv)", params or None) as copy:
        for data in copy:
            buffer.write(data)
    buffer.seek(0)
    if not buffer.getbuffer().nbytes:
        return _frame(np.empty((0, 2), dtype=object), np.empty((0, len(FRAME_COLUMNS) - 2)))
    read = pd.read_csv(
        buffer,
        names=FRAME_COLUMNS,
        header=None,
        keep_default_na=False,
        na_values=[""],
        dtype={"model": object, "scenario": object, "ts_ms": np.int64, **dict.fromkeys(FRAME_COLUMNS[3:], float)},
    )
    names = read[["model", "scenario"]].to_numpy(dtype=object)
    return _frame(names, read[FRAME_COLUMNS[2:]].to_numpy(dtype=float))


def _categorical(values: np.ndarray) -> pd.Categorical:
    """Names as a categorical by one hash pass (pd.Categorical on a million objects took five times as long)."""
    codes, uniques = pd.factorize(values)
    return pd.Categorical.from_codes(codes, categories=pd.Index(uniques, dtype=object))


def _frame(names: np.ndarray, values: np.ndarray) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "model": _categorical(names[:, 0]),
            "scenario": _categorical(names[:, 1]),
            "ts_ms": values[:, 0].astype(np.int64),  # exact: epoch ms are far below 2^53
            **{name: values[:, k] for k, name in enumerate(FRAME_COLUMNS[3:], start=1)},
        }
    )
