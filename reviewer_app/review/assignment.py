"""Who reviews what, in which order, under which label.

Two ways an item reaches a reviewer, one rule for both (the overlap k counts reviewers *holding* a slot):

* ``assign`` plans: every item gets exactly k distinct reviewers, loads differ by at most one, each
  reviewer gets a private shuffled order, batch-unique labels, gold items, repeats and (pairwise)
  counterbalanced sides. Planned slots never expire. Who reviews what is drawn from the stored seed over
  the items in their pool order; labels, each queue's order, repeats' places and sides from the batch's
  secret (``domain.keyed_random``). Both are in the database, so an admin can rebuild and audit a plan;
  a reviewer, who at best knows the seed, can compute none of what they see from it.
* ``claim_in`` pools: a reviewer with nothing planned takes a free slot (a planned reviewer left, an item
  was skipped with "can't judge", or no plan was made). A claim is a reservation with an expiry, made under
  a row lock on PostgreSQL and a database write lock on SQLite, so 32 simultaneous claims never put an item
  past k. The slot is the first free one in the batch's secret pool order (``Item.pool_key``) from a private
  starting point per reviewer and claim (:func:`pool_start`), found by the database through an index: a
  claim reads the few items it walks past, not the batch. Pairwise sides of a claim are counterbalanced per
  reviewer with a private coin for ties, as in a plan. A batch whose rubric allocates adaptively holds its
  samples back and a claim releases them a whole sample at a time (:mod:`reviewer_app.review.allocation`);
  such a batch is never planned.

Only people with the reviewer role take slots by themselves: leads and admins have seen unblinded results.
An admin may still plan slots for a lead or an admin by naming them (``assign --reviewers``); the ratings
frame marks such ratings by the rater's role.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy.engine import Engine
from sqlmodel import Session

from reviewer_app.batches.audience import open_to_reviewer
from reviewer_app.batches.catalog import batch_rubric, find_batch
from reviewer_app.domain.enums import AssignmentStatus, BatchStatus, Role
from reviewer_app.domain.keyed_random import KeyedRandom, keyed_int, secret_bytes
from reviewer_app.errors import AssignmentError, BatchClosedError
from reviewer_app.people.people import list_people
from reviewer_app.review.allocation import release_for_claim
from reviewer_app.review.blinding import balanced_orientation, draw_labels, pool_orientation, rng_for
from reviewer_app.settings import reservation_seconds
from storage.engine import read_session, write_session
from storage.models import POOL_KEY_BITS, Batch, utcnow
from storage.repositories import people as reviewer_repo
from storage.repositories.batches import batches as batch_repo
from storage.repositories.review import assignments as repo
from storage.repositories.review import claims as claim_repo

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class PlanItem:
    item_id: int
    models: tuple[int, int] | None  # pairwise: the canonical (a, b) model ids; None in rating mode
    is_gold: bool = False


@dataclass(frozen=True)
class Planned:
    item_id: int
    reviewer_id: int
    occurrence: int
    position: int
    label: str
    swapped: bool


def plan_assignments(
    items: Sequence[PlanItem],
    reviewers: Sequence[int],
    overlap: int,
    seed: int,
    secret: bytes,
    *,
    holders: dict[int, set[int]] | None = None,
    had: dict[int, set[int]] | None = None,
    start_positions: dict[int, int] | None = None,
    taken_labels: set[str] | None = None,
    repeat_share: float = 0.0,
    repeat_min_gap: int = 5,
    round_no: int = 0,
) -> list[Planned]:
    """Plan the free slots of ``items`` over ``reviewers``.

    ``seed`` draws who reviews what, over ``items`` in the order given (the batch's pool order, which its
    ``secret`` fixed); ``secret`` draws everything a reviewer sees of the plan: labels, each queue's order,
    where repeats come back, pairwise sides.

    ``holders`` (item -> reviewers already holding a slot) and ``had`` (reviewer -> items they ever had)
    make re-planning after a change safe: nobody gets an item twice and k is never exceeded. Each item is
    given to the least-loaded eligible reviewers (random tie-break), which keeps loads within one of each
    other. Gold items go to every reviewer once, outside k. Raises :class:`AssignmentError` when fewer
    than k reviewers are given.
    """
    holders = holders or {}
    had = had or {}
    reviewers = sorted(set(reviewers))
    if len(reviewers) < overlap:
        raise AssignmentError(
            f"the rubric asks for {overlap} reviewers per item but only {len(reviewers)} "
            f"reviewer(s) were given; add reviewers or lower 'overlap'"
        )
    rng = rng_for(seed, "plan", round_no)
    regular = [it for it in items if not it.is_gold]
    rng.shuffle(regular)
    load = dict.fromkeys(reviewers, 0)
    tie = {r: rng.random() for r in reviewers}
    got: dict[int, list[PlanItem]] = defaultdict(list)
    for it in regular:
        need = overlap - len(holders.get(it.item_id, set()))
        if need <= 0:
            continue
        eligible = [
            r for r in reviewers if it.item_id not in had.get(r, set()) and r not in holders.get(it.item_id, set())
        ]
        if len(eligible) < need:
            raise AssignmentError(
                f"item {it.item_id} needs {need} more reviewer(s) who have not seen it, but only "
                f"{len(eligible)} are left; add reviewers"
            )
        eligible.sort(key=lambda r: (load[r], tie[r]))
        for r in eligible[:need]:
            load[r] += 1
            got[r].append(it)
    gold = [it for it in items if it.is_gold]
    for r in reviewers:
        for it in gold:
            if it.item_id not in had.get(r, set()):
                got[r].append(it)

    planned: list[Planned] = []
    n_total = sum(len(v) for v in got.values())
    n_repeats = {r: int(repeat_share * sum(1 for it in got[r] if not it.is_gold)) for r in reviewers}
    labels = iter(draw_labels(KeyedRandom(secret, "labels", round_no), n_total + sum(n_repeats.values()), taken_labels))
    for r in reviewers:
        order = list(got[r])
        rrng = KeyedRandom(secret, "order", round_no, r)
        rrng.shuffle(order)
        # A repeat comes after at least min_gap other items, so it is not recognised at once.
        candidates = [i for i, it in enumerate(order) if not it.is_gold]
        roomy = [i for i in candidates if i + repeat_min_gap < len(order)]
        pool = roomy if len(roomy) >= n_repeats[r] else candidates
        after: dict[int, list[PlanItem]] = defaultdict(list)
        for idx in sorted(rrng.sample(pool, n_repeats[r])):
            lo = min(idx + repeat_min_gap, len(order) - 1)
            after[rrng.randint(lo, len(order) - 1)].append(order[idx])
        shown: list[tuple[PlanItem, int]] = []
        for j, it in enumerate(order):
            shown.append((it, 0))
            shown += [(rep, 1) for rep in after.get(j, [])]
        pairs = [(i, it.models) for i, (it, _) in enumerate(shown) if it.models is not None]
        swaps = balanced_orientation([m for _, m in pairs], rrng) if pairs else []
        swapped = {i: s for (i, _), s in zip(pairs, swaps, strict=True)}
        start = (start_positions or {}).get(r, 0)
        for pos, (it, occurrence) in enumerate(shown):
            planned.append(Planned(it.item_id, r, occurrence, start + pos, next(labels), swapped.get(pos, False)))
    return planned


@dataclass
class AssignSummary:
    batch: str
    reviewers: int
    new_assignments: int
    released: int
    per_reviewer: dict[str, int]

    def lines(self) -> list[str]:
        if not self.new_assignments:
            return [f"Nothing to assign in {self.batch!r}: every item already has its reviewers."]
        loads = sorted(self.per_reviewer.values())
        return [
            f"Assigned {self.new_assignments} item showings in {self.batch!r} to {self.reviewers} reviewer(s) "
            f"(per reviewer {loads[0]}–{loads[-1]}"
            + (f"; {self.released} unopened assignments were re-planned" if self.released else "")
            + ")."
        ]


def assign(
    engine: Engine, batch_name: str, reviewer_names: Sequence[str] | None = None, *, rebalance: bool = False
) -> AssignSummary:
    """Plan the batch's free slots over the named people, who become the batch's own reviewers (default: the
    batch's reviewers, or every active person with the reviewer role when it has none; a lead or an admin
    takes slots only when named). A batch may be planned before it is first opened (nobody sees it until
    then), not after it was closed.

    Run again after adding reviewers with ``rebalance=True`` to spread unopened items over everyone.
    """
    batch = find_batch(engine, batch_name)
    assert batch.id is not None
    if batch.status != BatchStatus.OPEN and batch.opened_at is not None:
        raise BatchClosedError(f"batch {batch.name!r} is closed; open it before assigning")
    rubric = batch_rubric(batch)
    if rubric.allocation.adaptive:
        raise AssignmentError(
            f"batch {batch.name!r} allocates adaptively: its samples go to reviewers from the pool as the verdicts "
            "need them, which a plan made in advance would undo; reviewers just open their link and claim as they go "
            '(a rubric without allocation = "adaptive" can be planned)'
        )
    with read_session(engine) as session:  # a lookup: no reason to take the write lock
        if reviewer_names:
            ids = []
            for name in reviewer_names:
                r = reviewer_repo.get_by_name(session, name.strip())
                if r is None or r.id is None:
                    raise AssignmentError(
                        f"no reviewer named {name.strip()!r}; add them with `blind-review add-reviewer {name.strip()}`"
                    )
                ids.append(r.id)
        else:  # the batch's own reviewers, or every reviewer when it has none
            ids = batch_repo.batch_reviewer_ids(session, batch.id)
            if not ids:
                ids = [p.id for p in list_people(engine, Role.REVIEWER)]
    names = {p.id: p.name for p in list_people(engine)}
    with write_session(engine) as session:
        repo.lock_batch(session, batch.id, exclusive=True)
        if reviewer_names:  # the people named become the batch's reviewers (if they were not already)
            batch_repo.add_batch_reviewers(session, batch.id, ids)
        released = repo.release_unstarted(session, batch.id) if rebalance else 0
        now = utcnow()
        raw = repo.plan_inputs(session, batch.id)
        items = [PlanItem(i, (a, b) if b is not None else None, g) for i, a, b, g in raw]
        taken = repo.taken_labels(session, batch.id)
        round_no = len(taken)  # a new round of planning draws fresh randomness, reproducibly
        plan = plan_assignments(
            items,
            ids,
            rubric.overlap,
            batch.seed,
            secret_bytes(batch.secret),
            holders=repo.holders(session, batch.id, now),
            had=repo.reviewer_items(session, batch.id),
            start_positions=repo.next_positions(session, batch.id),
            taken_labels=taken,
            repeat_share=rubric.repeat_share,
            repeat_min_gap=rubric.repeat_min_gap,
            round_no=round_no,
        )
        repo.insert_assignments(
            session,
            [
                {
                    "batch_id": batch.id,
                    "item_id": p.item_id,
                    "reviewer_id": p.reviewer_id,
                    "occurrence": p.occurrence,
                    "position": p.position,
                    "label": p.label,
                    "swapped": p.swapped,
                    "status": AssignmentStatus.PENDING,
                }
                for p in plan
            ],
        )
    per: dict[str, int] = defaultdict(int)
    for p in plan:
        per[names.get(p.reviewer_id, str(p.reviewer_id))] += 1
    log.info(
        "assigned %d item showings in batch %r to %d reviewer(s)%s",
        len(plan),
        batch.name,
        len(ids),
        f"; {released} unopened re-planned" if released else "",
    )
    return AssignSummary(batch.name, len(ids), len(plan), released, dict(per))


def pool_start(secret: bytes, reviewer_id: int, position: int) -> int:
    """Where a reviewer's claim at ``position`` starts walking the pool order (a value of ``Item.pool_key``'s
    range): keyed by the batch's secret, so claims are reproducible from the database, private, so two
    reviewers claiming at once start at different points and rarely want the same item, and unknowable to a
    reviewer, who could otherwise tell which item (so which model's output) a claim reaches."""
    return keyed_int(secret, POOL_KEY_BITS, "pool-start", reviewer_id, position)


def claim_in(session: Session, batch_id: int, reviewer_id: int) -> int | None:
    """The assignment id this reviewer should see next, claiming a pool slot if their own queue is empty.

    Runs in the caller's transaction, so showing the item can share its commit.
    Returns None when there is nothing left for them. An expired reservation of their own is renewed if its
    slot is still free; if someone else took it meanwhile it is dropped, unless the reviewer had opened it
    (then it stays until they submit, and the submit is refused with a message). Only people with the reviewer role
    claim pool slots; a lead or an admin sees only what an admin planned for them by name.
    """
    ttl = timedelta(seconds=reservation_seconds())
    batch = repo.lock_batch(session, batch_id, exclusive=False)
    if batch is None:
        return None
    if batch.status != BatchStatus.OPEN:
        raise BatchClosedError("This batch is closed; thank you for your reviews.")
    now = utcnow()
    # The head of the queue is enough: a reviewer's queue can hold thousands of planned items.
    for a in repo.pending_queue(session, batch_id, reviewer_id, limit=50):
        assert a.id is not None
        if a.reserved_until is None or a.reserved_until > now:
            return a.id
        if not repo.lock_item(session, a.item_id):
            continue
        if a.occurrence > 0 or repo.held_count(session, a.item_id, now, excluding=a.id) < batch.overlap:
            repo.update_assignment(session, a.id, reserved_until=now + ttl)
            return a.id
        if a.shown_at is not None:
            # Opened and perhaps half answered: keep it on screen rather than let a rerun (a toggle, a refresh)
            # silently drop it; submitting it is refused with a message saying what happened.
            return a.id
        repo.delete_assignment(session, a.id)
    role = repo.reviewer_role(session, reviewer_id)
    if role is None or not open_to_reviewer(session, batch, reviewer_id, role):
        return None  # not one of the batch's reviewers; or a lead or an admin, who has seen the results
    # The reviewer's private place to start in the pool order, new at each claim (their next position),
    # reproducible from the stored secret; the database walks on from there to the next free items.
    position = repo.next_position(session, batch_id, reviewer_id)
    secret = secret_bytes(batch.secret)
    start = pool_start(secret, reviewer_id, position)
    allocation = batch_rubric(batch).allocation
    if allocation.adaptive:  # keep a few samples released (README, "Adaptive allocation")
        release_for_claim(session, batch_id, secret, allocation, reviewer_id, position, force=False)
    busy: list[int] = []
    for _round in range(2 if allocation.adaptive else 1):
        for item_id in claim_repo.pool_walk(session, batch_id, reviewer_id, batch.overlap, now, start=start):
            found = repo.lock_free_slot(session, item_id, now, batch.overlap, wait=False)
            if found == repo.SlotLock.FREE:
                return _claim(session, batch, reviewer_id, item_id, position, now, ttl)
            if found == repo.SlotLock.BUSY:
                busy.append(item_id)  # FULL: taken between the walk's read and our lock
        # Adaptive: this reviewer has had or sees taken every released item; a new sample has items they never had.
        if busy or not allocation.adaptive:
            break
        if not release_for_claim(session, batch_id, secret, allocation, reviewer_id, position, force=True):
            break
    # Items another transaction had at that moment: a claim or, often at the end of a batch, a submit of
    # another reviewer, which fills no slot. Skipping them was quick while other items were free; with none
    # left, wait for each to finish and look again, or the reviewer would be told "nothing left" beside an
    # item that still needs them.
    for item_id in busy:
        if repo.lock_free_slot(session, item_id, now, batch.overlap, wait=True) == repo.SlotLock.FREE:
            return _claim(session, batch, reviewer_id, item_id, position, now, ttl)
    return None


def _claim(
    session: Session, batch: Batch, reviewer_id: int, item_id: int, position: int, now: datetime, ttl: timedelta
) -> int:
    """Insert the reviewer's reservation of a pool slot of the item (locked, with a free slot), its side and
    label drawn from the batch's secret; returns the new assignment's id."""
    assert batch.id is not None
    secret = secret_bytes(batch.secret)
    model_a, model_b = repo.item_models(session, item_id)
    swapped = False
    if model_b is not None:
        sides = repo.reviewer_sides(session, batch.id, reviewer_id)
        coin = KeyedRandom(secret, "pool-side", reviewer_id, item_id)
        swapped = pool_orientation(sides, model_a, model_b, coin)
    label_rng = KeyedRandom(secret, "pool", reviewer_id, item_id, now.timestamp())
    label = draw_labels(label_rng, 1)[0]
    while repo.label_taken(session, batch.id, label):
        label = draw_labels(label_rng, 1)[0]
    repo.insert_assignments(
        session,
        [
            {
                "batch_id": batch.id,
                "item_id": item_id,
                "reviewer_id": reviewer_id,
                "occurrence": 0,
                "position": position,
                "label": label,
                "swapped": swapped,
                "status": AssignmentStatus.PENDING,
                "reserved_until": now + ttl,
            }
        ],
    )
    claimed = repo.assignment_id_for(session, item_id, reviewer_id)
    # Ids only: the item's models stay out of the log, which names the reviewer.
    log.info("reviewer %d claimed a pool slot in batch %d (assignment %s)", reviewer_id, batch.id, claimed)
    return claimed
