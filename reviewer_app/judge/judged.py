"""Which judges have judged a batch, from what is stored: what a pipeline reads to know which judge to name in a
report (``report --judge``), whatever process ran it."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy.engine import Engine

from reviewer_app.batches.catalog import find_batch
from reviewer_app.judge.names import judge_label
from storage.engine import read_session
from storage.repositories.judge.runs import judges_of_batch

__all__ = ["JudgeSummary", "batch_judges"]


@dataclass(frozen=True)
class JudgeSummary:
    """A judge (its model and prompt template) and its judgements on one batch."""

    judge: str  # judge:NAME@template
    model: str
    api_model: str
    base_url: str
    template_digest: str
    judged: int
    failed: int


def batch_judges(engine: Engine, batch_name: str) -> list[JudgeSummary]:
    """The judges with judgements on the batch, oldest first; NotFoundError for an unknown batch."""
    batch = find_batch(engine, batch_name)
    assert batch.id is not None
    with read_session(engine) as session:
        rows = judges_of_batch(session, batch.id)
    return [
        JudgeSummary(
            judge_label(j.name, j.template_digest), j.name, j.api_model, j.base_url, j.template_digest, ok, failed
        )  # fmt: skip
        for j, ok, failed in rows
    ]
