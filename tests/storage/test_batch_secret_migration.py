"""Revision 0013 (the batch secret, issue 33) on a database with batches and assignments in it, on SQLite and
PostgreSQL: every batch gets a secret of its own, its items' pool keys are drawn from it, and what reviewers
have already seen (labels, sides, queue positions) stays as it was."""

from __future__ import annotations

import re
from pathlib import Path

from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import inspect, text
from sqlalchemy.engine import Engine
from sqlmodel import SQLModel

from reviewer_app.batches.loading import load_batch
from reviewer_app.domain.keyed_random import secret_bytes
from reviewer_app.people.people import add_reviewer
from reviewer_app.review.assignment import assign
from storage.migrate import alembic_config, current_revision
from storage.models import pool_key
from tests.helpers import PAIRWISE_RUBRIC, RATING_RUBRIC, make_records, write_batch, write_rubric


def test_0013_gives_every_batch_its_own_secret_and_keeps_what_was_shown(engine: Engine, tmp_path: Path) -> None:
    for name in ("ann", "bob"):
        add_reviewer(engine, name)
    load_batch(engine, [write_batch(tmp_path / "r", make_records(6, ["m1", "m2"]))],
               write_rubric(tmp_path / "r", RATING_RUBRIC.format(overlap=2)), name="rated", open_now=True)  # fmt: skip
    load_batch(engine, [write_batch(tmp_path / "p", make_records(6, ["m1", "m2", "m3"]))],
               write_rubric(tmp_path / "p", PAIRWISE_RUBRIC.format(overlap=2)), name="paired",
               open_now=True)  # fmt: skip
    assign(engine, "rated")
    assign(engine, "paired")
    shown_sql = text("SELECT id, label, swapped, position FROM assignment ORDER BY id")
    with engine.connect() as conn:
        shown = conn.execute(shown_sql).all()
    cfg = alembic_config(engine)
    engine.dispose()
    command.downgrade(cfg, "0012")
    assert current_revision(engine) == "0012"
    assert "secret" not in {c["name"] for c in inspect(engine).get_columns("batch")}
    command.upgrade(cfg, "head")
    with engine.connect() as conn:
        assert compare_metadata(MigrationContext.configure(conn), SQLModel.metadata) == []
        secrets = dict(conn.execute(text("SELECT id, secret FROM batch")).all())
        items = conn.execute(text("SELECT id, batch_id, pool_key FROM item")).all()
        assert conn.execute(shown_sql).all() == shown  # labels, sides and positions as reviewers saw them
    assert len(secrets) == 2 and len(set(secrets.values())) == 2
    assert all(re.fullmatch(r"[0-9a-f]{64}", s) for s in secrets.values())
    assert len(items) == 12 + 18
    assert all(key == pool_key(secret_bytes(secrets[batch]), item) for item, batch, key in items)
