"""The SQLite file and the folders made for it are the owner's alone: 0600 and 0700."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from sqlalchemy import text

from storage.engine import make_engine


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_new_database_and_its_folders_are_private(tmp_path: Path) -> None:
    old = os.umask(0o022)  # the usual umask, which would leave both readable by everyone
    try:
        db = tmp_path / "data" / "nested" / "blind_review.db"
        engine = make_engine(f"sqlite:///{db}")
        with engine.begin() as conn:
            conn.execute(text("CREATE TABLE t (x INTEGER)"))
            conn.execute(text("INSERT INTO t VALUES (1)"))
        assert _mode(tmp_path / "data") == 0o700 and _mode(tmp_path / "data" / "nested") == 0o700
        assert _mode(db) == 0o600
        for side in (db.with_name(db.name + "-wal"), db.with_name(db.name + "-shm")):
            if side.exists():  # SQLite gives them the database file's permissions
                assert _mode(side) & 0o077 == 0
        engine.dispose()
    finally:
        os.umask(old)


def test_existing_folders_and_files_keep_their_permissions(tmp_path: Path) -> None:
    folder = tmp_path / "shared"
    folder.mkdir(mode=0o755)
    os.chmod(folder, 0o750)
    db = folder / "blind_review.db"
    db.touch()
    os.chmod(db, 0o640)
    make_engine(f"sqlite:///{db}").dispose()
    assert (_mode(folder), _mode(db)) == (0o750, 0o640)


@pytest.mark.parametrize("url", ["sqlite://", "sqlite:///:memory:"])
def test_in_memory_databases_touch_no_file(url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    make_engine(url).dispose()
    assert list(tmp_path.iterdir()) == []
