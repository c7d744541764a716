"""When each sample of a batch was complete: the order the panel's evidence arrived in, for the report's
anytime-valid verdicts (``analysis.anytime``), which read the samples as a sequence in that order."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import func, select
from sqlmodel import Session, col

from reviewer_app.domain.enums import AssignmentStatus
from storage.models import Assignment, Item, Sample


def sample_completions(session: Session, batch_id: int, k: int) -> list[tuple[str, datetime]]:
    """The batch's samples whose every item (anchors aside) has ``k`` finished first showings, each with the
    moment the last of those was submitted, earliest first (ties by sample key). A sample still short of its
    ratings is not in it: its paired differences are not final yet."""
    per_item = (
        select(
            col(Item.id).label("item"),
            col(Item.sample_id).label("sample"),
            func.count(col(Assignment.id)).label("done"),
            func.max(col(Assignment.submitted_at)).label("last"),
        )
        .select_from(Item)
        .outerjoin(
            Assignment,
            (col(Assignment.item_id) == col(Item.id))
            & (col(Assignment.occurrence) == 0)
            & (col(Assignment.status) == AssignmentStatus.DONE),
        )
        .where(col(Item.batch_id) == batch_id, col(Item.is_anchor).is_(False))
        .group_by(col(Item.id), col(Item.sample_id))
        .subquery()
    )
    rows = session.execute(
        select(col(Sample.key), func.min(per_item.c.done), func.max(per_item.c.last))
        .join(per_item, per_item.c.sample == col(Sample.id))
        .group_by(col(Sample.id), col(Sample.key))
    ).all()
    done = [(str(key), last) for key, least, last in rows if least >= k and last is not None]
    return sorted(done, key=lambda r: (r[1], r[0]))
