"""What every command group of the CLI shares: the one way a command opens the database.

Imported by ``cli.main`` and by each command module, never the other way round, so the command modules and
``main`` (which registers them) form no circle."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sqlalchemy.engine import Engine


def open_engine() -> Engine:
    """The configured database (``BLIND_REVIEW_DATABASE_URL``), migrated to the current schema.

    Imports lazily: ``blind-review --help`` must not pay for SQLAlchemy and the migrations."""
    from reviewer_app.settings import database_url
    from storage.engine import get_engine
    from storage.migrate import migrate

    engine = get_engine(database_url())
    migrate(engine)
    return engine
