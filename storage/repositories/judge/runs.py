"""A judge run's reads and writes: the judge (one per model and template), the items it is to judge, the
judgements already made (a rerun skips them) and each new judgement, written as it arrives.

Each judgement is its own short transaction, so an interrupted run keeps every answer it received and a
rerun picks up where it stopped; a failed judgement is replaced by the rerun's answer (one row per judge,
item, repeat and order).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import case, func
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlmodel import Session, col, select

from reviewer_app.domain.enums import AssignmentStatus
from storage.models import Assignment, Item, Judge, Judgement, Sample, Scenario

OK = "ok"
FAILED = "failed"

JudgementKey = tuple[int, int, bool]  # (item id, repeat, swapped)


def find_judge(session: Session, name: str, api_model: str, template_digest: str) -> Judge | None:
    return session.exec(
        select(Judge).where(
            col(Judge.name) == name, col(Judge.api_model) == api_model, col(Judge.template_digest) == template_digest
        )
    ).first()


def add_judge(session: Session, judge: Judge) -> Judge:
    session.add(judge)
    session.flush()
    return judge


def judge_items(session: Session, batch_id: int) -> list[tuple[int, str, str]]:
    """The batch's items a judge rates, as (item id, sample's id in the batch file, scenario name), in item
    order: every item but a follow-up batch's anchors (the baseline's outputs, shown again to reviewers to
    measure their shift; they count for no model's score, so a judge has nothing to say about them)."""
    rows = session.exec(
        select(Item.id, Sample.key, Scenario.name)
        .join(Sample, col(Sample.id) == col(Item.sample_id))
        .join(Scenario, col(Scenario.id) == col(Sample.scenario_id))
        .where(col(Item.batch_id) == batch_id, col(Item.is_anchor).is_(False))
        .order_by(col(Item.id))
    ).all()
    return [(int(i), str(key), str(name)) for i, key, name in rows if i is not None]


def rated_sample_keys(session: Session, batch_id: int) -> set[str]:
    """The batch's samples (their ids in the batch file) of which the panel finished at least one item."""
    rows = session.exec(
        select(Sample.key)
        .distinct()
        .join(Item, col(Item.sample_id) == col(Sample.id))
        .join(Assignment, col(Assignment.item_id) == col(Item.id))
        .where(col(Item.batch_id) == batch_id, col(Assignment.status) == AssignmentStatus.DONE)
    ).all()
    return {str(k) for k in rows}


def done_keys(session: Session, judge_id: int, batch_id: int) -> set[JudgementKey]:
    """The (item, repeat, order) this judge has answered in this batch (failed ones are not done)."""
    rows = session.exec(
        select(Judgement.item_id, Judgement.repeat, Judgement.swapped).where(
            col(Judgement.judge_id) == judge_id, col(Judgement.batch_id) == batch_id, col(Judgement.status) == OK
        )
    ).all()
    return {(int(i), int(r), bool(s)) for i, r, s in rows}


def save_judgement(session: Session, row: dict[str, Any]) -> None:
    """Insert a judgement, or replace the one of the same judge, item, repeat and order (a retried failure)."""
    insert_fn = pg_insert if session.get_bind().dialect.name == "postgresql" else sqlite_insert
    stmt = insert_fn(Judgement).values([row])
    keys = ("judge_id", "item_id", "repeat", "swapped")
    stmt = stmt.on_conflict_do_update(
        index_elements=list(keys), set_={k: getattr(stmt.excluded, k) for k in row if k not in keys}
    )
    session.exec(stmt)


def judges_of_batch(session: Session, batch_id: int) -> list[tuple[Judge, int, int]]:
    """The judges that judged items of the batch, oldest first, each with its ok and failed judgements."""
    ok = func.sum(case((col(Judgement.status) == OK, 1), else_=0))
    rows = session.exec(
        select(Judge, ok, func.count(col(Judgement.id)))
        .join(Judgement, col(Judgement.judge_id) == col(Judge.id))
        .where(col(Judgement.batch_id) == batch_id)
        .group_by(col(Judge.id))
        .order_by(col(Judge.created_at), col(Judge.id))
    ).all()
    return [(judge, int(n_ok or 0), int(n) - int(n_ok or 0)) for judge, n_ok, n in rows]


def judgements(session: Session, judge_id: int, batch_id: int, *, status: str | None = OK) -> Sequence[Judgement]:
    """The judge's judgements in the batch (only ``status``'s; None: all), in (item, repeat, order) order."""
    stmt = select(Judgement).where(col(Judgement.judge_id) == judge_id, col(Judgement.batch_id) == batch_id)
    if status is not None:
        stmt = stmt.where(col(Judgement.status) == status)
    return session.exec(stmt.order_by(col(Judgement.item_id), col(Judgement.repeat), col(Judgement.swapped))).all()
