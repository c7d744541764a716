"""The ratings a comparison of two batches reads (unblinded: leads only).

:func:`compare_ratings_frame` gives what ``frames.ratings_frame(..., python_strings=True)`` gives, less the
columns a comparison never reads (time spent, whether the item was shown, the rater's role), through a read of
its own. Issue 10's target (a comparison of 2 x 100,000 outputs x 3 ratings in under 5 s) cannot afford the
report reader's general path twice: its item lookup builds an object array per item column and places it
with Python objects (about 0.5 s of its 1.7 s per 300,000 ratings). Here every item column is an integer
(SQL gives -1 for a missing second output, so no NULL reaches Python) and is placed by one ``searchsorted``.
``tests/storage/test_compare_ratings_read.py`` holds the two readers equal, frame for frame, on both
dialects. (The outputs' texts, which drift needs, come with the outputs: ``frames.outputs_frame(...,
with_text=True)``.)
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from sqlalchemy import Select, select
from sqlalchemy.orm import aliased
from sqlmodel import Session, col

from storage.models import Assignment, Item, Output, Rating, Reviewer
from storage.repositories.frames import (
    RATING_COLUMNS,
    _empty_ratings,
    _lookup,
    _names,
    _nullable_ints,
    _row_names,
    _rows,
    _Texts,
)

COMPARE_RATING_COLUMNS = [c for c in RATING_COLUMNS if c not in ("seconds_spent", "rater_role", "shown")]


def compare_ratings_frame(session: Session, batch_id: int) -> pd.DataFrame:
    """``frames.ratings_frame(session, batch_id, python_strings=True)`` without ``seconds_spent``,
    ``rater_role`` and ``shown`` (:data:`COMPARE_RATING_COLUMNS`), in rating id order. Text columns are object
    columns of shared Python strings, as the aggregation works on them."""
    ratings = (
        select(  # SQLAlchemy's select: sqlmodel's is typed for four columns at most
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
    people = {k: v[0] for k, v in _lookup(session, select(col(Reviewer.id), col(Reviewer.name))).items()}
    sample_of = items["sample"]
    b_missing = items["model_b"] < 0
    b_names = np.full(len(item_of), None, dtype=object)
    if not b_missing.all():
        b_names[~b_missing] = _names(items["model_b"][~b_missing], models)
    repeat_b = items["repeat_b"].astype(object)
    repeat_b[b_missing] = None
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


_ITEM_FIELDS = ("gold", "sample", "model_a", "repeat_a", "model_b", "repeat_b", "anchor")


def _item_columns(session: Session, batch_id: int, wanted: np.ndarray) -> dict[str, np.ndarray]:
    """Per entry of ``wanted`` (item ids), its item's columns (:data:`_ITEM_FIELDS`) as int64 arrays:
    ``model_b``/``repeat_b`` are -1 where the item has no second output (rating mode).

    The second outputs come from a query of their own, over the items that have one: an outer join of every
    item to them made a rating batch's item read of 100,000 items 0.25 s instead of 0.20 s, for no row."""
    output_a, output_b = aliased(Output, name="output_a"), aliased(Output, name="output_b")
    first = (
        select(
            col(Item.id),
            col(Item.is_gold),
            col(Item.sample_id),
            col(output_a.model_id),
            col(output_a.repeat),
            col(Item.is_anchor),
        )
        .join(output_a, col(output_a.id) == col(Item.output_a_id))
        .where(col(Item.batch_id) == batch_id)
    )
    second = (
        select(col(Item.id), col(output_b.model_id), col(output_b.repeat))
        .join(output_b, col(output_b.id) == col(Item.output_b_id))
        .where(col(Item.batch_id) == batch_id)
    )
    ids, gold, sample, model_a, repeat_a, anchor = _int_columns(session, first, 6)
    order = np.argsort(ids, kind="stable")
    at = order[np.searchsorted(ids[order], wanted)]
    model_b, repeat_b = np.full(len(ids), -1, dtype=np.int64), np.full(len(ids), -1, dtype=np.int64)
    pair_ids, pair_models, pair_repeats = _int_columns(session, second, 3)
    if len(pair_ids):
        place = order[np.searchsorted(ids[order], pair_ids)]
        model_b[place], repeat_b[place] = pair_models, pair_repeats
    table = (gold, sample, model_a, repeat_a, model_b, repeat_b, anchor)
    return {name: column[at] for name, column in zip(_ITEM_FIELDS, table, strict=True)}


def _int_columns(session: Session, stmt: Select[*tuple[Any, ...]], width: int) -> list[np.ndarray]:
    """The ``width`` columns of ``stmt``'s rows as int64 arrays (booleans: 0/1 on SQLite, bool on PostgreSQL)."""
    parts: list[list[np.ndarray]] = [[] for _ in range(width)]
    for block in _rows(session, stmt):
        for k, values in enumerate(zip(*block, strict=True)):
            parts[k].append(np.asarray(values, dtype=np.int64))
    return [np.concatenate(p) if p else np.zeros(0, dtype=np.int64) for p in parts]


def _strings(values: np.ndarray) -> Any:
    """An object column of the shared Python strings (or Nones) as they are."""
    return pd.Series(values, dtype=object, copy=False)
