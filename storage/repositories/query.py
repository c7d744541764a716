"""Query pieces the repositories share: typed primary keys, the item-to-model join, a typed run of wide selects.

Unblinded: :class:`ItemModels` reaches model names, so only queries for leads, admins and imports use it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, TypeVar, TypeVarTuple, cast

from sqlalchemy import Result, Select
from sqlalchemy import orm as sa_orm
from sqlalchemy.orm import Mapped, aliased
from sqlmodel import Session, col

from storage.models import Item, Model, Output

_Select = TypeVar("_Select", bound=Select[*tuple[Any, ...]])
_Ts = TypeVarTuple("_Ts")


def pk(column: int | None) -> Mapped[int]:
    """``col()`` of a primary key, typed as it comes back in a row: ``id: int | None`` is the SQLModel idiom
    for an object not yet flushed, but the column itself is never NULL."""
    return cast("Mapped[int]", col(column))


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


def execute_wide(session: Session, stmt: Select[*_Ts]) -> Result[*_Ts]:
    """Run a select of more columns than sqlmodel's typed ``select`` takes (four), keeping its row type.

    sqlmodel's ``Session.exec`` accepts only its own selects and its ``Session.execute`` is deprecated and
    untyped; SQLAlchemy's ``Session.execute`` underneath is the same call, typed by the statement.
    """
    return sa_orm.Session.execute(session, stmt)
