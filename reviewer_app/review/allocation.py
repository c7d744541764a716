"""Releasing an adaptive batch's samples to the pool, inside a claim (README, "Adaptive allocation").

A batch whose rubric says ``allocation = "adaptive"`` is loaded with every regular item held back. A claim
keeps :data:`~reviewer_app.domain.allocation.FRONTIER` samples released and unfinished, and releases one more
when the reviewer has had every released item; each release is a whole sample, chosen by
:func:`~reviewer_app.domain.allocation.pick_scenario` from the scenario states the last refresh wrote
(``results.allocation``), except a share of releases (the rubric's ``uniform_share``, 20% by default, and every
release before the first refresh) that draw a held-back sample uniformly at random. The draw is keyed by the
batch's secret, the reviewer and their claim's position: reproducible from the database, unknowable to a
reviewer.

Validity, the design-based argument: which sample of a scenario is released next is fixed at load (the secret
pool order); the ratings decide only how many of a scenario's samples are released. The rated samples of a
scenario are therefore a simple random sample of it whose size is a stopping time, so each scenario's
estimates need no weights, the anytime-valid verdicts hold at that stopping time, and the composite weighs
scenarios by the rubric, not by how many samples each got.

Blind as the rest of the pool: what is released is a sample, never a model, and the items of the released
samples reach reviewers in the secret pool order from a private point, counterbalanced as before.
"""

from __future__ import annotations

import logging
from dataclasses import replace

from sqlmodel import Session

from reviewer_app.domain.allocation import FRONTIER, pick_scenario
from reviewer_app.domain.keyed_random import KeyedRandom
from reviewer_app.domain.rubric import Allocation
from storage.repositories.batches import allocation as repo

log = logging.getLogger(__name__)

__all__ = ["release_for_claim"]

_BUSY_TRIES = 4  # samples another claim was releasing at the same moment, skipped before giving up


def release_for_claim(
    session: Session,
    batch_id: int,
    secret: bytes,
    allocation: Allocation,
    reviewer_id: int,
    position: int,
    *,
    force: bool,
) -> int:
    """Release samples of the batch if the pool needs them: up to ``FRONTIER`` released samples unfinished,
    or (``force``) one more when this reviewer found nothing free among the released ones. Returns how many
    samples were released. Runs in the claim's transaction, under its lock of the batch."""
    wanted = 1 if force else FRONTIER - repo.frontier(session, batch_id, FRONTIER)
    if wanted <= 0:
        return 0
    states = repo.scenario_states(session, batch_id)
    closed = {s.scenario for s in states if s.closed}
    released, busy = 0, set[int]()
    for draw in range(wanted + _BUSY_TRIES):
        if released == wanted:
            break
        uniform = KeyedRandom(secret, "allocation", reviewer_id, position, draw).random() < allocation.uniform_share
        scenario = None if uniform else pick_scenario(states)
        sample_id = repo.next_held_back(session, batch_id, scenario, closed, skip=busy)
        if sample_id is None:
            break
        got = repo.release_sample(session, batch_id, sample_id)
        if got is None:  # another claim is releasing it this moment: the next one
            busy.add(sample_id)
            continue
        released += got > 0
        if scenario is not None:  # the next draw sees this release, as the next claim will
            states = [replace(s, released=s.released + 1) if s.scenario == scenario else s for s in states]
        # Ids and the rule only: never a model, and not which scenario (a scenario's name may say a lot).
        log.debug("adaptive pool of batch %d: released a sample (%s)", batch_id, "by rule" if scenario else "uniform")
    return released
