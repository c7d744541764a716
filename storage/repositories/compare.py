"""The ratings a comparison of two batches reads (unblinded: leads only).

:func:`compare_ratings_frame` is ``frames.ratings_frame`` less the columns a comparison never reads (time
spent, whether the item was shown, the rater's role): at 2 x 300,000 ratings every column read is time. (The
outputs' texts, which drift needs, come with the outputs: ``frames.outputs_frame(..., with_text=True)``.)
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from sqlalchemy import select
from sqlalchemy.orm import aliased
from sqlmodel import Session, col

from storage.models import Assignment, Item, Model, Output, Rating, Reviewer, Sample, Scenario
from storage.repositories.frames import (
    RATING_COLUMNS,
    _empty_ratings,
    _is_none,
    _lookup,
    _names,
    _nullable_ints,
    _rows,
    _table,
    _Texts,
)

COMPARE_RATING_COLUMNS = [c for c in RATING_COLUMNS if c not in ("seconds_spent", "rater_role", "shown")]


def compare_ratings_frame(session: Session, batch_id: int) -> pd.DataFrame:
    """``frames.ratings_frame(session, batch_id, python_strings=True)`` without ``seconds_spent``,
    ``rater_role`` and ``shown`` (:data:`COMPARE_RATING_COLUMNS`): the same rows in the same order (rating id),
    every other column equal (a test holds the two together). Text columns are object columns of shared
    Python strings, as the aggregation works on them."""
    ratings = (
        select(
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
    ints: list[list[np.ndarray]] = [[], [], [], []]
    swapped: list[np.ndarray] = []
    dimension, value = _Texts(), _Texts()
    for block in _rows(session, ratings):
        cols = list(zip(*block, strict=True))
        for k, part in enumerate(ints):
            part.append(np.asarray(cols[k], dtype=np.int64))
        swapped.append(np.asarray(cols[4], dtype=bool))
        dimension.add(cols[5])
        value.add(cols[6])
    if not swapped:
        return _empty_ratings()[COMPARE_RATING_COLUMNS]
    item_of, reviewer_of, occurrence, position = (np.concatenate(v) for v in ints)
    output_a, output_b = aliased(Output, name="output_a"), aliased(Output, name="output_b")
    items = _table(
        session,
        select(
            col(Item.id),
            col(Item.is_gold),
            col(Item.sample_id),
            col(output_a.model_id),
            col(output_a.repeat),
            col(output_b.model_id),
            col(output_b.repeat),
            col(Item.is_anchor),
        )
        .join(output_a, col(output_a.id) == col(Item.output_a_id))
        .outerjoin(output_b, col(output_b.id) == col(Item.output_b_id))
        .where(col(Item.batch_id) == batch_id),
        item_of,
    )
    samples = _lookup(
        session,
        select(col(Sample.id), col(Sample.key), col(Scenario.name))
        .join(Scenario, col(Scenario.id) == col(Sample.scenario_id))
        .where(col(Sample.batch_id) == batch_id),
    )
    models = {k: v[0] for k, v in _lookup(session, select(col(Model.id), col(Model.name))).items()}
    people = {k: v[0] for k, v in _lookup(session, select(col(Reviewer.id), col(Reviewer.name))).items()}
    sample_of = items[1].astype(np.int64)
    b_ids = items[4]
    b_missing = _is_none(b_ids)
    b_names = np.full(len(b_ids), None, dtype=object)
    if not b_missing.all():
        b_names[~b_missing] = _names(b_ids[~b_missing].astype(np.int64), models)

    def text(values: np.ndarray) -> pd.Series:
        return pd.Series(values, dtype=object, copy=False)

    return pd.DataFrame(
        {
            "scenario": text(_names(sample_of, {k: v[1] for k, v in samples.items()})),
            "sample_id": text(_names(sample_of, {k: v[0] for k, v in samples.items()})),
            "item_id": item_of,
            "is_gold": items[0].astype(bool),
            "reviewer": text(_names(reviewer_of, people)),
            "occurrence": occurrence,
            "position": position,
            "swapped": np.concatenate(swapped),
            "dimension": text(dimension.objects()),
            "value": text(value.objects()),
            "model_a": text(_names(items[2].astype(np.int64), models)),
            "model_b": text(b_names),
            "repeat_a": items[3].astype(np.int64),
            "repeat_b": _nullable_ints(items[5]),
            "is_anchor": items[6].astype(bool),
        },
        columns=COMPARE_RATING_COLUMNS,
    )
