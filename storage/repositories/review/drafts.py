"""Reviewers' drafts: the half-filled form of one assignment, written on each change, deleted on submit.

Every read names the reviewer as well as the assignment, so a draft is only ever read by the person whose
queue holds the assignment; the service checks the assignment's owner before writing.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import delete
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlmodel import Session, col, select

from storage.models import ReviewDraft


def upsert_draft(session: Session, draft: ReviewDraft, now: datetime) -> None:
    """Insert or replace the draft of ``draft.assignment_id`` in one statement (a draft is written on every
    change of the form, so no read before the write)."""
    insert_fn = pg_insert if session.get_bind().dialect.name == "postgresql" else sqlite_insert
    fields = ("answers_json", "comment", "cant_judge", "reason", "updated_at")
    values = {**draft.model_dump(exclude={"updated_at"}), "updated_at": now}
    stmt = insert_fn(ReviewDraft).values(values)
    stmt = stmt.on_conflict_do_update(
        index_elements=["assignment_id"], set_={k: getattr(stmt.excluded, k) for k in fields}
    )
    session.exec(stmt)


def get_draft(session: Session, reviewer_id: int, assignment_id: int) -> ReviewDraft | None:
    """The reviewer's draft of that assignment, if any."""
    stmt = select(ReviewDraft).where(
        col(ReviewDraft.assignment_id) == assignment_id, col(ReviewDraft.reviewer_id) == reviewer_id
    )
    return session.exec(stmt).first()


def delete_draft(session: Session, assignment_id: int) -> None:
    """Forget the draft of an assignment (its answer has been saved)."""
    session.exec(delete(ReviewDraft).where(col(ReviewDraft.assignment_id) == assignment_id))
