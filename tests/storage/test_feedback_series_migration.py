"""Revision 0011 (feedback events point to a series) goes down and up again with feedback stored, on SQLite
(the event table is copied to drop its name columns) and PostgreSQL: every event keeps its model, scenario
(none stays none), scale, time and numbers, and the monitor's frame reads the same after the round trip."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import inspect, text
from sqlalchemy.engine import Engine
from sqlmodel import SQLModel

from reviewer_app.production.feedback import import_feedback
from storage.engine import read_session
from storage.migrate import alembic_config, current_revision
from storage.repositories.production import feedback_frame

EVENTS = [
    {"model": "m1", "timestamp": 1772445600 + k, "feedback": (-1) ** k, "latency_ms": 100.5 + k,
     "scenario": ["qa", "code", None][k % 3]}
    for k in range(9)
] + [{"model": "m2, the \"new\" one", "timestamp": 1772445700, "feedback": 1, "ttft_ms": 12}]  # fmt: skip


def frame(engine: Engine) -> pd.DataFrame:
    with read_session(engine) as session:
        return feedback_frame(session).sort_values("ts_ms", kind="stable").reset_index(drop=True)


def test_0011_goes_down_and_up_with_feedback_stored(engine: Engine, tmp_path: Path) -> None:
    thumbs = tmp_path / "thumbs.jsonl"
    thumbs.write_text("".join(json.dumps(e) + "\n" for e in EVENTS), encoding="utf-8")
    scaled = tmp_path / "scaled.jsonl"
    scaled.write_text(json.dumps({"model": "m1", "timestamp": 1772445800, "feedback": 4}) + "\n", encoding="utf-8")
    import_feedback(engine, thumbs)
    import_feedback(engine, scaled, scale=(1.0, 5.0))
    before = frame(engine)
    assert len(before) == 11 and before["scenario"].isna().sum() == 5

    cfg = alembic_config(engine)
    engine.dispose()
    command.downgrade(cfg, "0010")
    assert current_revision(engine) == "0010"
    assert "feedback_series" not in inspect(engine).get_table_names()
    with engine.connect() as conn:
        rows = conn.execute(
            text("SELECT model, scenario, scale_min, scale_max, feedback FROM feedback_event ORDER BY ts_ms, id")
        ).all()
    assert [tuple(r) for r in rows] == [
        (m, None if isinstance(s, float) else s, lo, hi, fb)
        for m, s, lo, hi, fb in before[["model", "scenario", "scale_min", "scale_max", "feedback"]].itertuples(
            index=False
        )
    ]

    command.upgrade(cfg, "head")
    with engine.connect() as conn:
        assert compare_metadata(MigrationContext.configure(conn), SQLModel.metadata) == []
        assert conn.execute(text("SELECT count(*) FROM feedback_series")).scalar() == 5  # 3 + 1 + the 1-5 scale
    pd.testing.assert_frame_equal(frame(engine), before)
