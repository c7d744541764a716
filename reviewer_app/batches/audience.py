"""Who a batch is for: its own reviewers, or every reviewer, and whether it is open yet.

A batch is loaded closed (``load-batch --open`` opens it at once) so that nobody claims an item before the
admin has chosen its reviewers or made a plan. Its own reviewers (chosen at load, at ``assign``, with
``batch-reviewers`` or on the Admin page) are the only people it is shown to and who claim its free slots;
a batch with none is open to every active reviewer, as every batch was before. Planned items are shown to
the people they were planned for either way: the plan named them.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy.engine import Engine
from sqlmodel import Session

from reviewer_app.batches.catalog import find_batch
from reviewer_app.domain.enums import BatchStatus, Role
from reviewer_app.domain.words import join_names
from reviewer_app.errors import NotFoundError
from storage.engine import read_session, write_session
from storage.models import Batch
from storage.repositories import people as people_repo
from storage.repositories.batches import batches as repo

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Audience:
    """A batch's status and who may review it (``reviewers`` empty: every active reviewer)."""

    batch_name: str
    status: BatchStatus
    ever_opened: bool
    reviewers: tuple[str, ...]

    @property
    def everyone(self) -> bool:
        return not self.reviewers

    def line(self, how_to_open: str = "") -> str:
        """One sentence for a summary or a page: open or not, and to whom (``how_to_open``: where this reader
        opens a batch; the command by default)."""
        who = "every active reviewer" if self.everyone else f"its reviewers: {join_names(list(self.reviewers))}"
        if self.status == BatchStatus.OPEN:
            return f"Batch {self.batch_name!r} is open to {who}."
        if not self.ever_opened:
            return (
                f"Batch {self.batch_name!r} is not open yet: nobody sees it until you open it "
                f"({how_to_open or f'`blind-review open-batch {self.batch_name}`'}); it will be open to {who}."
            )
        return f"Batch {self.batch_name!r} is closed: it takes no new or revised ratings (it was open to {who})."


def reviewer_ids(session: Session, names: Sequence[str]) -> list[int]:
    """The ids of the named people, in order; :class:`NotFoundError` naming the first unknown one and how to
    add them."""
    ids = []
    for raw in names:
        name = raw.strip()
        if not name:
            continue
        person = people_repo.get_by_name(session, name)
        if person is None or person.id is None:
            raise NotFoundError(f"no person named {name!r}; add them with `blind-review add-reviewer {name}`")
        ids.append(person.id)
    return ids


def audience_in(session: Session, batch: Batch) -> Audience:
    assert batch.id is not None
    by_id = {p.id: p.name for p in people_repo.list_all(session)}
    names = tuple(by_id.get(i, str(i)) for i in repo.batch_reviewer_ids(session, batch.id))
    return Audience(batch.name, BatchStatus(batch.status), batch.opened_at is not None, names)


def batch_audience(engine: Engine, batch_name: str) -> Audience:
    """The batch's status and who may review it."""
    batch = find_batch(engine, batch_name)
    with read_session(engine) as session:
        return audience_in(session, batch)


def set_batch_reviewers(
    engine: Engine, batch_name: str, *, add: Sequence[str] = (), remove: Sequence[str] = ()
) -> Audience:
    """Add people to the batch's reviewers and take others off (a lead or an admin may be one: they then
    claim free slots too). Taking someone off keeps their answers and the items planned for them; they only
    stop claiming free slots and, with nothing planned there, stop seeing the batch. Taking everyone off opens
    the batch to every reviewer again, which the returned audience says."""
    batch = find_batch(engine, batch_name)
    assert batch.id is not None
    with write_session(engine) as session:
        added = repo.add_batch_reviewers(session, batch.id, reviewer_ids(session, add))
        repo.remove_batch_reviewers(session, batch.id, reviewer_ids(session, remove))
        audience = audience_in(session, batch)
    log.info("batch %r: %d reviewer(s) added, %d named to remove", batch.name, added, len(remove))
    return audience


def open_to_reviewer(session: Session, batch: Batch, reviewer_id: int, role: Role) -> bool:
    """Whether this person may claim the batch's free slots: reviewers only (a lead or an admin takes slots
    when named, by a plan or as one of the batch's reviewers), and only the batch's own reviewers when it has
    any."""
    assert batch.id is not None
    members = repo.batch_reviewer_ids(session, batch.id)
    if members:
        return reviewer_id in members
    return role == Role.REVIEWER
