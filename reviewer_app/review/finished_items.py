"""The reviewer's finished items ("Your previous items"), newest first, and the one to go back to.

Each item by its place in the reviewer's queue, label, status and the start of its prompt: nothing about
outputs or models, as everything the reviewer's page receives.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from sqlalchemy.engine import Engine

from reviewer_app.domain.enums import AssignmentStatus
from storage.engine import read_session
from storage.repositories.review import assignments as assignment_repo
from storage.repositories.review import finished as review_repo

SNIPPET_CHARS = 70


@dataclass(frozen=True)
class PreviousItem:
    """One of the reviewer's finished items in "Your previous items": its place in their queue (as the
    progress bar counts), label, status and the start of its prompt. Nothing about outputs or models."""

    assignment_id: int
    place: int
    label: str
    status: AssignmentStatus
    snippet: str


@dataclass(frozen=True)
class PreviousPage:
    items: list[PreviousItem]
    page: int  # 0-based, newest items first
    pages: int
    total: int


def previous_items(engine: Engine, batch_id: int, reviewer_id: int, page: int, per_page: int = 20) -> PreviousPage:
    """One page of the reviewer's finished items of a batch, newest first; every one of them is reachable
    (a page out of range is clamped to the last)."""
    with read_session(engine) as session:
        total = review_repo.count_finished(session, batch_id, reviewer_id)
        pages = max(1, -(-total // per_page))
        page = max(0, min(page, pages - 1))
        rows = review_repo.finished_page(session, batch_id, reviewer_id, offset=page * per_page, limit=per_page)
    return PreviousPage([_previous(*row) for row in rows], page, pages, total)


def previous_item(engine: Engine, batch_id: int, reviewer_id: int, current: int | None) -> int | None:
    """The assignment to go back to from ``current`` (the finished item just before it in the reviewer's
    queue; the latest finished one when ``current`` is None or not theirs), or None when there is none."""
    with read_session(engine) as session:
        before = None
        if current is not None:
            a = assignment_repo.get_assignment(session, current)
            if a is not None and a.reviewer_id == reviewer_id:
                before = a.position
        rows = review_repo.finished_page(session, batch_id, reviewer_id, offset=0, limit=1, before=before)
    return rows[0][0] if rows else None


def _previous(assignment_id: int, label: str, place: int, status: AssignmentStatus, prompt_json: str) -> PreviousItem:
    return PreviousItem(assignment_id, place, label, AssignmentStatus(status), prompt_snippet(json.loads(prompt_json)))


def prompt_snippet(prompt: str | list[dict[str, str]]) -> str:
    """The start of a prompt on one line (a conversation's first user turn), cut at a word."""
    if not isinstance(prompt, str):
        turns = [m for m in prompt if m.get("role") == "user"] or prompt
        prompt = str(turns[0].get("content", "")) if turns else ""
    text = " ".join(prompt.split())
    if len(text) <= SNIPPET_CHARS:
        return text
    cut = text[:SNIPPET_CHARS].rsplit(" ", 1)[0] or text[:SNIPPET_CHARS]
    return cut + "…"
