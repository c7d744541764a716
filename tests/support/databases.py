"""Test databases: each kind is built once per test session, and every test gets one of its own.

Building a database is the slow part of a storage test: Alembic's upgrade, and for the page tests the demo
batches with their people, plan and scripted answers. So each *kind* (``blank``: migrated and empty;
``demo``: migrated and seeded with :func:`reviewer_app.demo.seed.seed_demo`) is built once per dialect, on
first use, and copied for each test:

* SQLite: a file copy of the template (checkpointed, so the copy needs no WAL file), plus its data folder
  (the demo's images).
* PostgreSQL, demo: ``CREATE DATABASE copy TEMPLATE template``, which clones the files inside the server;
  each test's database is dropped after it, the templates at the end of the session.
* PostgreSQL, blank: one scratch database for the session, emptied before each test (DELETE from every
  table, sequences back to 1). On this 2-core machine that takes 2 ms, where a CREATE DATABASE from a
  template takes 30-350 ms and its DROP 60 ms (both wait for the server's checkpoint machinery).

Either way a test's database is its own while it runs, so tests may write whatever they like. Every
database made here is named ``br_test_<pid>_<random>_...``, so parallel runs and other developers' runs on
the same server never meet.
"""

from __future__ import annotations

import itertools
import os
import shutil
import sqlite3
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import pytest
from sqlalchemy import MetaData, create_engine, text
from sqlalchemy.engine import Engine, make_url
from sqlalchemy.pool import NullPool

from storage.engine import make_engine
from storage.migrate import migrate

Dialect = Literal["sqlite", "postgres"]
Kind = Literal["blank", "demo"]

PG_ADMIN_URL = os.environ.get("BLIND_REVIEW_TEST_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test")


def postgres_problem(url: str = PG_ADMIN_URL) -> str | None:
    """None when the PostgreSQL server of ``url`` answers, else the first line of the reason it does not."""
    try:
        eng = create_engine(url, isolation_level="AUTOCOMMIT")
        try:
            with eng.connect() as conn:
                conn.execute(text("SELECT 1"))
        finally:
            eng.dispose()
        return None
    except Exception as exc:  # noqa: BLE001 - any failure means "not reachable"
        return str(exc).splitlines()[0]


@dataclass
class Copy:
    """One test's database: its URL and its data folder (``BLIND_REVIEW_DATA_DIR``)."""

    url: str
    data_dir: Path
    dialect: Dialect
    links: dict[str, str] = field(default_factory=dict)  # the demo people's sign-in links (demo copies)
    dropped: bool = False  # a PostgreSQL database of its own, dropped after the test


@dataclass
class _Template:
    location: str  # a file path (SQLite) or a database name (PostgreSQL)
    data_dir: Path
    links: dict[str, str]


class Templates:
    """Builds each (dialect, kind) template on first use; :meth:`copy` gives a test its own database."""

    def __init__(self, root: Path, pg_admin_url: str = PG_ADMIN_URL) -> None:
        self.root = root
        self.pg_admin_url = pg_admin_url
        self.prefix = f"br_test_{os.getpid()}_{uuid.uuid4().hex[:6]}"
        self._templates: dict[tuple[Dialect, Kind], _Template] = {}
        self._admin: Engine | None = None
        self._serial = itertools.count(1)
        self._tables: list[str] = []
        self._scratch: Engine | None = None

    # -- building -------------------------------------------------------------------------------------------

    def _build(self, dialect: Dialect, kind: Kind) -> _Template:
        key = (dialect, kind)
        if key not in self._templates:
            data_dir = self.root / f"{dialect}-{kind}-data"
            if dialect == "sqlite":
                path = self.root / f"{kind}.db"
                url = f"sqlite:///{path}"
                location = str(path)
            else:
                location = f"{self.prefix}_{'scratch' if kind == 'blank' else 'tpl_' + kind}"
                self._pg(f'CREATE DATABASE "{location}"')
                url = self._pg_url(location)
            links = _fill(url, kind, data_dir)
            if dialect == "sqlite":
                _checkpoint(Path(location))
            elif kind == "blank":
                self._tables = _tables_in_delete_order(url)
                self._scratch = create_engine(url, pool_size=1)  # one connection kept for emptying it
            self._templates[key] = _Template(location, data_dir, links)
        return self._templates[key]

    def copy(self, dialect: Dialect, kind: Kind, dest: Path) -> Copy:
        """A database of the (dialect, kind) template for one test alone; ``dest`` holds its files."""
        tpl = self._build(dialect, kind)
        data_dir = dest / "data"
        if tpl.data_dir.exists():
            shutil.copytree(tpl.data_dir, data_dir, dirs_exist_ok=True)
        if dialect == "sqlite":
            path = dest / "blind_review.db"
            shutil.copyfile(tpl.location, path)
            return Copy(f"sqlite:///{path}", data_dir, dialect, dict(tpl.links))
        if kind == "blank":
            assert self._scratch is not None
            _empty(self._scratch, self._tables)
            # A URL of its own all the same (the name shows in pg_stat_activity): engines are cached per URL,
            # here and in the app's st.cache_resource, and a test must never be handed the last test's engine.
            url = f"{self._pg_url(tpl.location)}?application_name={self.prefix}_{next(self._serial)}"
            return Copy(url, data_dir, dialect)
        name = f"{self.prefix}_{next(self._serial)}"
        self._pg(f'CREATE DATABASE "{name}" TEMPLATE "{tpl.location}"')
        return Copy(self._pg_url(name), data_dir, dialect, dict(tpl.links), dropped=True)

    def drop(self, copy: Copy) -> None:
        """Drop a PostgreSQL copy made from a template (SQLite copies go with the test's temporary folder)."""
        if copy.dropped:
            self._pg(f'DROP DATABASE IF EXISTS "{make_url(copy.url).database}" WITH (FORCE)')

    def close(self) -> None:
        """Drop the PostgreSQL templates and the scratch database (end of the session)."""
        if self._scratch is not None:
            self._scratch.dispose()
            self._scratch = None
        for (dialect, _kind), tpl in self._templates.items():
            if dialect == "postgres":
                self._pg(f'DROP DATABASE IF EXISTS "{tpl.location}" WITH (FORCE)')
        self._templates.clear()
        if self._admin is not None:
            self._admin.dispose()
            self._admin = None

    # -- PostgreSQL -----------------------------------------------------------------------------------------

    def _pg(self, sql: str) -> None:
        if self._admin is None:
            self._admin = create_engine(self.pg_admin_url, isolation_level="AUTOCOMMIT", poolclass=NullPool)
        with self._admin.connect() as conn:
            conn.execute(text(sql))

    def _pg_url(self, database: str) -> str:
        return make_url(self.pg_admin_url).set(database=database).render_as_string(hide_password=False)


def _fill(url: str, kind: Kind, data_dir: Path) -> dict[str, str]:
    """Migrate (and for ``demo`` seed) the database at ``url``; returns the demo's sign-in links.

    A private engine, disposed before returning: PostgreSQL refuses to copy a template anyone is connected to.
    """
    engine = make_engine(url)
    try:
        migrate(engine)
        if kind == "blank":
            return {}
        from reviewer_app.demo.seed import seed_demo

        with pytest.MonkeyPatch.context() as mp:  # the demo's images are copied into the data folder
            mp.setenv("BLIND_REVIEW_DATA_DIR", str(data_dir))
            return {p.name: p.link for p in seed_demo(engine)}
    finally:
        engine.dispose()


def _tables_in_delete_order(url: str) -> list[str]:
    """The schema's tables (as migrated, not as the models say), children before parents."""
    engine = make_engine(url)
    try:
        meta = MetaData()
        meta.reflect(engine)
        return [t.name for t in reversed(meta.sorted_tables) if t.name != "alembic_version"]
    finally:
        engine.dispose()


def _empty(engine: Engine, tables: list[str]) -> None:
    """Delete every row and restart every sequence, in one short transaction (no DDL, no checkpoint)."""
    with engine.begin() as conn:
        for table in tables:
            conn.execute(text(f'DELETE FROM "{table}"'))
        conn.execute(text("SELECT setval(c.oid, 1, false) FROM pg_class c WHERE c.relkind = 'S'"))


def _checkpoint(path: Path) -> None:
    """Fold the WAL into the database file, so copying the file alone copies everything."""
    conn = sqlite3.connect(path)
    try:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        conn.close()
