"""A reviewer's half-filled form, kept as they go (a draft per assignment) and given back when they return.

Only what the reviewer chose or typed is kept, written in the background so the page never waits for the
commit, and a draft older than the assignment's last submit is stale. Blind like the rest of the reviewer's
side: a draft holds answers by dimension name, a comment and a reason, nothing about outputs or models.
"""

from __future__ import annotations

import json
import logging
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime

from sqlalchemy.engine import Engine

from reviewer_app.errors import AuthError
from storage.engine import read_session, write_session
from storage.models import ReviewDraft, utcnow
from storage.repositories.review import assignments as assignment_repo
from storage.repositories.review import drafts as draft_repo

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Draft:
    """A half-filled form: only what the reviewer chose or typed (stored answers by dimension name)."""

    answers: dict[str, str] = field(default_factory=dict)
    comment: str = ""
    cant_judge: bool = False
    reason: str = ""


def save_draft(
    engine: Engine, reviewer_id: int, assignment_id: int, draft: Draft, *, at: datetime | None = None
) -> None:
    """Keep the reviewer's half-filled form of one of their assignments (replacing the previous draft).

    ``at``: when the reviewer made the change (default now); a draft older than the assignment's last
    submit is stale and :func:`load_draft` ignores it. One small transaction (a read by primary key and
    one upsert). :class:`AuthError` for an assignment that is not theirs."""
    with write_session(engine) as session:
        a = assignment_repo.get_assignment(session, assignment_id)
        if a is None or a.reviewer_id != reviewer_id:
            raise AuthError("That item is not in your queue.")
        row = ReviewDraft(
            assignment_id=assignment_id,
            batch_id=a.batch_id,
            reviewer_id=reviewer_id,
            answers_json=json.dumps(draft.answers, sort_keys=True),
            comment=draft.comment,
            cant_judge=draft.cant_judge,
            reason=draft.reason,
        )
        draft_repo.upsert_draft(session, row, at or utcnow())


# Drafts are written by one background thread per process, in the order the changes were made: the page's
# re-run after an answer does not wait for the commit (on SQLite with synchronous=FULL, ~20 ms of fsync).
_DRAFT_WRITER = ThreadPoolExecutor(max_workers=1, thread_name_prefix="draft-writer")


def save_draft_soon(engine: Engine, reviewer_id: int, assignment_id: int, draft: Draft) -> None:
    """:func:`save_draft` in the background, stamped with the time of the change; errors are logged (a
    draft is a convenience: Submit reports what matters)."""
    _DRAFT_WRITER.submit(_save_logged, engine, reviewer_id, assignment_id, draft, utcnow())


def _save_logged(engine: Engine, reviewer_id: int, assignment_id: int, draft: Draft, at: datetime) -> None:
    try:
        save_draft(engine, reviewer_id, assignment_id, draft, at=at)
    except Exception:  # the thread must go on: log and drop this one draft
        log.exception("draft of assignment %d not saved", assignment_id)


def wait_for_drafts() -> None:
    """Return once every draft handed to :func:`save_draft_soon` so far is written (for tests, shutdown)."""
    _DRAFT_WRITER.submit(lambda: None).result()


def load_draft(engine: Engine, reviewer_id: int, assignment_id: int) -> Draft | None:
    """The reviewer's draft of that assignment: None when there is none, it is not theirs, or it predates
    the assignment's last submit (a change written after the submit that saved it)."""
    with read_session(engine) as session:
        row = draft_repo.get_draft(session, reviewer_id, assignment_id)
        a = assignment_repo.get_assignment(session, assignment_id) if row is not None else None
    if row is None or a is None:
        return None
    if a.submitted_at is not None and _aware(row.updated_at) <= _aware(a.submitted_at):
        return None
    answers = json.loads(row.answers_json)
    return Draft({str(k): str(v) for k, v in answers.items()}, row.comment, row.cant_judge, row.reason)


def discard_draft(engine: Engine, reviewer_id: int, assignment_id: int) -> None:
    """Forget the reviewer's draft of that assignment (they chose to keep the answer saved elsewhere); waits
    for the drafts already handed to :func:`save_draft_soon`, so none is written back after."""
    wait_for_drafts()
    with write_session(engine) as session:
        a = assignment_repo.get_assignment(session, assignment_id)
        if a is not None and a.reviewer_id == reviewer_id:
            draft_repo.delete_draft(session, assignment_id)


def _aware(moment: datetime) -> datetime:
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)
