"""What a reviewer opens and answers: an item's content (the caller decides what of it a reviewer sees), the
scenario a submit picks its dimensions by, and one assignment's ratings: read, written (the dialect-specific
upsert lives here and nowhere else) and withdrawn. Blind: no model's name.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import delete
from sqlalchemy import select as sa_select
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.orm import aliased
from sqlmodel import Session, col, select

from storage.models import Item, Output, Rating, Sample, Scenario
from storage.repositories.query import execute_wide


def upsert_ratings(session: Session, rows: Sequence[dict[str, Any]], now: datetime) -> None:
    """Insert or update (assignment, dimension) ratings: a second submit is an update, never a duplicate."""
    if not rows:
        return
    dialect = session.get_bind().dialect.name
    insert_fn = pg_insert if dialect == "postgresql" else sqlite_insert
    values = [{**r, "created_at": now, "updated_at": now} for r in rows]
    stmt = insert_fn(Rating).values(values)
    stmt = stmt.on_conflict_do_update(
        index_elements=["assignment_id", "dimension"],
        set_={"value": stmt.excluded.value, "updated_at": stmt.excluded.updated_at},
    )
    session.exec(stmt)


def delete_ratings(session: Session, assignment_id: int, keep: Sequence[str] = ()) -> None:
    stmt = delete(Rating).where(col(Rating.assignment_id) == assignment_id)
    if keep:
        stmt = stmt.where(col(Rating.dimension).not_in(list(keep)))
    session.exec(stmt)


def ratings_for(session: Session, assignment_id: int) -> dict[str, str]:
    stmt = select(col(Rating.dimension), col(Rating.value)).where(col(Rating.assignment_id) == assignment_id)
    return dict(session.exec(stmt).all())


def item_content(session: Session, item_id: int) -> tuple[Item, Sample, str, Output, Output | None]:
    """The item with its sample, scenario name and outputs (the caller decides what a reviewer may see).

    One query (one round trip) rather than a lookup per row: this runs on every item a reviewer opens."""
    out_a = aliased(Output)
    out_b = aliased(Output)
    stmt = (  # five entities: more than sqlmodel's typed select takes, hence SQLAlchemy's and execute_wide
        sa_select(Item, Sample, col(Scenario.name), out_a, out_b)
        .join(Sample, col(Sample.id) == col(Item.sample_id))
        .join(Scenario, col(Scenario.id) == col(Sample.scenario_id))
        .join(out_a, col(out_a.id) == col(Item.output_a_id))
        .outerjoin(out_b, col(out_b.id) == col(Item.output_b_id))
        .where(col(Item.id) == item_id)
    )
    item, sample, scenario, a, b = execute_wide(session, stmt).one()
    return item, sample, scenario, a, b


def item_scenario(session: Session, item_id: int) -> str:
    """The scenario name of an item (what a submit needs to pick the rubric's dimensions)."""
    stmt = (
        select(col(Scenario.name))
        .join(Sample, col(Sample.scenario_id) == col(Scenario.id))
        .join(Item, col(Item.sample_id) == col(Sample.id))
        .where(col(Item.id) == item_id)
    )
    return session.exec(stmt).one()
