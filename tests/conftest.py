"""Database fixtures: every storage-touching test runs on SQLite (WAL) and on PostgreSQL.

Each test gets a database of its own, copied from a template built once per session
(:mod:`tests.support.databases`): migrated and empty, or, for a test that asks for ``demo``, with the demo
batches, people and scripted answers already in it. Copies are private, so tests may write freely.

PostgreSQL comes from ``BLIND_REVIEW_TEST_POSTGRES_URL`` (default: the local server at 127.0.0.1:5432,
database ``test``, used only to create and drop this run's databases). In CI (``CI=true``) an unreachable
PostgreSQL is an error, never a silent skip.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy.engine import Engine

from storage.engine import dispose_engines, get_engine
from tests.support.databases import PG_ADMIN_URL, Copy, Dialect, Kind, Templates, postgres_problem


@pytest.fixture(scope="session")
def templates(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Templates]:
    made = Templates(tmp_path_factory.mktemp("templates"))
    try:
        yield made
    finally:
        dispose_engines()
        made.close()


@pytest.fixture(scope="session")
def postgres_ready() -> None:
    """Fails in CI, skips elsewhere, when the PostgreSQL server is unreachable (checked once per session)."""
    problem = postgres_problem()
    if problem is not None:
        if os.environ.get("CI"):
            pytest.fail(f"PostgreSQL is required in CI but unreachable at {PG_ADMIN_URL}: {problem}")
        pytest.skip(f"PostgreSQL unreachable at {PG_ADMIN_URL}: {problem}")


def _kind(request: pytest.FixtureRequest) -> Kind:
    return "demo" if "demo" in request.fixturenames else "blank"


def _database(request: pytest.FixtureRequest, dialect: Dialect, tmp_path: Path) -> Iterator[Copy]:
    if dialect == "postgres":
        request.getfixturevalue("postgres_ready")
    templates: Templates = request.getfixturevalue("templates")
    copy = templates.copy(dialect, _kind(request), tmp_path)
    try:
        yield copy
    finally:
        dispose_engines()  # close the copy's pooled connections before it is dropped
        templates.drop(copy)


@pytest.fixture(params=["sqlite", "postgres"])
def database(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Copy]:
    """This test's database on each dialect (a parametrized test may narrow it with ``indirect``)."""
    yield from _database(request, request.param, tmp_path)


@pytest.fixture
def db_url(database: Copy) -> str:
    return database.url


def _use(copy: Copy, monkeypatch: pytest.MonkeyPatch) -> Iterator[Engine]:
    monkeypatch.setenv("BLIND_REVIEW_DATA_DIR", str(copy.data_dir))
    monkeypatch.setenv("BLIND_REVIEW_DATABASE_URL", copy.url)
    engine = get_engine(copy.url)
    yield engine
    # The CLI's main() empties the engine cache when it returns, so a test that calls it and then goes on
    # with its engine holds one the cache no longer knows about: close it here, not at garbage collection.
    engine.dispose()


@pytest.fixture
def engine(database: Copy, monkeypatch: pytest.MonkeyPatch) -> Iterator[Engine]:
    """A migrated database of this test's own (empty, or the demo's when the test asks for ``demo``), with a
    private data dir; the app, the CLI and the services all find it through the environment."""
    yield from _use(database, monkeypatch)


@pytest.fixture
def sqlite_database(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Copy]:
    yield from _database(request, "sqlite", tmp_path)


@pytest.fixture
def sqlite_engine(sqlite_database: Copy, monkeypatch: pytest.MonkeyPatch) -> Iterator[Engine]:
    """SQLite only, for tests about SQLite itself or too slow to double."""
    yield from _use(sqlite_database, monkeypatch)


@pytest.fixture
def demo(request: pytest.FixtureRequest) -> dict[str, str]:
    """The demo people's sign-in links (name -> link), valid in this test's database.

    Asking for ``demo`` makes ``engine`` (or ``sqlite_engine``) a copy of the demo database, seeded once per
    session rather than once per test."""
    for name in ("database", "sqlite_database"):
        if name in request.fixturenames:
            copy: Copy = request.getfixturevalue(name)
            return dict(copy.links)
    raise pytest.UsageError("the demo fixture goes with the engine (or sqlite_engine) fixture")
