"""Queries behind an adaptive pool: the samples it holds back, releasing one (a claim's, in
``review.allocation``), and each scenario's state as the last refresh (``results.allocation``) saw it. In the
batches' room because both sides read it and neither may import the other.

A sample is released by clearing ``Item.held_back`` on all its items at once, in the claim's transaction:
whole samples, so paired comparisons stay paired. The next sample of a scenario (or of the batch, for a uniform
release) is the one whose first held-back item comes first in the batch's secret pool order
(``Item.pool_key``), fixed at load: the ratings decide how many of a scenario's samples are released, never
which. Ids and scenario names only: never a model name.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from datetime import datetime

from sqlalchemy import delete, distinct, false, func, true, update
from sqlalchemy.exc import OperationalError
from sqlmodel import Session, col, select
from sqlmodel.sql.expression import SelectOfScalar

from reviewer_app.domain.allocation import ScenarioAllocation
from reviewer_app.domain.enums import BatchStatus
from storage.models import Batch, Item, PoolScenario, Sample, Scenario
from storage.repositories.query import pk

# Items read to count the released samples: a sample has one item per model (rating) or per pair (pairwise:
# 45 for 10 models); more open items than this many per wanted sample means there are enough samples anyway.
_ITEMS_PER_SAMPLE_BOUND = 64


def hold_back_batch(session: Session, batch_id: int) -> int:
    """Hold every regular item of a freshly loaded adaptive batch back from the pool (gold items are never
    pooled anyway); returns how many."""
    result = session.execute(
        update(Item)
        .where(col(Item.batch_id) == batch_id, col(Item.is_gold) == false())
        .values(held_back=True)
        .execution_options(synchronize_session=False)
    )
    return int(getattr(result, "rowcount", 0) or 0)


def frontier(session: Session, batch_id: int, enough: int) -> int:
    """Released samples with an item still open (not yet holding its k done answers), counted up to ``enough``:
    what the pool has to hand out before it releases more.

    Reads the open released items in pool order through ``ix_item_pool``, a bounded number of them: a plain
    count let PostgreSQL read the whole batch through ``ix_item_batch_id`` (its statistics see the column
    mostly false over all batches, not that an adaptive batch holds almost everything back): 10 ms a claim at
    100,000 items, where this reads a few index entries."""
    stmt = (
        select(col(Item.sample_id))
        .where(
            col(Item.batch_id) == batch_id,
            col(Item.is_gold) == false(),
            col(Item.is_open) == true(),
            col(Item.held_back) == false(),
        )
        .order_by(col(Item.pool_key))
        .limit(enough * _ITEMS_PER_SAMPLE_BOUND)
    )
    return min(len(set(session.exec(stmt).all())), enough)


def next_held_back(
    session: Session,
    batch_id: int,
    scenario: str | None,
    closed: Collection[str] = (),
    skip: Collection[int] = (),
) -> int | None:
    """The sample id a release should take: the first held-back sample in pool order of ``scenario`` (None:
    of the whole batch, leaving out the ``closed`` scenarios), not one of ``skip``; None when none is left."""
    stmt = (
        select(col(Item.sample_id))
        .join(Sample, col(Sample.id) == col(Item.sample_id))
        .join(Scenario, col(Scenario.id) == col(Sample.scenario_id))
        .where(
            col(Item.batch_id) == batch_id,
            col(Item.is_gold) == false(),
            col(Item.is_open) == true(),
            col(Item.held_back) == true(),
        )
        .order_by(col(Item.pool_key), col(Item.id))
        .limit(1)
    )
    if scenario is not None:
        stmt = stmt.where(col(Scenario.name) == scenario)
    elif closed:
        stmt = stmt.where(col(Scenario.name).not_in(list(closed)))
    if skip:
        stmt = stmt.where(col(Item.sample_id).not_in(list(skip)))
    found = session.exec(stmt).first()
    return None if found is None else int(found)


def release_sample(session: Session, batch_id: int, sample_id: int) -> int | None:
    """Release every held-back item of the sample to the pool and count the release against its scenario's
    state (if it has one); returns the items released (0: released already), or None when another claim is
    releasing the same sample right now (PostgreSQL: take another).

    Never waits for a lock (PostgreSQL, ``NOWAIT`` in a savepoint): a claim that releases may go on to wait for
    an item another claim holds, so waiting here could close a circle. The release counter is a hint for the
    next releases; if another claim has its row, this release is not counted rather than waited for."""
    held = (col(Item.batch_id) == batch_id, col(Item.sample_id) == sample_id, col(Item.held_back) == true())
    if not _locked_without_waiting(session, select(pk(Item.id)).where(*held)):
        return None
    result = session.execute(
        update(Item).where(*held).values(held_back=False).execution_options(synchronize_session=False)
    )
    n = int(getattr(result, "rowcount", 0) or 0)
    if n:
        _count_release(session, batch_id, sample_id)
    return n


def _locked_without_waiting(session: Session, rows: SelectOfScalar[int]) -> bool:
    """Lock the rows ``rows`` selects if no other transaction holds any of them (PostgreSQL: ``NOWAIT`` in a
    savepoint, rolled back on refusal so the transaction goes on); False if one does. SQLite's write
    transactions are serial: always True."""
    if session.get_bind().dialect.name != "postgresql":
        return True
    attempt = session.begin_nested()
    try:
        session.exec(rows.with_for_update(nowait=True)).all()
    except OperationalError:
        attempt.rollback()
        return False
    attempt.commit()
    return True


def _count_release(session: Session, batch_id: int, sample_id: int) -> None:
    scenario_id = select(col(Sample.scenario_id)).where(col(Sample.id) == sample_id).scalar_subquery()
    where = (col(PoolScenario.batch_id) == batch_id, col(PoolScenario.scenario_id) == scenario_id)
    if not _locked_without_waiting(session, select(col(PoolScenario.batch_id)).where(*where)):
        return
    session.execute(
        update(PoolScenario)
        .where(*where)
        .values(released=col(PoolScenario.released) + 1)
        .execution_options(synchronize_session=False)
    )


def held_back_scenarios(session: Session, batch_id: int) -> dict[str, int]:
    """Scenario name -> samples still held back (only scenarios with some)."""
    stmt = (
        select(col(Scenario.name), func.count(distinct(col(Item.sample_id))))
        .join(Sample, col(Sample.id) == col(Item.sample_id))
        .join(Scenario, col(Scenario.id) == col(Sample.scenario_id))
        .where(col(Item.batch_id) == batch_id, col(Item.held_back) == true())
        .group_by(col(Scenario.name))
    )
    return {str(name): int(n) for name, n in session.exec(stmt)}


def scenario_states(session: Session, batch_id: int) -> list[ScenarioAllocation]:
    """Each scenario's state as the last refresh wrote it, with the releases since (empty: never refreshed)."""
    stmt = (
        select(PoolScenario, col(Scenario.name))
        .join(Scenario, col(Scenario.id) == col(PoolScenario.scenario_id))
        .where(col(PoolScenario.batch_id) == batch_id)
        .order_by(col(Scenario.name))
    )
    return [
        ScenarioAllocation(
            scenario=str(name),
            state=row.state,  # type: ignore[arg-type]  # written from AllocationState only
            complete=row.complete,
            open_pairs=row.open_pairs,
            nearest=row.nearest,
            cost=row.cost,
            held=row.held,
            released=row.released,
            closed=row.closed,
        )
        for row, name in session.exec(stmt)
    ]


def write_states(session: Session, batch_id: int, states: Sequence[ScenarioAllocation], now: datetime) -> None:
    """Replace the batch's scenario states (releases since counted from zero again). A scenario once closed
    stays closed: settling is decided with the evidence of its time, and reopening would spend reviewers on
    it after the lead may have acted."""
    ids = dict(
        session.exec(select(col(Scenario.name), pk(Scenario.id)).where(col(Scenario.batch_id) == batch_id)).all()
    )
    was_closed = {s.scenario for s in scenario_states(session, batch_id) if s.closed}
    session.execute(delete(PoolScenario).where(col(PoolScenario.batch_id) == batch_id))
    for s in states:
        session.add(
            PoolScenario(
                batch_id=batch_id,
                scenario_id=ids[s.scenario],
                state=s.state,
                complete=s.complete,
                open_pairs=s.open_pairs,
                nearest=s.nearest,
                cost=s.cost,
                held=s.held,
                released=0,
                closed=s.closed or s.scenario in was_closed,
                refreshed_at=now,
            )
        )
    session.flush()


def items_per_sample(session: Session, batch_id: int) -> dict[str, float]:
    """Scenario name -> regular items per sample (models in rating mode, pairs in pairwise): with the overlap,
    the judgements one more sample of the scenario costs."""
    stmt = (
        select(col(Scenario.name), func.count(col(Item.id)), func.count(distinct(col(Item.sample_id))))
        .join(Sample, col(Sample.id) == col(Item.sample_id))
        .join(Scenario, col(Scenario.id) == col(Sample.scenario_id))
        .where(col(Item.batch_id) == batch_id, col(Item.is_gold) == false(), col(Item.is_anchor) == false())
        .group_by(col(Scenario.name))
    )
    return {str(name): n / max(samples, 1) for name, n, samples in session.exec(stmt)}


def adaptive_batches(session: Session) -> list[Batch]:
    """The open batches whose rubric may allocate adaptively (the caller parses it to be sure): what the pool's
    refresher looks at."""
    stmt = select(Batch).where(col(Batch.status) == BatchStatus.OPEN, col(Batch.rubric_json).contains('"adaptive"'))
    return list(session.exec(stmt))
