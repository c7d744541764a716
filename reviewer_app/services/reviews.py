"""The reviewer's side: the blind view of an item, submitting and revising answers, progress.

:class:`ReviewItemView` is built here and is all a reviewer's page ever receives. It has no field for a
model, an output id, an item id, a sample id or a file: what is not in the view cannot leak into the page,
its HTML or its session state.
"""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy.engine import Engine
from sqlmodel import Session

from reviewer_app.domain.enums import AssignmentStatus, BatchStatus, Mode
from reviewer_app.domain.views import BatchProgress, QueueEntry, ReviewItemView, ShownOutput
from reviewer_app.errors import AuthError, BatchClosedError, NotFoundError, ValidationError
from reviewer_app.services.assignment import claim_in
from reviewer_app.services.batches import batch_rubric, image_path
from storage.engine import read_session, write_session
from storage.models import utcnow
from storage.repositories import assignments as assignment_repo
from storage.repositories import batches as batch_repo
from storage.repositories import ratings as repo


def batches_for(engine: Engine, reviewer_id: int) -> list[BatchProgress]:
    """Open batches, and closed ones this reviewer worked on, with their progress."""
    out = []
    with read_session(engine) as session:
        progress = repo.reviewer_progress_by_batch(session, reviewer_id)  # one grouped query, not one per batch
        for b in batch_repo.list_batches(session):
            assert b.id is not None
            done, assigned = progress.get(b.id, (0, 0))
            status = BatchStatus(b.status)
            if status == BatchStatus.OPEN or assigned:
                out.append(BatchProgress(b.id, b.name, status, done, assigned))
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
    rubric = batch_rubric(batch)
    _item, sample, scenario, out_a, out_b = repo.item_content(session, a.item_id)
    if out_b is None:
        outputs = [ShownOutput("", out_a.text)]
    else:
        left, right = (out_b, out_a) if a.swapped else (out_a, out_b)
        outputs = [ShownOutput("A", left.text), ShownOutput("B", right.text)]
    answers = repo.ratings_for(session, assignment_id)
    done, total, position = repo.queue_counts(session, a.batch_id, reviewer_id, a.position)
    return ReviewItemView(
        assignment_id=assignment_id,
        label=a.label,
        mode=Mode(batch.mode),
        scenario=scenario,
        prompt=json.loads(sample.prompt_json),
        images=json.loads(sample.images_json),
        criteria=sample.criteria if rubric.show_criteria else None,
        reference=sample.reference if rubric.show_reference else None,
        outputs=outputs,
        dimensions=list(rubric.dimensions_for(scenario)),
        answers=answers,
        comment=a.comment or "",
        cant_judge=a.cant_judge,
        submitted=a.status != AssignmentStatus.PENDING,
        position=position,
        total=total,
        done=done,
        instructions=rubric.instructions,
        editable=batch.status == BatchStatus.OPEN,
    )


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
) -> None:
    """Save a reviewer's answers in one transaction; when this returns, the rating is committed.

    "Can't judge" (with a reason) records no scores and frees the slot for another reviewer. Raises
    :class:`ValidationError` for a missing or out-of-scale answer, :class:`BatchClosedError` after closing.
    """
    now = utcnow()
    with write_session(engine) as session:
        a = assignment_repo.get_assignment(session, assignment_id, lock=True)
        if a is None or a.reviewer_id != reviewer_id:
            raise AuthError("That item is not in your queue.")
        batch = batch_repo.get_batch(session, a.batch_id)
        assert batch is not None and batch.id is not None
        if batch.status != BatchStatus.OPEN:
            raise BatchClosedError("This batch is closed; answers can no longer be changed.")
        dims = batch_rubric(batch).dimensions_for(repo.item_scenario(session, a.item_id))
        rows: list[dict[str, Any]] = []
        if cant_judge is not None:
            if not cant_judge.strip():
                raise ValidationError([], "Please say briefly why you can't judge this item.")
            repo.delete_ratings(session, assignment_id)
            status = AssignmentStatus.SKIPPED
        else:
            missing = [d.name for d in dims if d.name not in answers or answers[d.name] in (None, "")]
            if missing:
                raise ValidationError([], f"Please answer: {', '.join(missing)}.")
            for d in dims:
                value = str(answers[d.name])
                if not d.accepts(value):
                    raise ValidationError([], f"{value!r} is not an answer on the {d.name} scale.")
                rows.append(
                    {
                        "assignment_id": assignment_id,
                        "batch_id": batch.id,
                        "item_id": a.item_id,
                        "reviewer_id": reviewer_id,
                        "dimension": d.name,
                        "value": value,
                    }
                )
            status = AssignmentStatus.DONE
        pending = a.status == AssignmentStatus.PENDING
        if pending and a.reserved_until is not None and a.reserved_until <= now and a.occurrence == 0:
            # The hold expired; take the answer only if the slot is still free.
            assignment_repo.lock_item(session, a.item_id)
            if assignment_repo.held_count(session, a.item_id, now, excluding=a.id) >= batch.overlap:
                assignment_repo.delete_assignment(session, assignment_id)
                raise BatchClosedError(
                    "You held this item too long and other reviewers have completed it; your "
                    "answer was not needed. Please continue with the next item."
                )
        repo.upsert_ratings(session, rows, now)
        seconds = a.seconds_spent
        if pending and a.shown_at is not None:
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
