"""Lookups and writes for importing ratings collected elsewhere."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import aliased
from sqlmodel import Session

from storage.models import Item, Model, Output, Sample


def item_index(session: Session, batch_id: int) -> dict[tuple[str, str, str | None], int]:
    """(sample key, model a, model b or None) -> item id, over first outputs (repeat 0) and canonical pairs."""
    out_a, out_b = aliased(Output), aliased(Output)
    model_a, model_b = aliased(Model), aliased(Model)
    stmt = (
        select(Sample.key, model_a.name, model_b.name, Item.id)
        .select_from(Item)
        .join(Sample, Sample.id == Item.sample_id)
        .join(out_a, out_a.id == Item.output_a_id)
        .join(model_a, model_a.id == out_a.model_id)
        .outerjoin(out_b, out_b.id == Item.output_b_id)
        .outerjoin(model_b, model_b.id == out_b.model_id)
        .where(Item.batch_id == batch_id, out_a.repeat == 0)
    )
    return {(k, a, b): int(i) for k, a, b, i in session.execute(stmt)}
