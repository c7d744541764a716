"""Long-format data frames for aggregation and reports (unblinded: leads and admins only).

These are the one place where ratings meet model names. Columns are documented on each function and are
the contract between storage and ``reviewer_app.aggregation``.
"""

from __future__ import annotations

import json

import pandas as pd
from sqlalchemy import select
from sqlmodel import Session, col

from storage.models import Assignment, Item, Model, Output, Rating, Reviewer, Sample, Scenario
from storage.repositories.query import ItemModels, execute_wide

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
    "rater_role",
    "shown",
]


def ratings_frame(session: Session, batch_id: int) -> pd.DataFrame:
    """Every submitted rating of a batch, one row per (assignment, dimension).

    Columns: ``scenario`` (str), ``sample_id`` (the batch file's id, str), ``item_id`` (int), ``is_gold``
    (bool), ``reviewer`` (name), ``occurrence`` (0 first showing, 1 repeat), ``position`` (0-based place in
    the reviewer's queue), ``swapped`` (pairwise: model_b was shown on the left), ``dimension`` (str),
    ``value`` (str as stored: a Likert score "4", binary "0"/"1", a categorical choice, or for pairwise the
    side the reviewer picked as displayed: "left"/"right"/"tie"/"both_bad"), ``model_a`` (the rated model;
    in pairwise mode the canonical first model), ``model_b`` (pairwise: the canonical second model; else
    None), ``repeat_a``/``repeat_b`` (the outputs' repeat index), ``seconds_spent`` (float or NaN),
    ``rater_role`` (the rater's role now: "reviewer", or "lead"/"admin" for someone who can read unblinded
    results and rated only because an admin assigned them by name; reports should mark those ratings),
    ``shown`` (the item was shown in the app, so its side and queue position were recorded when answered;
    False for ratings imported from elsewhere).
    """
    io = ItemModels()
    stmt = io.join(  # SQLAlchemy's select: sqlmodel's is typed for four columns at most
        select(
            col(Scenario.name),
            col(Sample.key),
            col(Item.id),
            col(Item.is_gold),
            col(Reviewer.name),
            col(Assignment.occurrence),
            col(Assignment.position),
            col(Assignment.swapped),
            col(Rating.dimension),
            col(Rating.value),
            col(io.model_a.name),
            col(io.model_b.name),
            col(io.output_a.repeat),
            col(io.output_b.repeat),
            col(Assignment.seconds_spent),
            col(Reviewer.role),
            col(Assignment.shown_at),
        )
        .select_from(Rating)
        .join(Assignment, col(Assignment.id) == col(Rating.assignment_id))
        .join(Item, col(Item.id) == col(Rating.item_id))
        .join(Sample, col(Sample.id) == col(Item.sample_id))
        .join(Scenario, col(Scenario.id) == col(Sample.scenario_id))
        .join(Reviewer, col(Reviewer.id) == col(Rating.reviewer_id))
    ).where(col(Rating.batch_id) == batch_id)
    rows = execute_wide(session, stmt.order_by(col(Rating.id))).all()
    frame = pd.DataFrame(rows, columns=RATING_COLUMNS)
    frame["is_gold"] = frame["is_gold"].astype(bool)
    frame["swapped"] = frame["swapped"].astype(bool)
    frame["seconds_spent"] = frame["seconds_spent"].astype(float)
    frame["rater_role"] = frame["rater_role"].astype(str)
    frame["shown"] = frame["shown"].notna()  # shown in the app (side and position recorded), not imported
    return frame


def outputs_frame(session: Session, batch_id: int) -> pd.DataFrame:
    """Every output of a batch with its metadata, for the "beside quality" views.

    Columns: ``scenario``, ``sample_id``, ``model``, ``repeat``, ``excluded`` (bool), ``leak_words`` (str),
    ``output_chars``, ``output_words``, and one column per metadata key seen in the batch (for example
    ``latency_ms``, ``ttft_ms``, ``output_tokens``), NaN where an output lacks it.
    """
    stmt = (
        select(
            col(Scenario.name),
            col(Sample.key),
            col(Model.name),
            col(Output.repeat),
            col(Output.excluded),
            col(Output.leak_words),
            col(Output.text),
            col(Output.metadata_json),
        )
        .select_from(Output)
        .join(Sample, col(Sample.id) == col(Output.sample_id))
        .join(Scenario, col(Scenario.id) == col(Sample.scenario_id))
        .join(Model, col(Model.id) == col(Output.model_id))
        .where(col(Output.batch_id) == batch_id)
        .order_by(col(Output.id))
    )
    records = []
    for scenario, key, model, repeat, excluded, leaks, text, meta in execute_wide(session, stmt):
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
