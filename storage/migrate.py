"""Schema creation and upgrades through Alembic, so a deployed database moves forward with the code."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from sqlalchemy import inspect, text
from sqlalchemy.engine import Engine

from reviewer_app.errors import DatabaseVersionError
from storage.models import EnumString

if TYPE_CHECKING:
    from alembic.autogenerate.api import AutogenContext
    from alembic.config import Config

log = logging.getLogger(__name__)

MIGRATIONS = Path(__file__).parent / "migrations"


def alembic_config(engine: Engine) -> Config:
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    cfg.set_main_option("sqlalchemy.url", engine.url.render_as_string(hide_password=False))
    return cfg


def render_item(type_: str, obj: Any, autogen_context: AutogenContext) -> str | Literal[False]:
    """Autogenerate hook: write an enum column into a new revision as the plain string it is in the database
    (``EnumString`` would otherwise be rendered without its enum)."""
    if type_ == "type" and isinstance(obj, EnumString):
        return "sqlmodel.sql.sqltypes.AutoString()"
    return False


def known_revisions() -> set[str]:
    """Every revision this code has: revisions are numbered like their files (``0004_….py`` is ``0004``)."""
    return {path.name.split("_", 1)[0] for path in (MIGRATIONS / "versions").glob("[0-9][0-9][0-9][0-9]_*.py")}


def head_revision() -> str:
    """The newest revision."""
    return max(known_revisions())


def current_revision(engine: Engine) -> str | None:
    """The database's revision, None for a database Alembic has not touched yet."""
    with engine.connect() as conn:
        if not inspect(conn).has_table("alembic_version"):
            return None
        value = conn.execute(text("SELECT version_num FROM alembic_version")).scalar()
        return None if value is None else str(value)


def migrate(engine: Engine) -> None:
    """Bring the database to the newest schema; a no-op when it is already there.

    An up-to-date database is recognised by one query, without loading Alembic (half a second of imports
    on every command otherwise). A database at a revision this code does not have was written by a newer
    version of the tool: Alembic would stop with a traceback about a missing revision, so we say what it
    means instead (DatabaseVersionError) and touch nothing."""
    current, head = current_revision(engine), head_revision()
    if current == head:
        return
    if current is not None and current not in known_revisions():
        where = engine.url.render_as_string(hide_password=True)
        raise DatabaseVersionError(
            f"The database {where} has schema revision {current}, which this version of Blind Review does not "
            f"know (it knows revisions up to {head}): a newer version wrote it. Use that version or a later one "
            "with this database, or set BLIND_REVIEW_DATABASE_URL to another database."
        )
    from alembic import command

    log.debug("migrating the %s database to the newest schema", engine.dialect.name)
    cfg = alembic_config(engine)
    with engine.begin() as conn:
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, "head")
