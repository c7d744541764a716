"""Alembic environment: always run programmatically through ``storage.migrate.migrate``."""

from __future__ import annotations

from alembic import context
from sqlmodel import SQLModel

import storage.models  # noqa: F401  (registers the tables on SQLModel.metadata)
from storage.migrate import render_item

config = context.config
connection = config.attributes.get("connection")
owned = connection is None  # opened here (alembic's own command line, tests' up and down): closed here too
if connection is None:
    from storage.engine import get_engine

    connection = get_engine(config.get_main_option("sqlalchemy.url") or "").connect()

try:
    context.configure(
        connection=connection,
        target_metadata=SQLModel.metadata,
        render_as_batch=connection.dialect.name == "sqlite",
        compare_type=True,
        render_item=render_item,
    )
    with context.begin_transaction():
        context.run_migrations()
finally:
    if owned:
        connection.close()  # else it stays checked out until the collector finds it, after its pool is gone
