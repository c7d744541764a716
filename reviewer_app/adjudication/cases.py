"""The adjudication queue: disagreements beyond the rubric's threshold, shown blind to whoever rules on them.

Who: a batch's leads and admins, and the reviewers its rubric names as ``adjudicators`` (designated senior
reviewers). Nobody rules on an item they were given themselves: that is their own disagreement. What they see
is exactly what a reviewer sees of the item (``review.reviews.blind_view_in``), the answers under "A"/"B" on
sides drawn for them from the batch's secret, and the panel's answers and comments as "Reviewer 1, 2, ...",
in an order also drawn from the secret, never a name. Cases are addressed by an opaque token (a keyed digest
of the adjudicator, item and question), so nothing a page keeps or sends carries an item id or an order that
follows the load.

Which items are disputed is ``analysis.disputes.find_disputes``: the report counts the same ones.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy.engine import Engine
from sqlmodel import Session

from reviewer_app.analysis.disputes import dispute_rule, find_disputes
from reviewer_app.batches.catalog import batch_rubric
from reviewer_app.batches.titles import batch_title_in
from reviewer_app.domain.enums import Mode, Role
from reviewer_app.domain.keyed_random import keyed_digest, keyed_int, secret_bytes
from reviewer_app.domain.rubric import PAIRWISE_DIMENSION, Dimension, Rubric
from reviewer_app.domain.views import Person, ReviewItemView, choice_label
from reviewer_app.errors import AdjudicationError, AuthError, NotFoundError
from reviewer_app.review.reviews import blind_view_in
from storage.engine import read_session, write_session
from storage.models import Batch
from storage.repositories.adjudication import (
    batches_naming_adjudicators,
    panel_answers,
    rated_items,
    ratings_revision,
    ruled_keys,
    ruling_for,
    save_ruling,
)
from storage.repositories.batches.batches import get_batch, list_batches
from storage.repositories.results.frames import ratings_frame

__all__ = [
    "AdjudicationQueue",
    "CaseView",
    "PanelLine",
    "adjudicable_batches",
    "case_view",
    "open_case",
    "queue",
    "rule",
]

MAX_REASON = 2000


@dataclass(frozen=True)
class PanelLine:
    """One reviewer's answer on the disputed question, as the adjudicator's sides show it, and their comment."""

    reviewer: str  # "Reviewer 1", ...
    answer: str
    comment: str


@dataclass(frozen=True)
class CaseView:
    """One disputed item and question, blind: the item as a reviewer sees it (with the adjudicator's sides),
    the question, the panel's answers, and the ruling so far (its answer in these sides, and reason)."""

    token: str
    position: int  # 1-based, in this adjudicator's order
    total: int
    item: ReviewItemView
    dimension: Dimension
    choices: tuple[tuple[str, str], ...]  # (value as the page submits it, label)
    panel: tuple[PanelLine, ...]
    ruled_value: str | None
    reason: str
    ruled_by: str | None
    ruled_at: datetime | None


@dataclass(frozen=True)
class AdjudicationQueue:
    """A batch's queue for one adjudicator: the case tokens in their order, open ones first."""

    batch_id: int
    title: str
    rule: str
    tokens: tuple[str, ...]
    open: int
    ruled: int


@dataclass(frozen=True)
class _Case:
    token: str
    item_id: int
    dimension: str
    ruled: bool


def may_adjudicate(person: Person, rubric: Rubric) -> bool:
    """Leads and admins rule on any batch; a reviewer on the batches whose rubric names them."""
    return person.can(Role.LEAD) or person.name in rubric.adjudication.adjudicators


def adjudicable_batches(engine: Engine, person: Person) -> list[tuple[int, str]]:
    """(batch id, title) of the batches ``person`` may rule on (not archived), newest first. Cheap for a
    reviewer named nowhere: only batches whose rubric has an ``[adjudication]`` table are read."""
    with read_session(engine) as session:
        if person.can(Role.LEAD):  # the reviewers' titles, as the rest of the page is blind too
            return [(int(b.id or 0), batch_title_in(session, b)) for b in reversed(list_batches(session))]
        named = [b for b in batches_naming_adjudicators(session) if may_adjudicate(person, batch_rubric(b))]
        return sorted(((int(b.id or 0), batch_title_in(session, b)) for b in named), reverse=True)


def _batch_for(session: Session, person: Person, batch_id: int) -> tuple[Batch, Rubric]:
    batch = get_batch(session, batch_id)
    if batch is None or batch.archived_at is not None:
        raise NotFoundError("That batch is not there any more; pick another.")
    rubric = batch_rubric(batch)
    if not may_adjudicate(person, rubric):
        raise AuthError(
            "You do not adjudicate this batch: its leads and admins do, and the reviewers its rubric lists under "
            "[adjudication] adjudicators."
        )
    return batch, rubric


_KEPT = 8  # batches whose disputes are kept between page runs
_disputes_kept: OrderedDict[tuple[object, ...], list[tuple[int, str]]] = OrderedDict()
_disputes_lock = threading.Lock()


def _disputed(session: Session, batch: Batch, rubric: Rubric) -> list[tuple[int, str]]:
    """(item id, question) of the batch's disputes, kept per batch and ratings revision: finding them reads every
    rating (3.5 s at 300,000), the revision is one indexed aggregate, and every click of the page asks again."""
    assert batch.id is not None
    key = (batch.id, batch.content_hash, *ratings_revision(session, batch.id))
    with _disputes_lock:
        found = _disputes_kept.get(key)
        if found is None:
            disputes = find_disputes(ratings_frame(session, batch.id, python_strings=True), rubric)
            found = list(zip(disputes["item_id"].astype(int).tolist(), disputes["dimension"].astype(str).tolist(),
                             strict=True))  # fmt: skip
            _disputes_kept[key] = found
            while len(_disputes_kept) > _KEPT:
                _disputes_kept.popitem(last=False)
        _disputes_kept.move_to_end(key)
        return found


def _cases(session: Session, person: Person, batch: Batch, rubric: Rubric) -> list[_Case]:
    assert batch.id is not None
    key = secret_bytes(batch.secret)
    own = rated_items(session, batch.id, person.id)
    ruled = ruled_keys(session, batch.id)
    cases = [
        _Case(_token(key, person.id, item, dim), item, dim, (item, dim) in ruled)
        for item, dim in _disputed(session, batch, rubric)
        if item not in own
    ]
    cases.sort(key=lambda c: (c.ruled, keyed_int(key, 64, "adjudication-order", person.id, c.item_id, c.dimension)))
    return cases


def _token(key: bytes, person_id: int, item_id: int, dimension: str) -> str:
    return keyed_digest(key, "adjudication-case", person_id, item_id, dimension)[:12].hex()


def queue(engine: Engine, person: Person, batch_id: int) -> AdjudicationQueue:
    """The batch's queue for ``person``; raises AuthError when they may not rule on it."""
    return open_case(engine, person, batch_id, None, view=False)[0]


def open_case(
    engine: Engine, person: Person, batch_id: int, token: str | None, *, view: bool = True
) -> tuple[AdjudicationQueue, CaseView | None]:
    """The batch's queue for ``person`` and, with ``view``, the case ``token`` (or the first in the queue when
    ``token`` is None or no longer in it; None when the queue is empty): the page's one call per run, reading the
    batch's ratings once. Raises AuthError when they may not rule on the batch."""
    with read_session(engine) as session:
        batch, rubric = _batch_for(session, person, batch_id)
        cases = _cases(session, person, batch, rubric)
        ruled = sum(c.ruled for c in cases)
        tokens = tuple(c.token for c in cases)
        found = AdjudicationQueue(batch_id, batch_title_in(session, batch), dispute_rule(rubric), tokens,
                                  len(cases) - ruled, ruled)  # fmt: skip
        if not view or not cases:
            return found, None
        n = tokens.index(token) if token in tokens else 0
        return found, _case_in(session, person, batch, rubric, cases, n)


def _find(cases: list[_Case], token: str) -> tuple[int, _Case]:
    for n, case in enumerate(cases):
        if case.token == token:
            return n, case
    raise AdjudicationError("That disagreement is not in your queue any more (its answers changed); open the next one.")


def _swapped(batch: Batch, person: Person, item_id: int) -> bool:
    """The sides this adjudicator sees the pair on: drawn from the batch's secret, per adjudicator and item."""
    return keyed_int(secret_bytes(batch.secret), 1, "adjudication-side", person.id, item_id) == 1


def _question(view: ReviewItemView, rubric: Rubric, name: str) -> Dimension:
    for dim in view.dimensions:
        if dim.name == name:
            return dim
    if rubric.mode == Mode.PAIRWISE and name == PAIRWISE_DIMENSION.name:
        return PAIRWISE_DIMENSION
    return rubric.dimension(name)


_FLIP = {"left": "right", "right": "left"}


def _flip(value: str, swapped: bool) -> str:
    """A pairwise answer as the other arrangement of the same pair sees it ("left" <-> "right" when swapped)."""
    return _FLIP.get(value, value) if swapped else value


def case_view(engine: Engine, person: Person, batch_id: int, token: str) -> CaseView:
    """One case of ``person``'s queue, blind. Raises AdjudicationError when the token is no longer in it."""
    with read_session(engine) as session:
        batch, rubric = _batch_for(session, person, batch_id)
        cases = _cases(session, person, batch, rubric)
        n, _case = _find(cases, token)
        return _case_in(session, person, batch, rubric, cases, n)


def _case_in(session: Session, person: Person, batch: Batch, rubric: Rubric, cases: list[_Case], n: int) -> CaseView:
    """The ``n``-th of ``cases`` as ``person`` sees it."""
    case = cases[n]
    mine = _swapped(batch, person, case.item_id)
    view = blind_view_in(session, batch, case.item_id, swapped=mine)
    dim = _question(view, rubric, case.dimension)
    key = secret_bytes(batch.secret)
    answers = sorted(
        panel_answers(session, case.item_id, case.dimension),
        key=lambda a: keyed_int(key, 64, "adjudication-panel", person.id, case.item_id, a.reviewer_id),
    )
    panel = []
    for k, a in enumerate(answers, start=1):
        value = a.value
        if rubric.mode == Mode.PAIRWISE:
            value = _flip(_flip(value, a.swapped), mine)  # to the item's own order, then to these sides
        panel.append(PanelLine(f"Reviewer {k}", _label(dim, value), (a.comment or "").strip()))
    found = ruling_for(session, case.item_id, case.dimension)
    ruling, ruled_by = (None, None) if found is None else found
    if ruling is not None and ruling.adjudicator_id == person.id:
        ruled_by = "you"
    ruled_value = None
    if ruling is not None:
        ruled_value = _canonical_to_seen(ruling.value, mine) if rubric.mode == Mode.PAIRWISE else ruling.value
    return CaseView(
        token=case.token,
        position=n + 1,
        total=len(cases),
        item=view,
        dimension=dim,
        choices=tuple((v, _label(dim, v)) for v in dim.allowed_values()),
        panel=tuple(panel),
        ruled_value=ruled_value,
        reason=ruling.reason if ruling is not None else "",
        ruled_by=ruled_by,
        ruled_at=ruling.updated_at if ruling is not None else None,
    )


def _label(dim: Dimension, value: str) -> str:
    try:
        label = choice_label(dim, value)
    except (KeyError, ValueError):
        return value
    return label if label == value or not dim.numeric() else f"{value} ({label})"


def _canonical_to_seen(value: str, swapped: bool) -> str:
    return _flip({"a": "left", "b": "right"}.get(value, value), swapped)


def _seen_to_canonical(value: str, swapped: bool) -> str:
    plain = _flip(value, swapped)
    return {"left": "a", "right": "b"}.get(plain, plain)


def rule(engine: Engine, person: Person, batch_id: int, token: str, value: str, reason: str) -> None:
    """Record ``person``'s ruling on a case: ``value`` as the page offered it (their sides), with a reason.

    Raises AdjudicationError for no reason, an answer the question does not take or a case no longer in the
    queue; AuthError when they may not rule on the batch."""
    reason = reason.strip()
    if not reason:
        raise AdjudicationError("Write the reason for your ruling: the lead reads it beside the item in the report.")
    if len(reason) > MAX_REASON:
        raise AdjudicationError(f"The reason is {len(reason)} characters; keep it under {MAX_REASON}.")
    with write_session(engine) as session:
        batch, rubric = _batch_for(session, person, batch_id)
        _n, case = _find(_cases(session, person, batch, rubric), token)
        mine = _swapped(batch, person, case.item_id)
        view = blind_view_in(session, batch, case.item_id, swapped=mine)
        dim = _question(view, rubric, case.dimension)
        if not dim.accepts(value):
            raise AdjudicationError(f"{value!r} is not an answer to this question: it takes {dim.value_hint()}.")
        stored = _seen_to_canonical(value, mine) if rubric.mode == Mode.PAIRWISE else value
        assert batch.id is not None
        save_ruling(session, batch_id=batch.id, item_id=case.item_id, dimension=case.dimension, value=stored,
                    reason=reason, adjudicator_id=person.id)  # fmt: skip
