"""Production feedback events: the bulk insert of ``import-feedback`` and the frame ``monitor`` reads.

Unblinded: series carry model names. An event points to its series (model, scenario, scale) by id, so both
paths move numbers only. Both go through the driver, not the ORM: an import writes a million rows as
executemany (SQLite) or COPY (PostgreSQL) in one transaction, and the monitor reads them with the DBAPI cursor
a block at a time into numpy (as :mod:`storage.repositories.results.frames` does for ratings).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from datetime import UTC, datetime
from types import TracebackType
from typing import Any, Self

import numpy as np
import pandas as pd
from sqlalchemy import text
from sqlmodel import Session

TABLE = "feedback_event"
SERIES = "feedback_series"
# The values of each row an import hands to :class:`EventWriter`, in this order (then the row's line in the file).
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
# The columns of the event table the writer fills: the row's model, scenario and scale become ``series_id``.
EVENT_COLUMNS = ("event_key", "content_digest", "series_id", "ts_ms", "feedback", "latency_ms", "ttft_ms",
                 "source_file", "imported_at")  # fmt: skip
_SERIES_KEY = (2, 3, 6, 7)  # where model, scenario, scale_min and scale_max are in an INSERT_COLUMNS row
_EVENT_FROM_ROW = (0, 1, 4, 5, 8, 9, 10, 11)  # the rest of EVENT_COLUMNS, after series_id
# The monitor's frame: model and scenario (None: not given) as categoricals, ts_ms int64 (UTC ms), the rest float.
FRAME_COLUMNS = ["model", "scenario", "ts_ms", "feedback", "scale_min", "scale_max", "latency_ms", "ttft_ms"]
_READ_ROWS = 5_000  # rows fetched at a time: small blocks stay in the CPU's cache (a fifth faster than 200,000)
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
    "text", "text", "integer", "bigint", "double precision", "double precision", "double precision", "text",
    "timestamptz",
)  # fmt: skip


class EventWriter:
    """Writes an import's rows, chunk by chunk, in the session's transaction (the caller commits or rolls back).

    Each row is the :data:`INSERT_COLUMNS` values followed by the row's line in the file (for problems). Its
    model, scenario and scale become the id of their series, added the first time it is seen. A row whose
    ``event_key`` is stored already is skipped (``ON CONFLICT (event_key) DO NOTHING``), so an import can be
    run twice. With ``check_stored`` (the table had rows when the import began) each chunk's keys are looked up
    first, and a key stored with another content digest is returned as a conflict.

    SQLite: one executemany per chunk (sqlite3 sums the row count over it). PostgreSQL: executemany is a round
    trip per row there (a minute per million), so each chunk is COPYed as CSV: into an empty table straight in,
    else into a temporary table and moved over with one ``INSERT ... SELECT ... ON CONFLICT DO NOTHING`` (the
    conflicts are one join). Straight in, one COPY stays open from chunk to chunk and a thread of psycopg's
    sends it (``QueuedLibpqWriter``), so the server inserts one chunk while this process parses the next (a
    third of a million-event import's time had been the two waiting for each other).

    Use it as a context manager: leaving it ends an open COPY (the server's errors are raised there), and
    leaving it with an error aborts the COPY.
    """

    def __init__(self, session: Session, *, check_stored: bool) -> None:
        self.session = session
        self.check_stored = check_stored
        self.postgres = session.get_bind().dialect.name == "postgresql"
        self._incoming = False
        self._series: dict[tuple[Any, ...], int] | None = None  # (model, scenario or '', min, max) -> id
        self._open: Any = None  # PostgreSQL: the COPY kept open while the rows go straight in
        self._stack = ExitStack()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self._open = None
        stack, self._stack = self._stack, ExitStack()
        stack.__exit__(kind, error, trace)  # an error reaches the COPY, which then aborts

    def finish(self) -> None:
        """End an open COPY: the server has checked everything sent when this returns."""
        self.__exit__(None, None, None)

    def write(self, rows: list[tuple[Any, ...]]) -> tuple[int, list[tuple[str, int]]]:
        """Insert ``rows``; return how many were new and the (event_key, line) of the conflicts."""
        if not rows:
            return 0, []
        events = self._events(rows)
        return self._write_postgres(rows, events) if self.postgres else self._write_sqlite(rows, events)

    def _events(self, rows: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
        """``rows`` in :data:`EVENT_COLUMNS` order, each with its series' id (new series added first)."""
        series = self._series_ids()
        m, sc, lo, hi = _SERIES_KEY
        keys = [(r[m], r[sc] or "", r[lo], r[hi]) for r in rows]
        new = [k for k in dict.fromkeys(keys) if k not in series]
        if new:
            self.finish()  # no other statement while a COPY is open
            conn = self.session.connection()
            mark = _placeholder(self.session)
            # DO NOTHING: an import running at the same time may have added the same series; then it is read back.
            conn.exec_driver_sql(
                f'INSERT INTO "{SERIES}" (model, scenario, scale_min, scale_max) VALUES ({", ".join([mark] * 4)}) '
                "ON CONFLICT DO NOTHING",
                new,
            )
            self._series = None
            series = self._series_ids()
        a, b, ts, fb, lat, ttft, file, at = _EVENT_FROM_ROW
        return [
            (r[a], r[b], series[k], r[ts], r[fb], r[lat], r[ttft], r[file], r[at])
            for r, k in zip(rows, keys, strict=True)
        ]

    def _series_ids(self) -> dict[tuple[Any, ...], int]:
        if self._series is None:
            found = self.session.connection().exec_driver_sql(
                f'SELECT model, scenario, scale_min, scale_max, id FROM "{SERIES}"'
            )
            self._series = {(str(r[0]), str(r[1]), float(r[2]), float(r[3])): int(r[4]) for r in found.fetchall()}
        return self._series

    def _write_sqlite(
        self, rows: list[tuple[Any, ...]], events: list[tuple[Any, ...]]
    ) -> tuple[int, list[tuple[str, int]]]:
        conflicts: list[tuple[str, int]] = []
        if self.check_stored:
            wanted = {r[0]: (r[1], r[-1]) for r in rows if r[0].startswith("request:")}
            stored = stored_digests(self.session, list(wanted))
            conflicts = [(k, wanted[k][1]) for k, d in stored.items() if d != wanted[k][0]]
        names = ", ".join(f'"{c}"' for c in EVENT_COLUMNS)
        values = ", ".join(["?"] * len(EVENT_COLUMNS))
        sql = f'INSERT INTO "{TABLE}" ({names}) VALUES ({values}) ON CONFLICT (event_key) DO NOTHING'
        conn = self.session.connection()
        # A page cache big enough for the key index: a million random keys thrash SQLite's default 2 MB
        # (a third of the insert time); the pooled connection gets its default back.
        conn.exec_driver_sql(f"PRAGMA cache_size=-{_SQLITE_CACHE_KB}")
        try:
            result = conn.exec_driver_sql(sql, events)
        finally:
            conn.exec_driver_sql("PRAGMA cache_size=-2000")
        return int(result.rowcount), conflicts

    def _write_postgres(
        self, rows: list[tuple[Any, ...]], events: list[tuple[Any, ...]]
    ) -> tuple[int, list[tuple[str, int]]]:
        conn = self.session.connection()
        if not self.check_stored:
            # Nothing was stored when the import began and the file's keys are unique (repeats are dropped before
            # they get here): straight in. A second import running at the same time into the empty table fails
            # on the unique key rather than adding anything twice.
            if self._open is None:
                self._open = self._stack.enter_context(self._copying(TABLE, queued=True))
            self._open.write(_csv(events))
            return len(events), []
        if not self._incoming:
            columns = ", ".join(f"{c} {t}" for c, t in zip(EVENT_COLUMNS, _INCOMING_TYPES, strict=True))
            conn.exec_driver_sql(f"CREATE TEMP TABLE IF NOT EXISTS {_INCOMING} ({columns}) ON COMMIT DROP")
            self._incoming = True
        conn.exec_driver_sql(f"TRUNCATE {_INCOMING}")
        self._copy(events, _INCOMING)
        names = ", ".join(EVENT_COLUMNS)
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

    def _copy(self, events: list[tuple[Any, ...]], table: str) -> None:
        with self._copying(table, queued=False) as copy:
            copy.write(_csv(events))

    @contextmanager
    def _copying(self, table: str, *, queued: bool) -> Iterator[Any]:
        """A COPY of :data:`EVENT_COLUMNS` into ``table`` (psycopg's own cursor: COPY is not in the DBAPI);
        ``queued``: written by a thread of psycopg's, so this one goes on while the server works."""
        from psycopg.copy import QueuedLibpqWriter

        dbapi = self.session.connection().connection.dbapi_connection
        assert dbapi is not None
        cursor: Any = dbapi.cursor()
        sql = f'COPY "{table}" ({", ".join(EVENT_COLUMNS)}) FROM STDIN WITH (FORMAT csv)'
        try:
            with cursor.copy(sql, writer=QueuedLibpqWriter(cursor) if queued else None) as copy:
                yield copy
        finally:
            cursor.close()


def _csv(events: list[tuple[Any, ...]]) -> str:
    """Rows as CSV by the csv module's C writer (psycopg's write_row is a Python call per row): an unquoted
    empty field is NULL, floats are written exactly."""
    text = io.StringIO()
    csv.writer(text, lineterminator="\n").writerows(events)
    return text.getvalue()


def feedback_models(session: Session) -> list[str]:
    """Every model with feedback, sorted."""
    result = session.connection().execute(
        text(
            f'SELECT DISTINCT s.model FROM "{SERIES}" s WHERE EXISTS '
            f'(SELECT 1 FROM "{TABLE}" e WHERE e.series_id = s.id) ORDER BY s.model'
        )  # fmt: skip
    )
    return [str(m) for (m,) in result.fetchall()]


_NUMBERS = ["series_id", "ts_ms", "feedback", "latency_ms", "ttft_ms"]  # what is read of each event


def feedback_frame(session: Session, models: Sequence[str] | None = None) -> pd.DataFrame:
    """Every stored event (of ``models`` only, when given) as a frame with :data:`FRAME_COLUMNS`, in the order
    the database gives them; model and scenario are categoricals, their categories sorted.

    Not through the ORM, nor row by row: the series (a few rows) are read first, then the events as numbers
    only: on PostgreSQL as one ``COPY ... TO STDOUT`` in CSV that pandas' C parser reads, on SQLite through
    the DBAPI cursor in blocks, each block one float array (the driver makes a Python object per cell: five
    numbers a row cost 0.9 s per million rows, the model and scenario names had cost another 1.5 s)."""
    conn = session.connection()
    mark = _placeholder(session)
    sql = f'SELECT id, model, scenario, scale_min, scale_max FROM "{SERIES}"'
    params: tuple[str, ...] = ()
    if models is not None:
        params = tuple(dict.fromkeys(models))
        if not params:
            return _frame([], np.empty((0, len(_NUMBERS))))
        sql += f" WHERE model IN ({', '.join([mark] * len(params))})"
    series = [tuple(r) for r in conn.exec_driver_sql(sql, params).fetchall()]
    if not series:
        return _frame([], np.empty((0, len(_NUMBERS))))
    events = f'SELECT {", ".join(_NUMBERS)} FROM "{TABLE}"'
    if models is not None:
        events += f" WHERE series_id IN ({', '.join(str(int(s[0])) for s in series)})"  # ids: integers we read
    dbapi = conn.connection.dbapi_connection
    assert dbapi is not None
    cursor: Any = dbapi.cursor()
    try:
        if session.get_bind().dialect.name == "postgresql":
            return _frame(series, _copied(cursor, events))
        blocks: list[np.ndarray] = []
        cursor.execute(events)
        while block := cursor.fetchmany(_READ_ROWS):
            blocks.append(np.array(block, dtype=float))  # None -> NaN; ids and epoch ms are exact below 2^53
    finally:
        cursor.close()
    return _frame(series, np.concatenate(blocks) if blocks else np.empty((0, len(_NUMBERS))))


def _copied(cursor: Any, sql: str) -> np.ndarray:
    """PostgreSQL: the query's numbers as CSV through COPY, parsed by pandas (an empty field is missing; float8
    is written in its shortest exact form)."""
    buffer = io.BytesIO()
    with cursor.copy(f"COPY ({sql}) TO STDOUT WITH (FORMAT csv)") as copy:
        for data in copy:
            buffer.write(data)
    buffer.seek(0)
    if not buffer.getbuffer().nbytes:
        return np.empty((0, len(_NUMBERS)))
    return pd.read_csv(buffer, names=_NUMBERS, header=None, dtype=float).to_numpy(dtype=float)


def _categorical(codes: np.ndarray, names: list[str]) -> pd.Categorical:
    return pd.Categorical.from_codes(codes, categories=pd.Index(names, dtype=object))


def _frame(series: list[tuple[Any, ...]], values: np.ndarray) -> pd.DataFrame:
    """The frame from the series rows (id, model, scenario or '', scale_min, scale_max) and the events'
    :data:`_NUMBERS`: each event's names and scale looked up by its series' id, a column at a time."""
    models = sorted({str(s[1]) for s in series})
    scenarios = sorted({str(s[2]) for s in series} - {""})
    ids = np.array([int(s[0]) for s in series], dtype=np.int64)
    order = np.argsort(ids)
    where = order[np.searchsorted(ids[order], values[:, 0].astype(np.int64))] if len(values) else np.empty(0, int)
    model_code = np.array([models.index(str(s[1])) for s in series], dtype=np.int64)
    scenario_code = np.array([scenarios.index(str(s[2])) if s[2] else -1 for s in series], dtype=np.int64)
    scale = np.array([(float(s[3]), float(s[4])) for s in series], dtype=float).reshape(-1, 2)
    return pd.DataFrame(
        {
            "model": _categorical(model_code[where], models),
            "scenario": _categorical(scenario_code[where], scenarios),
            "ts_ms": values[:, 1].astype(np.int64),  # exact: epoch ms are far below 2^53
            "feedback": values[:, 2],
            "scale_min": scale[where, 0],
            "scale_max": scale[where, 1],
            "latency_ms": values[:, 3],
            "ttft_ms": values[:, 4],
        }
    )
