"""Refreshing an adaptive pool's scenario states from the ratings (README, "Adaptive allocation").

A claim must stay cheap, so it never computes a verdict: it reads the states this module writes
(``storage.repositories.batches.allocation``) and releases by them (``review.allocation``). The states are
the report's own anytime-valid verdicts (``analysis.report.anytime_verdicts``) turned into priorities
(``analysis.allocation``). They are refreshed by ``blind-review allocation BATCH`` and, in the served app,
by a background thread (:func:`start_refresher`) that looks every ``BLIND_REVIEW_ALLOCATION_SECONDS`` (default
30) at the open adaptive batches whose ratings changed since. A state a little stale costs some efficiency,
never validity: any rule for how many samples a scenario gets keeps its rated samples a random sample of it.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Hashable
from dataclasses import dataclass

from sqlalchemy.engine import Engine

from reviewer_app.analysis.allocation import allocation_states
from reviewer_app.analysis.report import anytime_verdicts
from reviewer_app.batches.catalog import batch_rubric, find_batch
from reviewer_app.domain.allocation import ScenarioAllocation
from reviewer_app.domain.report_anytime import AnytimeScenario
from reviewer_app.domain.rubric import Rubric
from reviewer_app.errors import ReportError
from reviewer_app.settings import allocation_seconds
from storage.engine import read_session, write_session
from storage.models import utcnow
from storage.repositories.batches import allocation as repo
from storage.repositories.results.completions import sample_completions
from storage.repositories.results.frames import ratings_frame
from storage.repositories.results.revisions import batch_revision

__all__ = ["PoolState", "Refresher", "pool_state", "refresh_allocation", "start_refresher"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class PoolState:
    """An adaptive batch's pool after a refresh: each scenario's state and priority, the samples still held
    back, and the verdicts they came from."""

    batch: str
    uniform_share: float
    states: tuple[ScenarioAllocation, ...]
    held_back: dict[str, int]
    verdicts: tuple[AnytimeScenario, ...]

    def summary(self) -> str:
        """One sentence for a page's message after a refresh."""
        words = {"burn_in": "in burn-in", "open": "open", "settled": "settled", "not_settling": "not settling"}
        parts = [
            f"{s.scenario} {'settled and closed' if s.closed else words[s.state]} ({s.complete} complete)"
            for s in self.states
        ]
        return f"Refreshed the adaptive pool of {self.batch!r}: {'; '.join(parts)}."

    def lines(self) -> list[str]:
        """The state as the CLI prints it: one line per scenario, what the pool does with it next."""
        out = [
            f"Adaptive pool of {self.batch!r} ({self.uniform_share:.0%} of releases uniformly at random, the rest "
            "to the scenarios whose verdicts are still open):"
        ]
        verdict_of = {v.scenario: v for v in self.verdicts}
        for s in self.states:
            if s.state == "burn_in":
                doing = "first in line until its verdicts start"
            elif s.state == "settled":
                doing = "settled: released only by the uniform share"
            elif s.nearest:
                doing = f"{s.open_pairs} open pair(s), the nearest decision about {s.nearest} samples away"
            else:
                doing = f"{s.open_pairs} open pair(s), none within reach: released only by the uniform share"
            if s.closed:
                doing = "settled and closed: no more of its samples are released"
            line = f"  {s.scenario}: {s.complete} complete, {self.held_back.get(s.scenario, 0)} held back; {doing}"
            verdict = verdict_of.get(s.scenario)
            if verdict is not None:
                line += f"\n    {verdict.sentence}"
            out.append(line)
        return out


def _rubric_of(engine: Engine, batch: str) -> tuple[int, Rubric]:
    row = find_batch(engine, batch)
    assert row.id is not None
    rubric = batch_rubric(row)
    if not rubric.allocation.adaptive:
        raise ReportError(
            f'batch {batch!r} does not allocate adaptively (its rubric has no allocation = "adaptive"); its pool hands '
            "out every item from the start"
        )
    return row.id, rubric


def refresh_allocation(engine: Engine, batch: str) -> PoolState:
    """Compute each scenario's state from the batch's ratings now and write it for the claims; returns it.
    Raises NotFoundError for an unknown batch, ReportError for a batch that does not allocate adaptively."""
    batch_id, rubric = _rubric_of(engine, batch)
    return _refresh(engine, batch_id, batch, rubric)


def pool_state(engine: Engine, batch: str) -> PoolState:
    """The states as the last refresh wrote them (no verdicts; nothing computed)."""
    batch_id, rubric = _rubric_of(engine, batch)
    with read_session(engine) as session:
        states = repo.scenario_states(session, batch_id)
        held = repo.held_back_scenarios(session, batch_id)
    return PoolState(batch, rubric.allocation.uniform_share, tuple(states), held, ())


def _refresh(engine: Engine, batch_id: int, name: str, rubric: Rubric) -> PoolState:
    with read_session(engine) as session:
        ratings = ratings_frame(session, batch_id, python_strings=True)
        completions = [key for key, _at in sample_completions(session, batch_id, rubric.overlap)]
        held = repo.held_back_scenarios(session, batch_id)
        sizes = repo.items_per_sample(session, batch_id)
    verdicts = anytime_verdicts(ratings, rubric, completions) if not ratings.empty else ()
    per_sample = {scenario: round(n * rubric.overlap) for scenario, n in sizes.items()}
    states = allocation_states(verdicts, per_sample, held, close_settled=rubric.allocation.close_settled)
    with write_session(engine) as session:
        repo.write_states(session, batch_id, states, utcnow())
        written = repo.scenario_states(session, batch_id)  # a scenario closed before stays closed
    log.info("adaptive pool of batch %d refreshed: %s", batch_id, ", ".join(f"{s.scenario} {s.state}" for s in written))
    return PoolState(name, rubric.allocation.uniform_share, tuple(written), held, verdicts)


class Refresher:
    """The served app's background refresh: one daemon thread per process, which every ``period`` seconds
    refreshes each open adaptive batch whose ratings changed since it last looked. Errors are logged and
    retried at the next look: the pool goes on releasing by the last states meanwhile."""

    def __init__(self, engine: Engine, period: float) -> None:
        self.engine, self.period = engine, period
        self.seen: dict[int, Hashable] = {}
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._loop, name="blind-review-allocation", daemon=True)

    def _loop(self) -> None:
        while not self.stop.wait(self.period):
            self.look()

    def look(self) -> int:
        """Refresh what changed; returns how many batches were refreshed."""
        refreshed = 0
        try:
            with read_session(self.engine) as session:
                candidates = repo.adaptive_batches(session)
                revisions = {b.id: batch_revision(session, b.id) for b in candidates if b.id is not None}
            for row in candidates:
                assert row.id is not None
                if revisions[row.id] is None or self.seen.get(row.id) == revisions[row.id]:
                    continue
                rubric = batch_rubric(row)
                if rubric.allocation.adaptive:
                    started = time.perf_counter()
                    _refresh(self.engine, row.id, row.name, rubric)
                    log.debug("allocation refresh of batch %d took %.2f s", row.id, time.perf_counter() - started)
                    refreshed += 1
                self.seen[row.id] = revisions[row.id]
        except Exception as exc:  # noqa: BLE001 - a background thread: log, keep the last states, look again later
            # One line (a database not migrated yet, before the first page load, is not worth a traceback).
            first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            log.warning("refreshing the adaptive pools failed (%s); the pools keep their last states", first)
            log.debug("the refresh's failure", exc_info=True)
        return refreshed


_STARTED: dict[int, Refresher] = {}
_LOCK = threading.Lock()


def start_refresher(engine: Engine) -> None:
    """Start the background refresh for ``engine`` once per process (the served app calls it with its
    engine; a second call is a no-op)."""
    with _LOCK:
        if id(engine) in _STARTED:
            return
        refresher = Refresher(engine, allocation_seconds())
        _STARTED[id(engine)] = refresher
        refresher.thread.start()
