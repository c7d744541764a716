"""The ratings a comparison of two batches reads, and the batches a model's history reads (unblinded: leads
and the command line only).

:func:`compare_ratings_frame` gives what ``frames.ratings_frame(..., python_strings=True)`` gives, less the
columns a comparison never reads (time spent, whether the item was shown, the rater's role), through a read of
its own: its ratings query leaves those columns out. Both readers
place the items the same way (``frames._item_columns``: every item column an integer, placed by one
``searchsorted``), which once only this reader did (the report reader's object arrays per item column cost
about 0.5 s of its 1.7 s per 300,000 ratings).
``tests/storage/test_compare_ratings_read.py`` holds the two readers equal, frame for frame, on both
dialects. (The outputs' texts, which drift needs, come with the outputs: ``outputs.outputs_frame(...,
with_text=True)``; ``frames`` and ``outputs`` are modules of :mod:`storage.repositories.results`.)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from sqlalchemy import select as sa_select
from sqlmodel import Session, col, select

from storage.models import Assignment, Batch, Model, Output, Rating, Reviewer
from storage.repositories.results.frames import (
    RATING_COLUMNS,
    _empty_ratings,
    _item_columns,
    _lookup,
    _names,
    _nullable_ints,
    _row_names,
    _rows,
    _second_outputs,
    _Texts,
    name_ordered,
)

COMPARE_RATING_COLUMNS = [c for c in RATING_COLUMNS if c not in ("seconds_spent", "rater_role", "shown")]


def compare_ratings_frame(session: Session, batch_id: int) -> pd.DataFrame:
    """``results.frames.ratings_frame(session, batch_id, python_strings=True)`` without ``seconds_spent``,
    ``rater_role`` and ``shown`` (:data:`COMPARE_RATING_COLUMNS`), in rating id order. Text columns are object
    columns of shared Python strings, as the aggregation works on them."""
    ratings = (
        sa_select(  # SQLAlchemy's select: sqlmodel's is typed for four columns at most
            col(Rating.item_id),
            col(Rating.reviewer_id),
            col(Assignment.occurrence),
            col(Assignment.position),
            col(Assignment.swapped),
            col(Rating.dimension),
            col(Rating.value),
        )
        .join(Assignment, col(Assignment.id) == col(Rating.assignment_id))
        .where(col(Rating.batch_id) == batch_id)
        .order_by(col(Rating.id))
    )
    ints: list[list[np.ndarray]] = [[], [], [], [], []]  # item, reviewer, occurrence, position, swapped
    dimension, value = _Texts(), _Texts()
    for block in _rows(session, ratings):
        cols = list(zip(*block, strict=True))
        for k in range(5):
            ints[k].append(np.asarray(cols[k], dtype=np.int64))  # booleans: 0/1 on SQLite, bool on PostgreSQL
        dimension.add(cols[5])
        value.add(cols[6])
    if not ints[0]:
        return _empty_ratings()[COMPARE_RATING_COLUMNS]
    item_of, reviewer_of, occurrence, position, swapped = (np.concatenate(v) for v in ints)
    items = _item_columns(session, batch_id, item_of)
    keys, scenarios, models = _row_names(session, batch_id)
    swapped = swapped.astype(bool) ^ name_ordered(items, models)
    people = {k: v[0] for k, v in _lookup(session, sa_select(col(Reviewer.id), col(Reviewer.name))).items()}
    sample_of = items["sample"]
    b_names, repeat_b = _second_outputs(items, models)
    return pd.DataFrame(
        {
            "scenario": _strings(_names(sample_of, scenarios)),
            "sample_id": _strings(_names(sample_of, keys)),
            "item_id": item_of,
            "is_gold": items["gold"].astype(bool),
            "reviewer": _strings(_names(reviewer_of, people)),
            "occurrence": occurrence,
            "position": position,
            "swapped": swapped.astype(bool),
            "dimension": _strings(dimension.objects()),
            "value": _strings(value.objects()),
            "model_a": _strings(_names(items["model_a"], models)),
            "model_b": _strings(b_names),
            "repeat_a": items["repeat_a"],
            "repeat_b": _nullable_ints(repeat_b),
            "is_anchor": items["anchor"].astype(bool),
        },
        columns=COMPARE_RATING_COLUMNS,
    )


def _strings(values: np.ndarray) -> Any:
    """An object column of the shared Python strings (or Nones) as they are."""
    return pd.Series(values, dtype=object, copy=False)


# A model's history: the batches a model (under any of its names) has outputs in.


def batches_with_models(session: Session, names: Sequence[str]) -> list[tuple[Batch, list[str]]]:
    """The batches (not archived) with outputs of their own under any of ``names``, oldest load first, each
    with the names it has outputs under (sorted). A follow-up's anchor items show the baseline's outputs and
    are not its own, so they do not put a batch here."""
    if not names:
        return []
    stmt = (
        select(col(Output.batch_id), col(Model.name))
        .join(Model, col(Model.id) == col(Output.model_id))
        .where(col(Model.name).in_(list(names)))
        .distinct()
    )
    found: dict[int, set[str]] = {}
    for batch_id, name in session.exec(stmt):
        found.setdefault(int(batch_id), set()).add(str(name))
    if not found:
        return []
    batches = session.exec(
        select(Batch)
        .where(col(Batch.id).in_(list(found)), col(Batch.archived_at).is_(None))
        .order_by(col(Batch.created_at), col(Batch.id))
    )
    return [(b, sorted(found[int(b.id or 0)])) for b in batches]


def models_with_outputs(session: Session) -> list[str]:
    """The names of the models with outputs in some batch that is not archived, sorted."""
    stmt = (
        select(col(Model.name))
        .join(Output, col(Output.model_id) == col(Model.id))
        .join(Batch, col(Batch.id) == col(Output.batch_id))
        .where(col(Batch.archived_at).is_(None))
        .distinct()
        .order_by(col(Model.name))
    )
    return [str(n) for n in session.exec(stmt)]
