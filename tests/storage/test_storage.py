"""Storage: the migrations match the models, SQLite is configured as promised, and a saved rating survives a
process killed right after the reviewer saw "saved"."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest
from alembic.autogenerate import compare_metadata, produce_migrations, render_python_code
from alembic.migration import MigrationContext
from sqlalchemy import create_engine, select, text
from sqlalchemy.engine import Engine
from sqlmodel import SQLModel

from reviewer_app.batches.loading import load_batch
from reviewer_app.people.people import add_reviewer
from storage.engine import get_engine, read_session
from storage.migrate import render_item
from storage.models import Rating
from tests.helpers import RATING_RUBRIC, make_records, write_batch, write_rubric

ROOT = Path(__file__).resolve().parents[2]


def test_migrations_produce_exactly_the_models_schema(engine: Engine) -> None:
    with engine.connect() as conn:
        diff = compare_metadata(MigrationContext.configure(conn), SQLModel.metadata)
    assert diff == [], f"models and migrations differ; add an Alembic revision: {diff}"


def test_a_new_revision_writes_enum_columns_as_plain_strings() -> None:
    empty = create_engine("sqlite://")
    with empty.connect() as conn:
        ops = produce_migrations(MigrationContext.configure(conn), SQLModel.metadata)
    code = render_python_code(ops.upgrade_ops, render_item=render_item)
    empty.dispose()
    assert "EnumString" not in code
    assert "sa.Column('status', sqlmodel.sql.sqltypes.AutoString(), nullable=False)" in code


def test_sqlite_runs_in_wal_with_foreign_keys(sqlite_engine: Engine) -> None:
    with sqlite_engine.connect() as conn:
        assert conn.execute(text("PRAGMA journal_mode")).scalar() == "wal"
        assert conn.execute(text("PRAGMA foreign_keys")).scalar() == 1
        assert conn.execute(text("PRAGMA synchronous")).scalar() == 2  # FULL


CHILD = """
import os, sys
from storage.engine import get_engine
from reviewer_app.review.reviews import next_item, submit_review
engine = get_engine(sys.argv[1])
view = next_item(engine, int(sys.argv[2]), int(sys.argv[3]))
submit_review(engine, int(sys.argv[3]), view.assignment_id, {"correctness": "2", "follows_format": "1"})
print("saved", flush=True)
os.kill(os.getpid(), 9)  # die at once: no cleanup, no connection close, no checkpoint
"""


def test_a_saved_rating_survives_a_killed_process(engine: Engine, db_url: str, tmp_path: Path) -> None:
    batch = load_batch(
        engine,
        [write_batch(tmp_path, make_records(2, ["m1"]))],
        write_rubric(tmp_path, RATING_RUBRIC.format(overlap=1)),
        name="b",
        open_now=True,
    )
    person = add_reviewer(engine, "ann")[0]
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, db_url, str(batch.batch_id), str(person.id)],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=120,
    )
    assert proc.stdout.strip() == "saved" and proc.returncode == -9, proc.stderr
    engine.dispose()  # a "restarted" server: fresh connections only
    fresh = get_engine(db_url)
    with read_session(fresh) as s:
        values = sorted(tuple(r) for r in s.connection().execute(select(Rating.dimension, Rating.value)))
    assert values == [("correctness", "2"), ("follows_format", "1")]


def test_revision_0004_fills_pool_keys_and_output_lengths_of_existing_rows(tmp_path: Path) -> None:
    from alembic import command

    from storage.migrate import alembic_config
    from storage.models import text_counts

    url = f"sqlite:///{tmp_path / 'old.db'}"
    old = get_engine(url)
    cfg = alembic_config(old)
    with old.begin() as conn:
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, "0003")
    texts = ["two  words\n", "", "ünïcode — three words"]
    with old.begin() as conn:
        conn.execute(
            text(
                "INSERT INTO batch (id, name, content_hash, mode, overlap, seed, rubric_toml, rubric_json, status,"
                " source_files, created_at) VALUES (1, 'b', 'h', 'rating', 1, 77, '', '{}', 'open', '[]', '2026-01-01')"
            )
        )
        conn.execute(text("INSERT INTO scenario (id, batch_id, name) VALUES (1, 1, 's')"))
        conn.execute(
            text(
                "INSERT INTO sample (id, batch_id, scenario_id, key, prompt_json, images_json)"
                " VALUES (1, 1, 1, 'k', '\"p\"', '[]')"
            )
        )
        conn.execute(text("INSERT INTO model (id, name) VALUES (1, 'm')"))
        for i, body in enumerate(texts, start=1):
            conn.execute(
                text(
                    "INSERT INTO output (id, batch_id, sample_id, model_id, repeat, text, metadata_json, leak_words,"
                    " excluded) VALUES (:i, 1, 1, 1, :i, :t, '{}', '', 0)"
                ),
                {"i": i, "t": body},
            )
            conn.execute(
                text("INSERT INTO item (id, batch_id, sample_id, output_a_id, is_gold) VALUES (:i, 1, 1, :i, 0)"),
                {"i": i},
            )
    with old.begin() as conn:
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, "0004")  # 0013 draws the keys again from the batch's new secret
    with old.connect() as conn:
        keys = dict(conn.execute(text("SELECT id, pool_key FROM item")).all())
        counts = {i: (c, w) for i, c, w in conn.execute(text("SELECT id, n_chars, n_words FROM output")).all()}
    old.dispose()
    seeded = {
        i: int.from_bytes(hashlib.sha256(f"77:pool-key:{i}".encode()).digest()[:4], "big") >> 1 for i in (1, 2, 3)
    }
    assert keys == seeded
    assert len(set(keys.values())) == 3 and all(0 <= k < 2**31 for k in keys.values())
    assert counts == {i: text_counts(body) for i, body in enumerate(texts, start=1)}
    assert counts[1] == (11, 2) and counts[3] == (21, 4)  # the dash counts as a word, as str.split() does


def test_the_quick_head_check_names_the_revision_alembic_would_upgrade_to(engine: Engine) -> None:
    from alembic.script import ScriptDirectory

    from storage.migrate import alembic_config, current_revision, head_revision

    assert head_revision() == ScriptDirectory.from_config(alembic_config(engine)).get_current_head()
    assert current_revision(engine) == head_revision()  # the fixture's database is migrated
    assert current_revision(get_engine("sqlite://")) is None


def test_a_database_written_by_a_newer_version_is_refused_with_a_message_and_left_alone(
    sqlite_engine: Engine, capsys: pytest.CaptureFixture[str]
) -> None:
    """An older install pointed at a newer version's database: Alembic alone stops with a traceback about a
    missing revision; we name the revision, say what it means and what to do, and change nothing."""
    from sqlalchemy import text

    from reviewer_app.cli.main import main
    from reviewer_app.errors import DatabaseVersionError
    from storage.migrate import current_revision, head_revision, migrate

    future = f"{int(head_revision()) + 1:04d}"
    with sqlite_engine.begin() as conn:
        conn.execute(text("UPDATE alembic_version SET version_num = :v"), {"v": future})
    with pytest.raises(DatabaseVersionError) as caught:
        migrate(sqlite_engine)
    message = str(caught.value)
    assert f"schema revision {future}" in message and f"up to {head_revision()}" in message
    assert "BLIND_REVIEW_DATABASE_URL" in message
    assert current_revision(sqlite_engine) == future  # nothing was touched

    assert main(["list-batches"]) != 0
    err = capsys.readouterr().err
    assert f"schema revision {future}" in err and "Traceback" not in err
