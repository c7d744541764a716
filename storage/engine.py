"""One engine per process, chosen by URL alone.

SQLite gets WAL (readers never block the writer, so reviewers keep reading while a batch loads), foreign
keys on, a busy timeout, and ``BEGIN IMMEDIATE`` for writing transactions so two claims serialize instead
of failing on lock upgrade. PostgreSQL gets a connection pool and row locks (see ``repositories.assignments``).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sqlalchemy import event
from sqlalchemy.engine import Engine
from sqlmodel import Session, create_engine

_engines: dict[str, Engine] = {}
_lock = threading.Lock()


def is_sqlite(engine: Engine) -> bool:
    return engine.dialect.name == "sqlite"


def make_engine(url: str) -> Engine:
    """A new engine for ``url`` with the per-dialect settings above. Prefer :func:`get_engine`."""
    if url.startswith("sqlite"):
        path = url.split("///", 1)[1] if "///" in url else ""
        if path and path != ":memory:" and not path.startswith("file:"):
            _create_private(Path(path))
        engine = create_engine(url, connect_args={"check_same_thread": False, "timeout": 30})

        @event.listens_for(engine, "connect")
        def _on_connect(dbapi_conn: Any, _record: Any) -> None:
            # Take transaction control away from the sqlite3 module so BEGIN IMMEDIATE below is ours.
            dbapi_conn.isolation_level = None
            cur = dbapi_conn.cursor()
            cur.execute("PRAGMA journal_mode=WAL")
            cur.execute("PRAGMA foreign_keys=ON")
            cur.execute("PRAGMA busy_timeout=30000")
            # FULL: a rating the reviewer saw as "saved" must survive a power cut, not only a crash.
            cur.execute("PRAGMA synchronous=FULL")
            cur.close()

        @event.listens_for(engine, "begin")
        def _on_begin(conn: Any) -> None:
            write = conn.get_execution_options().get("blind_review_write", False)
            conn.exec_driver_sql("BEGIN IMMEDIATE" if write else "BEGIN")

        return engine
    return create_engine(url, pool_size=10, max_overflow=30, pool_pre_ping=True)


def _create_private(path: Path) -> None:
    """Create the SQLite file's folder (and any missing parent) readable by the owner only (0700) and the
    file itself 0600, when we are the ones creating them: the database holds who rated what and which
    model wrote which output. SQLite gives its -wal and -shm files the database file's permissions.
    Existing folders and files keep the permissions their owner gave them."""
    missing = [p for p in (path.parent, *path.parent.parents) if not p.exists()]
    for folder in reversed(missing):
        folder.mkdir(mode=0o700, exist_ok=True)
        os.chmod(folder, 0o700)  # mkdir's mode is filtered by the umask; 0700 is what we mean
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    except FileExistsError:
        return
    os.chmod(path, 0o600)


def get_engine(url: str) -> Engine:
    """The process-wide engine for ``url``; the app passes ``reviewer_app.settings.database_url()``.

    Storage takes the URL rather than reading the app's settings itself, so it depends on nothing above it.
    """
    with _lock:
        engine = _engines.get(url)
        if engine is None:
            engine = _engines[url] = make_engine(url)
        return engine


def dispose_engines() -> None:
    """Close every pooled connection (tests, and a CLI about to exit)."""
    with _lock:
        for engine in _engines.values():
            engine.dispose()
        _engines.clear()


def analyze(engine: Engine) -> None:
    """Refresh the planner's statistics (and, on PostgreSQL, the visibility map) after a bulk load.

    What autovacuum does on its own within a minute or so of a big load; benchmarks call it so they measure
    that steady state rather than the minute right after the load."""
    if is_sqlite(engine):
        with engine.begin() as conn:
            conn.exec_driver_sql("ANALYZE")
        return
    with engine.connect() as conn:
        conn.execution_options(isolation_level="AUTOCOMMIT").exec_driver_sql("VACUUM ANALYZE")


@contextmanager
def read_session(engine: Engine) -> Iterator[Session]:
    """A session for reading; nothing is committed."""
    with Session(engine, expire_on_commit=False) as session:
        yield session


@contextmanager
def write_session(engine: Engine) -> Iterator[Session]:
    """A session whose transaction is committed on success and rolled back on any error.

    On SQLite the transaction starts with ``BEGIN IMMEDIATE``: the write lock is taken up front, so two
    writers queue on the busy timeout rather than one failing half-way.
    """
    with engine.connect() as conn:
        conn = conn.execution_options(blind_review_write=True)
        with Session(bind=conn, expire_on_commit=False) as session:
            try:
                yield session
                session.commit()
            except BaseException:
                session.rollback()
                raise
