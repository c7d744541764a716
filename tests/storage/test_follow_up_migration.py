"""Revision 0008 (follow-up batches) goes down and up again on a database with a follow-up in it, on SQLite
(plain ADD/DROP COLUMN: batch mode would copy ``batch``, which every other table points to) and PostgreSQL."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import inspect, text
from sqlalchemy.engine import Engine
from sqlmodel import SQLModel

from reviewer_app.batches.loading import load_batch
from storage.migrate import alembic_config, current_revision
from tests.helpers import RATING_RUBRIC, make_records, write_batch, write_rubric


def test_0008_goes_down_and_up_with_a_follow_up_loaded(engine: Engine, tmp_path: Path) -> None:
    records = make_records(4, ["m1", "m2"])
    load_batch(engine, [write_batch(tmp_path, records)], write_rubric(tmp_path, RATING_RUBRIC.format(overlap=1)),
               name="v1", open_now=True)  # fmt: skip
    new = [{**r, "model": r["model"] + "-new"} for r in records]
    load_batch(
        engine, [write_batch(tmp_path / "b", new)], None, name="v2", follow_up="v1", anchor_share=0.5, open_now=True
    )
    cfg = alembic_config(engine)
    engine.dispose()
    command.downgrade(cfg, "0007")
    assert current_revision(engine) == "0007"
    columns = {c["name"] for c in inspect(engine).get_columns("batch")}
    assert not columns & {"baseline_batch_id", "anchor_share", "generation_json"}
    assert "is_anchor" not in {c["name"] for c in inspect(engine).get_columns("item")}
    with engine.connect() as conn:
        assert conn.execute(text("SELECT count(*) FROM item")).scalar() == 8 + 8 + 4  # rows kept
    command.upgrade(cfg, "head")
    with engine.connect() as conn:
        assert compare_metadata(MigrationContext.configure(conn), SQLModel.metadata) == []
        assert conn.execute(text("SELECT count(*) FROM item WHERE is_anchor")).scalar() == 0  # existing: false
