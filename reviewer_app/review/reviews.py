"""The reviewer's side: the blind view of an item, submitting and revising answers, their batches and queue.

:class:`ReviewItemView` is built here and is all a reviewer's page ever receives. It has no field for a
model, an output id, an item id, a sample id or a file: what is not in the view cannot leak into the page,
its HTML or its session state. An output loaded with ``--on-leak mask`` is shown with the names it leaks
replaced by "[model name]", and the batch and its scenario go by the titles reviewers see
(:mod:`reviewer_app.batches.titles`), never by a name that names a model.

A submit that makes an item's first showing count (a pool claim, an expired or released reservation, a
"can't judge" turned into an answer) is decided under the item's lock: the first answer to arrive while
the item is short of k completed ratings is kept, the other reviewers' open reservations beyond k are
released, and a later answer is refused with a message saying what happened. The item never goes past k.

The reviewer's half-filled forms are ``drafts``'s, the list of their finished items ``finished_items``'s.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from sqlalchemy.engine import Engine
from sqlmodel import Session

from reviewer_app.batches.catalog import batch_rubric
from reviewer_app.batches.images import image_path
from reviewer_app.batches.titles import batch_title_in, scenario_title_in
from reviewer_app.domain.enums import AssignmentStatus, BatchStatus, Mode
from reviewer_app.domain.rubric import Dimension
from reviewer_app.domain.views import BatchProgress, QueueEntry, ReviewItemView, ShownCheck, ShownOutput
from reviewer_app.errors import (
    AnswerChangedError,
    AuthError,
    BatchClosedError,
    NotFoundError,
    SlotTakenError,
    ValidationError,
)
from reviewer_app.review.assignment import claim_in
from reviewer_app.settings import max_comment_chars
from storage.engine import read_session, write_session
from storage.models import Assignment, Batch, Output, utcnow
from storage.repositories.batches import batches as batch_repo
from storage.repositories.review import answers as repo
from storage.repositories.review import assignments as assignment_repo
from storage.repositories.review import drafts as draft_repo
from storage.repositories.review import progress as queue_repo

log = logging.getLogger(__name__)

ANY_SAVE = object()  # submit_review's saved_at when the caller does not check for a save from elsewhere

EXPIRED_AND_COMPLETED = (
    "You held this item too long: your hold on it ran out and other reviewers have completed it meanwhile, "
    "so your answer was not saved. Please continue with the next item."
)
SUBMITTED_FIRST = (
    "While you had this item open, another reviewer submitted their answer to it first, and it now has all "
    "the ratings it needs, so your answer was not saved. Please continue with the next item."
)
COMPLETED_AFTER_SKIP = (
    "Other reviewers have completed this item since you said you could not judge it, so your answer was "
    "not saved. Please continue with the next item."
)


def batches_for(engine: Engine, reviewer_id: int) -> list[BatchProgress]:
    """Open batches for this reviewer (those with no reviewers of their own, or of which they are one), and
    those with items planned for them, with their progress, each under the title reviewers see (never a name
    that names a model: see :mod:`reviewer_app.batches.titles`). A batch never opened yet is nobody's."""
    out = []
    with read_session(engine) as session:
        progress = queue_repo.reviewer_progress_by_batch(session, reviewer_id)  # one grouped query, not one per batch
        members = batch_repo.batches_with_reviewers(session)
        for b in batch_repo.list_batches(session):
            assert b.id is not None
            done, assigned = progress.get(b.id, (0, 0))
            status = BatchStatus(b.status)
            if b.opened_at is None:
                continue
            if (status == BatchStatus.OPEN and reviewer_id in members.get(b.id, {reviewer_id})) or assigned:
                out.append(BatchProgress(b.id, batch_title_in(session, b), status, done, assigned))
    return out


def queue(engine: Engine, batch_id: int, reviewer_id: int) -> list[QueueEntry]:
    """The reviewer's own queue, in their order (for going back to revise an answer)."""
    with read_session(engine) as session:
        return [
            QueueEntry(a.id, a.label, a.position, AssignmentStatus(a.status))
            for a in assignment_repo.reviewer_assignments(session, batch_id, reviewer_id)
            if a.id is not None
        ]


def next_item(engine: Engine, batch_id: int, reviewer_id: int) -> ReviewItemView | None:
    """Where the reviewer resumes: their first unfinished item (claiming one if needed), or None when done."""
    with write_session(engine) as session:  # one transaction: one commit to wait for, not two
        assignment_id = claim_in(session, batch_id, reviewer_id)
        return None if assignment_id is None else _view_in(session, reviewer_id, assignment_id)


@dataclass(frozen=True)
class BatchWork:
    """A batch with an item waiting for the reviewer, and that item."""

    batch_id: int
    view: ReviewItemView


def first_batch_with_work(engine: Engine, reviewer_id: int, batch_ids: list[int]) -> BatchWork | None:
    """The first of ``batch_ids`` (in that order) with an item for the reviewer, and the item (claimed from
    the pool if need be, as :func:`next_item` does); None when none has one. For a reviewer who landed on a
    batch with nothing waiting for them while another has work."""
    for batch_id in batch_ids:
        try:
            view = next_item(engine, batch_id, reviewer_id)
        except BatchClosedError:
            continue
        if view is not None:
            return BatchWork(batch_id, view)
    return None


def item_view(engine: Engine, reviewer_id: int, assignment_id: int) -> ReviewItemView:
    """The blind view of one of the reviewer's assignments; marks it as shown the first time."""
    with write_session(engine) as session:
        return _view_in(session, reviewer_id, assignment_id)


def _view_in(session: Session, reviewer_id: int, assignment_id: int) -> ReviewItemView:
    a = assignment_repo.get_assignment(session, assignment_id)
    if a is None or a.reviewer_id != reviewer_id:
        raise NotFoundError("That item is not in your queue.")
    if a.shown_at is None:
        assignment_repo.update_assignment(session, assignment_id, shown_at=utcnow())
    batch = batch_repo.get_batch(session, a.batch_id)
    assert batch is not None
    done, total, position = queue_repo.queue_counts(session, a.batch_id, reviewer_id, a.position)
    return replace(
        blind_view_in(session, batch, a.item_id, swapped=a.swapped),
        assignment_id=assignment_id,
        label=a.label,
        answers=repo.ratings_for(session, assignment_id),
        comment=a.comment or "",
        cant_judge=a.cant_judge,
        submitted=a.status != AssignmentStatus.PENDING,
        position=position,
        total=total,
        done=done,
        saved_at=a.submitted_at,
        from_pool=a.status == AssignmentStatus.PENDING and a.reserved_until is not None,
    )


def blind_view_in(session: Session, batch: Batch, item_id: int, *, swapped: bool) -> ReviewItemView:
    """What anyone judging ``item_id`` blind is shown, before any answer: the prompt, the output(s) under their
    anonymous sides (``swapped``: the item's second output shown as A), the questions, criteria, reference and
    checks as the rubric shows them, under the scenario's title for reviewers. A reviewer's page adds their
    own queue and answers (:func:`item_view`); an LLM judge reads exactly this (``reviewer_app.judge``), so
    it cannot be told more than a reviewer is."""
    rubric = batch_rubric(batch)
    _item, sample, scenario, out_a, out_b = repo.item_content(session, item_id)
    shown = [out_a] if out_b is None else [out_b, out_a] if swapped else [out_a, out_b]
    sides = [""] if out_b is None else ["A", "B"]
    outputs = [
        ShownOutput(side, _shown(o), _checks(o) if rubric.show_checks else ())
        for side, o in zip(sides, shown, strict=True)
    ]
    return ReviewItemView(
        assignment_id=0,
        label="",
        mode=Mode(batch.mode),
        scenario=scenario_title_in(session, batch, scenario),  # the rubric below goes by the real name
        prompt=json.loads(sample.prompt_json),
        images=json.loads(sample.images_json),
        criteria=sample.criteria if rubric.show_criteria else None,
        reference=sample.reference if rubric.show_reference else None,
        outputs=outputs,
        dimensions=list(rubric.dimensions_for(scenario)),
        instructions=rubric.instructions,
        editable=batch.status == BatchStatus.OPEN,
    )


def _checks(output: Output) -> tuple[ShownCheck, ...]:
    """The automatic checks' results on an output, for a rubric with ``show_checks`` (off by default: a
    check's name can hint at what is being looked for)."""
    if output.check_results is None:
        return ()
    return tuple(ShownCheck(str(name), bool(ok), detail) for name, ok, detail in json.loads(output.check_results))


def _shown(output: Output) -> str:
    """What a reviewer sees of an output: its masked copy when the load masked leaked names."""
    return output.text if output.shown_text is None else output.shown_text


def image_bytes(stored_name: str) -> bytes:
    """The bytes of an image a :class:`ReviewItemView` names (by content hash); :class:`NotFoundError` for a
    name that is not a stored image's. The reviewer's page reads images only through this."""
    try:
        return image_path(stored_name).read_bytes()
    except OSError:
        raise NotFoundError("That image is not stored; ask your admin to load the batch again.") from None


def submit_review(
    engine: Engine,
    reviewer_id: int,
    assignment_id: int,
    answers: dict[str, str],
    *,
    comment: str = "",
    cant_judge: str | None = None,
    saved_at: datetime | None | object = ANY_SAVE,
) -> None:
    """Save a reviewer's answers in one transaction; when this returns, the rating is committed.

    "Can't judge" (with a reason) records no scores and frees the slot for another reviewer. ``saved_at``:
    the answer's last save as the submitting page saw it (:attr:`ReviewItemView.saved_at`, None for an item
    never submitted); when the answer has been saved since (from the reviewer's other tab or window), nothing
    is saved and :class:`AnswerChangedError` says so. Leave it out to save whatever was there (scripts).
    Raises :class:`ValidationError` for a missing or out-of-scale answer or a comment over
    ``BLIND_REVIEW_MAX_COMMENT_CHARS``, :class:`BatchClosedError` after closing, and
    :class:`SlotTakenError` (a :class:`BatchClosedError`) when other reviewers completed the item first (the
    assignment is then removed from the reviewer's queue; see the module docstring).
    """
    _check_lengths(comment, cant_judge)
    now = utcnow()
    refusal: str | None = None
    with write_session(engine) as session:
        a = assignment_repo.get_assignment(session, assignment_id)
        if a is None or a.reviewer_id != reviewer_id:
            raise AuthError("That item is not in your queue.")
        if a.occurrence == 0:
            # This answer may make the assignment hold one of the item's k slots: decide under the batch's
            # shared lock (no plan is being made) and the item's lock, taken before the assignment's (the
            # order every claim and submit follows). Taken for revisions of a done answer too: the status
            # read above is unlocked, and the reviewer's other tab may turn it into "can't judge" meanwhile.
            assignment_repo.lock_batch(session, a.batch_id, exclusive=False)
            assignment_repo.lock_item(session, a.item_id, wait=True)
        a = assignment_repo.get_assignment(session, assignment_id, lock=True)
        if a is None or a.reviewer_id != reviewer_id:
            raise AuthError("That item is no longer in your queue; please continue with the next item.")
        batch = batch_repo.get_batch(session, a.batch_id)
        assert batch is not None and batch.id is not None
        if batch.status != BatchStatus.OPEN:
            raise BatchClosedError("This batch is closed; answers can no longer be changed.")
        if saved_at is not ANY_SAVE and not _same_moment(a.submitted_at, saved_at):
            raise AnswerChangedError(_changed_message(a))
        dims = batch_rubric(batch).dimensions_for(repo.item_scenario(session, a.item_id))
        rows, status = _answer_rows(dims, answers, cant_judge, a, batch.id)
        if status == AssignmentStatus.DONE and a.occurrence == 0 and a.status != AssignmentStatus.DONE:
            refusal = _take_slot(session, a, batch.overlap, now)
        if refusal is not None:
            if a.status == AssignmentStatus.PENDING:
                assignment_repo.delete_assignment(session, assignment_id)  # committed with nothing else
        else:
            if cant_judge is not None:
                repo.delete_ratings(session, assignment_id)
            repo.upsert_ratings(session, rows, now)
            seconds = a.seconds_spent
            if a.status == AssignmentStatus.PENDING and a.shown_at is not None:
                seconds = (now - a.shown_at).total_seconds()
            assignment_repo.update_assignment(
                session,
                assignment_id,
                status=status,
                comment=comment.strip() or None,
                cant_judge=cant_judge.strip() if cant_judge else None,
                submitted_at=now,
                seconds_spent=seconds,
                reserved_until=None,
            )
            draft_repo.delete_draft(session, assignment_id)  # committed with the answer: the form is saved
    if refusal is not None:
        log.info("reviewer %d's answer to assignment %d refused: the item was completed first", reviewer_id, a.id)
        raise SlotTakenError(refusal)


def _same_moment(stored: datetime | None, seen: object) -> bool:
    """Whether the answer's last save is the one the page saw (SQLite gives back naive UTC datetimes)."""
    if stored is None or not isinstance(seen, datetime):
        return stored is None and seen is None
    return stored.replace(tzinfo=None) == seen.replace(tzinfo=None)


def _changed_message(a: Assignment) -> str:
    how = ' as "can\'t judge"' if a.status == AssignmentStatus.SKIPPED else ""
    return (
        f"Your answer to item {a.label} was saved{how} from another tab or window after this page was drawn, "
        "so the answers on this form were not saved. Keep the saved answer, or save this form in its place."
    )


def _check_lengths(comment: str, cant_judge: str | None) -> None:
    limit = max_comment_chars()
    for what, text in (("comment", comment), ("reason", cant_judge or "")):
        n = len(text.strip())
        if n > limit:
            raise ValidationError(
                [], f"Your {what} is {n:,} characters long; the limit is {limit:,}. Please shorten it and submit again."
            )


def _answer_rows(
    dims: tuple[Dimension, ...], answers: dict[str, str], cant_judge: str | None, a: Assignment, batch_id: int
) -> tuple[list[dict[str, Any]], AssignmentStatus]:
    """The rating rows to write and the assignment's new status; :class:`ValidationError` for bad answers."""
    if cant_judge is not None:
        if not cant_judge.strip():
            raise ValidationError([], "Please say briefly why you can't judge this item.")
        return [], AssignmentStatus.SKIPPED
    missing = [question_words(d) for d in dims if d.name not in answers or answers[d.name] in (None, "")]
    if missing:
        raise ValidationError([], f"Please answer: {'; '.join(missing)}.")
    rows: list[dict[str, Any]] = []
    for d in dims:
        value = str(answers[d.name])
        if not d.accepts(value):
            raise ValidationError([], f"{value!r} is not an answer on the {d.name} scale.")
        rows.append(
            {
                "assignment_id": a.id,
                "batch_id": batch_id,
                "item_id": a.item_id,
                "reviewer_id": a.reviewer_id,
                "dimension": d.name,
                "value": value,
            }
        )
    return rows, AssignmentStatus.DONE


def _take_slot(session: Session, a: Assignment, overlap: int, now: datetime) -> str | None:
    """Whether this answer may complete one of the item's k slots (None) or why not (the message). Runs
    under the item's lock. A planned slot always may; any other answer (a pool claim, an expired or
    released reservation, a skipped item answered after all) may while fewer than k other reviewers have
    completed the item, and then releases open reservations of others that would take it past k."""
    planned_and_held = a.status == AssignmentStatus.PENDING and a.reserved_until is None
    if planned_and_held or assignment_repo.item_is_gold(session, a.item_id):
        return None  # planned slots are within k by construction; gold items are outside k
    others = [r for r in assignment_repo.first_showings(session, a.item_id) if r.id != a.id]
    done = sum(1 for r in others if r.status == AssignmentStatus.DONE)
    if done >= overlap:
        if a.status == AssignmentStatus.SKIPPED:
            return COMPLETED_AFTER_SKIP
        expired = a.reserved_until is not None and a.reserved_until <= now
        return EXPIRED_AND_COMPLETED if expired and a.reserved_until != assignment_repo.RELEASED else SUBMITTED_FIRST
    open_others = [
        r
        for r in others
        if r.status == AssignmentStatus.PENDING and (r.reserved_until is None or r.reserved_until > now)
    ]
    excess = done + 1 + len(open_others) - overlap
    if excess > 0:
        # Pool claims before planned slots, and of those the ones nobody has opened yet.
        open_others.sort(key=lambda r: (r.reserved_until is None, r.shown_at is not None, r.id))
        released = [r.id for r in open_others[:excess] if r.id is not None]
        assignment_repo.release_reservations(session, released)
        log.info("assignment %s answered first; %d open reservation(s) of the item released", a.id, len(released))
    return None


def question_words(dim: Dimension) -> str:
    """A question as the reviewer reads it on the form: its description, else its name in words (never the
    rubric's internal name such as ``follows_format``)."""
    return dim.description.strip() or dim.name.replace("_", " ").capitalize()
