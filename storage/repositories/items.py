"""Lookups and writes for importing ratings collected elsewhere."""

from __future__ import annotations

from sqlmodel import Session, col, select

from storage.models import Item, Sample
from storage.repositories.query import ItemModels, pk


def item_index(session: Session, batch_id: int) -> dict[tuple[str, str, str | None], int]:
    """(sample key, model a, model b or None) -> item id, over first outputs (repeat 0) and canonical pairs."""
    io = ItemModels()
    stmt = io.join(
        select(col(Sample.key), col(io.model_a.name), col(io.model_b.name), pk(Item.id))
        .select_from(Item)
        .join(Sample, col(Sample.id) == col(Item.sample_id))
    ).where(col(Item.batch_id) == batch_id, col(io.output_a.repeat) == 0)
    return {(k, a, b): i for k, a, b, i in session.exec(stmt)}
