"""The disputes of a batch for a lead, unblinded: every item and question the panel disagreed on beyond the
rubric's threshold, what it answered, and the ruling if there is one (``blind-review disputes``). Ruling is done
blind, on the Adjudicate page; this list is for following the queue and for audits."""

from __future__ import annotations

import pandas as pd
from sqlalchemy.engine import Engine

from reviewer_app.analysis.disputes import dispute_rule, find_disputes, named_votes, pairwise_value_text
from reviewer_app.batches.catalog import batch_rubric, no_such_batch
from reviewer_app.domain.enums import Mode
from storage.engine import read_session
from storage.repositories.adjudication import rulings_frame
from storage.repositories.batches.batches import get_batch_by_name
from storage.repositories.results.frames import ratings_frame

__all__ = ["DISPUTE_TABLE_COLUMNS", "dispute_table"]

DISPUTE_TABLE_COLUMNS = ["scenario", "sample_id", "models", "dimension", "panel", "ruling", "reason", "adjudicator"]


def dispute_table(engine: Engine, batch: str) -> tuple[pd.DataFrame, str]:
    """(the disputes of batch ``batch`` with their rulings, one row per item and question, ruled or not; the
    rubric's rule in words). Pairwise answers are in the models' names ("m1 2, m2 1"; a ruling: the better
    model, tie or both bad). Raises NotFoundError for an unknown batch."""
    with read_session(engine) as session:
        row = get_batch_by_name(session, batch)
        if row is None:
            raise no_such_batch(session, batch)
        assert row.id is not None
        rubric = batch_rubric(row)
        disputes = find_disputes(ratings_frame(session, row.id, python_strings=True), rubric)
        rulings = rulings_frame(session, row.id)
    merged = disputes.merge(rulings, on=["item_id", "dimension"], how="left", suffixes=("", "_ruling"))
    pairwise = rubric.mode == Mode.PAIRWISE
    out = []
    for r in merged.to_dict(orient="records"):
        models = [str(m) for m in (r["model_a"], r["model_b"]) if isinstance(m, str) and m]
        panel, ruling = str(r["panel"]), r["value"]
        if pairwise:
            panel = named_votes(panel, tuple(models))
            if isinstance(ruling, str):
                ruling = pairwise_value_text(ruling, models[0], models[1])
        out.append([r["scenario"], r["sample_id"], " vs ".join(models), r["dimension"], panel,
                    ruling if isinstance(ruling, str) else "", r["reason"] if isinstance(r["reason"], str) else "",
                    r["adjudicator"] if isinstance(r["adjudicator"], str) else ""])  # fmt: skip
    return pd.DataFrame(out, columns=DISPUTE_TABLE_COLUMNS), dispute_rule(rubric)
