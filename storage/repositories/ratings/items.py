"""Which item a ratings file's row names: the join of an item to its models' names, and the index an import
looks rows up in. Unblinded (model names): imports, leads and tests only.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, TypeVar

from sqlalchemy import Select
from sqlalchemy.orm import aliased
from sqlmodel import Session, col, select

from storage.models import Item, Model, Output, Sample
from storage.repositories.query import pk

_Select = TypeVar("_Select", bound=Select[*tuple[Any, ...]])


@dataclass(frozen=True)
class ItemModels:
    """An item's two outputs with their model names, as aliases to select from after :meth:`join`.

    ``output_b`` and ``model_b`` are outer-joined: their columns are None for a rating-mode item.
    """

    output_a: type[Output] = field(default_factory=lambda: aliased(Output, name="output_a"))
    output_b: type[Output] = field(default_factory=lambda: aliased(Output, name="output_b"))
    model_a: type[Model] = field(default_factory=lambda: aliased(Model, name="model_a"))
    model_b: type[Model] = field(default_factory=lambda: aliased(Model, name="model_b"))

    def join(self, stmt: _Select) -> _Select:
        """``stmt`` joined to the outputs and models of its ``Item`` (which must already be in its FROM)."""
        return (
            stmt.join(self.output_a, col(self.output_a.id) == col(Item.output_a_id))
            .join(self.model_a, col(self.model_a.id) == col(self.output_a.model_id))
            .outerjoin(self.output_b, col(self.output_b.id) == col(Item.output_b_id))
            .outerjoin(self.model_b, col(self.model_b.id) == col(self.output_b.model_id))
        )


def item_index(session: Session, batch_id: int) -> dict[tuple[str, str, str | None], int]:
    """(sample key, model a, model b or None) -> item id, over first outputs (repeat 0) and canonical pairs."""
    io = ItemModels()
    stmt = io.join(
        select(col(Sample.key), col(io.model_a.name), col(io.model_b.name), pk(Item.id))
        .select_from(Item)
        .join(Sample, col(Sample.id) == col(Item.sample_id))
    ).where(col(Item.batch_id) == batch_id, col(io.output_a.repeat) == 0)
    return {(k, a, b): i for k, a, b, i in session.exec(stmt)}
