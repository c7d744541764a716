"""Revision 0018 (output style counts): a load stores each output's Markdown headers, list items, bold spans and
code blocks as ``domain.style`` counts them; going down and up again counts the outputs already stored the same
way (the backfill), on SQLite and PostgreSQL; and the report's outputs frame reads them."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from sqlalchemy import select, text
from sqlalchemy.engine import Engine
from sqlmodel import col

from reviewer_app.batches.loading import load_batch
from reviewer_app.domain.style import style_counts
from storage.engine import read_session
from storage.migrate import alembic_config, current_revision
from storage.models import Output
from storage.repositories.results.outputs import STYLE_COLUMNS, outputs_frame
from tests.helpers import RATING_RUBRIC, write_batch, write_rubric

TEXTS = [
    "# Plan\n\n1. First **step**\n2. Second\n\n```sh\nmake test\n```\n",
    "Plain prose with no marks at all.",
    "## A\n- x\n- y\n- z\n__bold__ and **more** and **again**\n~~~\ncode\n~~~\n```\nunclosed",
]


def _stored(engine: Engine) -> list[tuple[int, int, int, int]]:
    with read_session(engine) as session:
        rows = session.exec(
            select(Output.n_headers, Output.n_list_items, Output.n_bold, Output.n_code_blocks).order_by(col(Output.id))
        ).all()
    return [tuple(r) for r in rows]


def test_loads_count_style_and_the_migration_counts_stored_outputs_alike(engine: Engine, tmp_path: Path) -> None:
    records = [
        {"sample_id": f"s{i}", "scenario": "qa", "prompt": "Q?", "model": m, "output": TEXTS[(i + k) % 3]}
        for i in range(3)
        for k, m in enumerate(("a", "b"))
    ]
    load_batch(engine, [write_batch(tmp_path, records)], write_rubric(tmp_path, RATING_RUBRIC.format(overlap=1)),
               name="styled")  # fmt: skip
    expected = [tuple(style_counts(r["output"])) for r in records]
    assert _stored(engine) == expected
    assert expected[0] == (1, 2, 1, 1) and expected[1] == (0, 0, 0, 0)

    cfg = alembic_config(engine)
    engine.dispose()
    command.downgrade(cfg, "0017")
    assert current_revision(engine) == "0017"
    with engine.connect() as conn:
        names = set(conn.execute(text("SELECT * FROM output LIMIT 0")).keys())
    assert "n_headers" not in names
    command.upgrade(cfg, "head")
    engine.dispose()
    assert _stored(engine) == expected  # counted again, by the migration, the same way

    with read_session(engine) as session:
        batch_id = int(session.exec(select(Output.batch_id)).first()[0])
        frame = outputs_frame(session, batch_id)
    assert list(frame[list(STYLE_COLUMNS)].itertuples(index=False, name=None)) == expected
