"""Database fixtures: every storage-touching test runs on SQLite (WAL) and on PostgreSQL.

PostgreSQL comes from ``BLIND_REVIEW_TEST_POSTGRES_URL`` (default: the local server at 127.0.0.1:5432,
database ``test``). Each test process creates its own scratch database there, so parallel runs and other
developers' runs never see each other's rows. In CI (``CI=true``) an unreachable PostgreSQL is an error,
never a silent skip.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.engine import Engine, make_url

from storage.engine import dispose_engines, get_engine
from storage.migrate import migrate

PG_ADMIN_URL = os.environ.get("BLIND_REVIEW_TEST_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test")
TABLES = ["rating", "assignment", "item", "output", "sample", "scenario", "batch", "model", "reviewer"]


def _pg_available() -> str | None:
    try:
        eng = create_engine(PG_ADMIN_URL, isolation_level="AUTOCOMMIT")
        with eng.connect() as conn:
            conn.execute(text("SELECT 1"))
        eng.dispose()
        return None
    except Exception as exc:  # noqa: BLE001 - any failure means "not reachable"
        return str(exc).splitlines()[0]


@pytest.fixture(scope="session")
def pg_url() -> Iterator[str]:
    problem = _pg_available()
    if problem is not None:
        if os.environ.get("CI"):
            pytest.fail(f"PostgreSQL is required in CI but unreachable at {PG_ADMIN_URL}: {problem}")
        pytest.skip(f"PostgreSQL unreachable at {PG_ADMIN_URL}: {problem}")
    name = f"br_test_{os.getpid()}_{uuid.uuid4().hex[:6]}"
    admin = create_engine(PG_ADMIN_URL, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    url = make_url(PG_ADMIN_URL).set(database=name).render_as_string(hide_password=False)
    try:
        yield url
    finally:
        dispose_engines()
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


def _reset(engine: Engine) -> None:
    with engine.begin() as conn:
        if engine.dialect.name == "postgresql":
            conn.execute(text("TRUNCATE " + ", ".join(f'"{t}"' for t in TABLES) + " RESTART IDENTITY CASCADE"))
        else:
            for t in TABLES:
                conn.execute(text(f'DELETE FROM "{t}"'))


@pytest.fixture(params=["sqlite", "postgres"])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'blind_review.db'}"
    return str(request.getfixturevalue("pg_url"))


@pytest.fixture
def engine(db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Engine]:
    """A migrated, empty database (SQLite file or PostgreSQL scratch database) and a private data dir."""
    monkeypatch.setenv("BLIND_REVIEW_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("BLIND_REVIEW_DATABASE_URL", db_url)
    eng = get_engine(db_url)
    migrate(eng)
    _reset(eng)
    yield eng


@pytest.fixture
def sqlite_engine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Engine]:
    """SQLite only, for tests about SQLite itself or too slow to double."""
    url = f"sqlite:///{tmp_path / 'blind_review.db'}"
    monkeypatch.setenv("BLIND_REVIEW_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("BLIND_REVIEW_DATABASE_URL", url)
    eng = get_engine(url)
    migrate(eng)
    yield eng


SHARED = Path(__file__).resolve().parents[2] / "shared" / "data" / "alpaca_eval_outputs"


@pytest.fixture(scope="session")
def alpaca_files() -> list[Path]:
    files = sorted(SHARED.glob("*/model_outputs.json"))
    if len(files) != 6:
        pytest.fail(f"expected the six AlpacaEval files in {SHARED} (../shared/data beside the project)")
    return files
