"""Schema creation and upgrades through Alembic, so a deployed database moves forward with the code."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, Literal

from alembic import command
from alembic.autogenerate.api import AutogenContext
from alembic.config import Config
from sqlalchemy.engine import Engine

from storage.models import EnumString

log = logging.getLogger(__name__)

MIGRATIONS = Path(__file__).parent / "migrations"


def alembic_config(engine: Engine) -> Config:
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


def migrate(engine: Engine) -> None:
    """Bring the database to the newest schema; a no-op when it is already there."""
    log.debug("migrating the %s database to the newest schema", engine.dialect.name)
    cfg = alembic_config(engine)
    with engine.begin() as conn:
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, "head")
