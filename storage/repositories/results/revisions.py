"""A batch's data revision: a small value that changes whenever a report of the batch could change.

The lead's page keeps computed reports by this value (``reviewer_app.results.report_cache``) instead of for
a fixed time, so a new, revised or withdrawn rating shows at once and an unchanged batch is never computed
twice. Everything else a report reads is fixed at load (outputs, exclusions, rubric, seed) except the
batch's name and the people who rated (their names and roles are in the report).
"""

from __future__ import annotations

import hashlib

from sqlalchemy import func, select
from sqlmodel import Session, col

from reviewer_app.domain.enums import AssignmentStatus
from storage.models import Assignment, Batch, FeedbackEvent, Judgement, Rating, Reviewer, Ruling


def batch_revision(session: Session, batch_id: int) -> tuple[object, ...] | None:
    """``None`` for an unknown batch, else a tuple that differs after any change a report would show.

    Ratings: their number (a rating withdrawn when an answer becomes "can't judge"), the highest id (a new
    one) and the latest ``updated_at`` (a revised answer; every write sets it). The batch row: id, name,
    content hash and load time (a batch deleted and another loaded under the same id). People: a digest of
    every person's id, name and role (a rater made lead is marked in the report). Production feedback: the
    newest event's id (the report says whether production agrees). LLM judges' judgements: their number, newest
    id and time (the report measures the judge). Rulings: their number and latest change. "Can't judge" answers, which
    have no ratings: their number and latest submit. Two indexed aggregates and two small reads; they read no
    rating or comment text. (A comment changed on a scored answer comes with its ratings' new ``updated_at``.)
    """
    batch = session.execute(
        select(col(Batch.name), col(Batch.content_hash), col(Batch.created_at)).where(col(Batch.id) == batch_id)
    ).first()
    if batch is None:
        return None
    ratings = session.execute(
        select(func.count(), func.max(col(Rating.id)), func.max(col(Rating.updated_at))).where(
            col(Rating.batch_id) == batch_id
        )
    ).one()
    # "Can't judge" answers carry no rating, yet the report lists them with their reasons: their number and
    # latest submit. Asked per reviewer, so the queue index (reviewer, batch, status, ...) finds just them.
    cant_judge = session.execute(
        select(func.count(), func.max(col(Assignment.submitted_at))).where(
            col(Assignment.reviewer_id).in_(select(col(Reviewer.id))),
            col(Assignment.batch_id) == batch_id,
            col(Assignment.status) == AssignmentStatus.SKIPPED,
        )
    ).one()
    people = hashlib.sha256()
    for rid, name, role in session.execute(
        select(col(Reviewer.id), col(Reviewer.name), col(Reviewer.role)).order_by(col(Reviewer.id))
    ):
        people.update(f"{rid}\x1f{name}\x1f{role}\x1e".encode())
    # Production feedback (global: an import changes every batch's report section on it): the newest event.
    feedback = session.execute(select(func.max(col(FeedbackEvent.id)))).scalar()
    # An LLM judge's judgements (the "Judge vs panel" section): a new or retried one has a new id or time.
    judged = session.execute(
        select(func.count(), func.max(col(Judgement.id)), func.max(col(Judgement.created_at))).where(
            col(Judgement.batch_id) == batch_id
        )
    ).one()
    # Adjudicators' rulings (the report lists them, and a report made with rulings ranks by them).
    ruled = session.execute(
        select(func.count(), func.max(col(Ruling.updated_at))).where(col(Ruling.batch_id) == batch_id)
    ).one()
    return (batch_id, *batch, *ratings, *cant_judge, people.hexdigest(), feedback, *judged, *ruled)
