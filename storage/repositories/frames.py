"""Long-format data frames for aggregation and reports (unblinded: leads and admins only).

These are the one place where ratings meet model names. Columns are documented on each function and are
the contract between storage and ``reviewer_app.aggregation``.
"""

from __future__ import annotations

import json

import pandas as pd
from sqlalchemy import and_, select
from sqlalchemy.orm import aliased
from sqlmodel import Session

from storage.models import Assignment, Item, Model, Output, Rating, Reviewer, Sample, Scenario

RATING_COLUMNS = [
    "scenario",
    "sample_id",
    "item_id",
    "is_gold",
    "reviewer",
    "occurrence",
    "position",
    "swapped",
    "dimension",
    "value",
    "model_a",
    "model_b",
    "repeat_a",
    "repeat_b",
    "seconds_spent",
]


def ratings_frame(session: Session, batch_id: int) -> pd.DataFrame:
    """Every submitted rating of a batch, one row per (assignment, dimension).

    Columns: ``scenario`` (str), ``sample_id`` (the batch file's id, str), ``item_id`` (int), ``is_gold``
    (bool), ``reviewer`` (name), ``occurrence`` (0 first showing, 1 repeat), ``position`` (0-based place in
    the reviewer's queue), ``swapped`` (pairwise: model_b was shown on the left), ``dimension`` (str),
    ``value`` (str as stored: a Likert score "4", binary "0"/"1", a categorical choice, or for pairwise the
    side the reviewer picked as displayed: "left"/"right"/"tie"/"both_bad"), ``model_a`` (the rated model;
    in pairwise mode the canonical first model), ``model_b`` (pairwise: the canonical second model; else
    None), ``repeat_a``/``repeat_b`` (the outputs' repeat index), ``seconds_spent`` (float or NaN).
    """
    out_a, out_b = aliased(Output), aliased(Output)
    model_a, model_b = aliased(Model), aliased(Model)
    stmt = (
        select(
            Scenario.name,
            Sample.key,
            Item.id,
            Item.is_gold,
            Reviewer.name,
            Assignment.occurrence,
            Assignment.position,
            Assignment.swapped,
            Rating.dimension,
            Rating.value,
            model_a.name,
            model_b.name,
            out_a.repeat,
            out_b.repeat,
            Assignment.seconds_spent,
        )
        .select_from(Rating)
        .join(Assignment, Assignment.id == Rating.assignment_id)
        .join(Item, Item.id == Rating.item_id)
        .join(Sample, Sample.id == Item.sample_id)
        .join(Scenario, Scenario.id == Sample.scenario_id)
        .join(Reviewer, Reviewer.id == Rating.reviewer_id)
        .join(out_a, out_a.id == Item.output_a_id)
        .join(model_a, model_a.id == out_a.model_id)
        .outerjoin(out_b, out_b.id == Item.output_b_id)
        .outerjoin(model_b, and_(model_b.id == out_b.model_id))
        .where(Rating.batch_id == batch_id)
        .order_by(Rating.id)
    )
    rows = session.execute(stmt).all()
    frame = pd.DataFrame(rows, columns=RATING_COLUMNS)
    frame["is_gold"] = frame["is_gold"].astype(bool)
    frame["swapped"] = frame["swapped"].astype(bool)
    frame["seconds_spent"] = frame["seconds_spent"].astype(float)
    return frame


def outputs_frame(session: Session, batch_id: int) -> pd.DataFrame:
    """Every output of a batch with its metadata, for the "beside quality" views.

    Columns: ``scenario``, ``sample_id``, ``model``, ``repeat``, ``excluded`` (bool), ``leak_words`` (str),
    ``output_chars``, ``output_words``, and one column per metadata key seen in the batch (for example
    ``latency_ms``, ``ttft_ms``, ``output_tokens``), NaN where an output lacks it.
    """
    stmt = (
        select(
            Scenario.name,
            Sample.key,
            Model.name,
            Output.repeat,
            Output.excluded,
            Output.leak_words,
            Output.text,
            Output.metadata_json,
        )
        .select_from(Output)
        .join(Sample, Sample.id == Output.sample_id)
        .join(Scenario, Scenario.id == Sample.scenario_id)
        .join(Model, Model.id == Output.model_id)
        .where(Output.batch_id == batch_id)
        .order_by(Output.id)
    )
    records = []
    for scenario, key, model, repeat, excluded, leaks, text, meta in session.execute(stmt):
        rec: dict[str, object] = {
            "scenario": scenario,
            "sample_id": key,
            "model": model,
            "repeat": repeat,
            "excluded": bool(excluded),
            "leak_words": leaks,
            "output_chars": len(text),
            "output_words": len(text.split()),
        }
        for k, v in json.loads(meta).items():
            if k not in rec and (isinstance(v, int | float | str) and not isinstance(v, bool)):
                rec[k] = v
        records.append(rec)
    base = ["scenario", "sample_id", "model", "repeat", "excluded", "leak_words", "output_chars", "output_words"]
    return pd.DataFrame.from_records(records, columns=None if records else base)
