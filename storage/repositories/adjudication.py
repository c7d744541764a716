"""Queries behind adjudication (``reviewer_app.adjudication``): rulings, and what the panel answered on an item.

The panel's answers come with the assignment's ``swapped`` flag (the side a reviewer saw) and comment, keyed by
reviewer id only: the service turns them into anonymous "Reviewer 1, 2, ..." for the adjudicator's page.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import pandas as pd
from sqlalchemy import func
from sqlalchemy import select as sa_select
from sqlalchemy.orm import aliased
from sqlmodel import Session, col, select

from reviewer_app.domain.enums import AssignmentStatus
from storage.models import Assignment, Batch, Item, Model, Output, Rating, Reviewer, Ruling, utcnow

__all__ = [
    "PanelAnswer",
    "batches_naming_adjudicators",
    "panel_answers",
    "rated_items",
    "ratings_revision",
    "ruled_keys",
    "ruling_for",
    "rulings_frame",
    "save_ruling",
]

_RULING_COLUMNS = ["item_id", "dimension", "value", "reason", "adjudicator", "updated_at"]


@dataclass(frozen=True)
class PanelAnswer:
    """One reviewer's answer on one question of an item, as they saw it (``swapped``: pairwise sides)."""

    reviewer_id: int
    dimension: str
    value: str
    swapped: bool
    comment: str | None


def rulings_frame(session: Session, batch_id: int) -> pd.DataFrame:
    """A batch's rulings: ``item_id``, ``dimension``, ``value``, ``reason``, ``adjudicator`` (name) and
    ``updated_at``, in item order. A pairwise ruling's "a"/"b" is in the order of ``ratings_frame``'s pairs (the
    models' names, :func:`~storage.repositories.results.frames.name_ordered`), not the item's stored order."""
    out_a, out_b = aliased(Output), aliased(Output)
    model_a, model_b = aliased(Model), aliased(Model)
    rows = session.execute(  # SQLAlchemy's select: sqlmodel's is typed for four columns at most
        sa_select(
            col(Ruling.item_id),
            col(Ruling.dimension),
            col(Ruling.value),
            col(Ruling.reason),
            col(Reviewer.name),
            col(Ruling.updated_at),
            col(model_a.name),
            col(model_b.name),
        )
        .join(Reviewer, col(Reviewer.id) == col(Ruling.adjudicator_id))
        .join(Item, col(Item.id) == col(Ruling.item_id))
        .join(out_a, col(out_a.id) == col(Item.output_a_id))
        .join(model_a, col(model_a.id) == col(out_a.model_id))
        .outerjoin(out_b, col(out_b.id) == col(Item.output_b_id))
        .outerjoin(model_b, col(model_b.id) == col(out_b.model_id))
        .where(col(Ruling.batch_id) == batch_id)
        .order_by(col(Ruling.item_id), col(Ruling.dimension))
    ).all()
    turn = {"a": "b", "b": "a"}
    records = [
        (item, dim, turn.get(value, value) if second is not None and first > second else value, *rest)
        for item, dim, value, *rest, first, second in rows
    ]
    return pd.DataFrame(records, columns=_RULING_COLUMNS)


def ratings_revision(session: Session, batch_id: int) -> tuple[int, int | None, datetime | None]:
    """The number of a batch's ratings, the newest id and the latest change: what the disputes depend on (a new,
    revised or withdrawn answer changes it), for keeping them between page runs."""
    count, newest, changed = session.exec(
        select(func.count(), func.max(col(Rating.id)), func.max(col(Rating.updated_at))).where(
            col(Rating.batch_id) == batch_id
        )
    ).one()
    return int(count), newest, changed


def ruling_for(session: Session, item_id: int, dimension: str) -> tuple[Ruling, str] | None:
    """The ruling on an item's question and its adjudicator's name, or None."""
    row = session.exec(
        select(Ruling, Reviewer.name)
        .join(Reviewer, col(Reviewer.id) == col(Ruling.adjudicator_id))
        .where(col(Ruling.item_id) == item_id, col(Ruling.dimension) == dimension)
    ).first()
    return None if row is None else (row[0], str(row[1]))


def ruled_keys(session: Session, batch_id: int) -> set[tuple[int, str]]:
    """(item id, question) of a batch's rulings."""
    rows = session.exec(select(Ruling.item_id, Ruling.dimension).where(col(Ruling.batch_id) == batch_id)).all()
    return {(int(i), str(d)) for i, d in rows}


def save_ruling(
    session: Session, *, batch_id: int, item_id: int, dimension: str, value: str, reason: str, adjudicator_id: int
) -> Ruling:
    """Record a ruling, replacing an earlier one on the same item and question. Caller commits."""
    found = ruling_for(session, item_id, dimension)
    row = None if found is None else found[0]
    now = utcnow()
    if row is None:
        row = Ruling(batch_id=batch_id, item_id=item_id, dimension=dimension, created_at=now, value="", reason="",
                     adjudicator_id=adjudicator_id)  # fmt: skip
    row.value, row.reason, row.adjudicator_id, row.updated_at = value, reason, adjudicator_id, now
    session.add(row)
    session.flush()
    return row


def panel_answers(session: Session, item_id: int, dimension: str) -> list[PanelAnswer]:
    """The submitted first-showing answers on ``item_id``'s question ``dimension``, in rating id order."""
    rows = session.exec(
        select(Rating.reviewer_id, Rating.value, Assignment.swapped, Assignment.comment)
        .join(Assignment, col(Assignment.id) == col(Rating.assignment_id))
        .where(
            col(Rating.item_id) == item_id,
            col(Rating.dimension) == dimension,
            col(Assignment.occurrence) == 0,
            col(Assignment.status) == AssignmentStatus.DONE,
        )
        .order_by(col(Rating.id))
    ).all()
    return [PanelAnswer(int(r), dimension, str(v), bool(s), c) for r, v, s, c in rows]


def rated_items(session: Session, batch_id: int, reviewer_id: int) -> set[int]:
    """The items of a batch ``reviewer_id`` was given (any showing, any status): an adjudicator does not rule on
    a disagreement they are part of."""
    return set(
        session.exec(
            select(Assignment.item_id).where(
                col(Assignment.batch_id) == batch_id, col(Assignment.reviewer_id) == reviewer_id
            )
        ).all()
    )


def batches_naming_adjudicators(session: Session) -> list[Batch]:
    """The batches not archived whose rubric has an ``[adjudication]`` table (the rubric's JSON leaves the table
    out when it is the default), for finding the batches a senior reviewer adjudicates: usually none, found by a
    scan of the small batch table without parsing every rubric."""
    return list(
        session.exec(
            select(Batch).where(col(Batch.archived_at).is_(None), col(Batch.rubric_json).contains('"adjudication"'))
        )
    )
