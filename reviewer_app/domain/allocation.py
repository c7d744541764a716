"""The rule an adaptive pool releases its next sample by (issue 30, section 2; README, "Adaptive allocation").

An adaptive batch keeps its samples back and releases them a whole sample at a time (every model's output of
the sample, so paired comparisons stay paired). *Which* sample of a scenario comes next is fixed before any
rating: the batch's secret pool order. Only *how many* of a scenario's samples are released depends on the
ratings, through the rule here: each scenario's state, as the last refresh of the pool computed it from the
report's own anytime-valid verdicts, gives it a priority, and the release goes to the scenario of highest
priority, except a ``uniform_share`` of releases, which draw a held-back sample uniformly at random.

Priority (:meth:`ScenarioAllocation.priority`):

* in burn-in (fewer complete samples than the sequences need): first, the fewest samples first;
* open or not settling (some pair neither separated nor shown equivalent; not settling: some such pair is beyond
  reach, but others may not be) with a decision within reach (an open pair projected to separate or to show
  equivalence before the scenario runs out of samples): the nearer that decision, the higher, per judgement a
  sample costs: ``1 / (max(nearest - released, 1) x cost)``, ``nearest`` the samples from the refresh to the
  nearest such decision, ``released`` those released since (so releases between two refreshes move on instead
  of all going to one scenario), ``cost`` models x k. Greedy: the cheapest next decision first, which is what
  makes more verdicts out of the same judgements;
* settled, or with nothing in reach: 0, reached by the uniform share only (which also corrects a projection that
  was too pessimistic); closed: never.

Plain data and arithmetic: the pool's claim (``review.allocation``) and the simulation
(``scripts/validate_allocation.py``) call the same code.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

__all__ = ["FRONTIER", "AllocationState", "ScenarioAllocation", "pick_scenario"]

AllocationState = Literal["burn_in", "open", "settled", "not_settling"]

# Samples an adaptive pool keeps released and unfinished at least: enough that a reviewer's next items come
# from a few prompts in a secret order (not one prompt's answers in a row), few enough that releases follow
# the verdicts closely. A reviewer who has had every released item gets a new sample released at once.
FRONTIER = 4
_BURN_IN_FIRST = 1e12


@dataclass(frozen=True)
class ScenarioAllocation:
    """One scenario of an adaptive batch as the pool sees it (storage: ``PoolScenario``)."""

    scenario: str
    state: AllocationState
    complete: int  # samples complete at the last refresh
    open_pairs: int
    nearest: int  # samples from the refresh to the nearest decision within reach (0: none in reach)
    cost: int  # judgements one more sample costs (models x k)
    held: int = 0  # samples held back at the refresh
    released: int = 0  # samples released since the refresh
    closed: bool = False

    def priority(self) -> float:
        """How much the scenario's next sample is wanted (higher first; 0: only by the uniform share;
        below 0: never)."""
        if self.closed:
            return -1.0
        n = self.complete + self.released
        if self.state == "burn_in":
            return _BURN_IN_FIRST - n
        if self.state in ("open", "not_settling") and self.nearest > 0:
            return 1.0 / (max(self.nearest - self.released, 1) * max(self.cost, 1))
        return 0.0


def pick_scenario(rows: Iterable[ScenarioAllocation]) -> str | None:
    """The scenario an adaptive release should take its sample from, of those with samples still held back:
    the highest priority (ties by name); None when no such scenario has a priority above 0 (every one
    settled, not settling or closed): then the caller draws uniformly."""
    ranked = sorted(
        (r for r in rows if r.held > r.released and r.priority() > 0), key=lambda r: (-r.priority(), r.scenario)
    )
    return ranked[0].scenario if ranked else None
