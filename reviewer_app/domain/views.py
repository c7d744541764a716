"""What a signed-in person's pages receive: view objects with no field that could name a model.

A ``ReviewItemView`` has no model, output id, item id, sample id or file name, so what is not in the view
cannot leak into a reviewer's page, its HTML or its session state (the pattern of full-stack-fastapi-template's
``UserPublic``, which has no password field to leak). Its scenario and a ``BatchProgress``'s name are the
titles reviewers see, never a name that names a model (``services.titles``). Built in ``services.reviews``;
read by the pages.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from reviewer_app.domain.enums import AssignmentStatus, BatchStatus, Mode, PairwiseChoice, Role
from reviewer_app.domain.rubric import PAIRWISE_CHOICES, Dimension
from reviewer_app.domain.scales import spec_of

__all__ = ["BatchProgress", "Person", "QueueEntry", "ReviewItemView", "ShownCheck", "ShownOutput", "choice_label"]


@dataclass(frozen=True)
class Person:
    """Who is signed in. Carries no token and nothing about models."""

    id: int
    name: str
    role: Role

    def can(self, role: Role) -> bool:
        """Admins can do what leads can; leads what reviewers can."""
        return Role(self.role).rank >= Role(role).rank


PAIRWISE_LABELS: dict[str, str] = {
    PairwiseChoice.LEFT: "A is better",
    PairwiseChoice.RIGHT: "B is better",
    PairwiseChoice.TIE: "Tie",
    PairwiseChoice.BOTH_BAD: "Both bad",
}


@dataclass(frozen=True)
class ShownCheck:
    """An automatic check's result on an output, shown only when the rubric sets ``show_checks``."""

    name: str
    passed: bool
    detail: str | None


@dataclass(frozen=True)
class ShownOutput:
    side: str  # "A" / "B" in pairwise mode, "" in rating mode
    text: str
    checks: tuple[ShownCheck, ...] = ()  # empty unless the rubric sets show_checks


@dataclass(frozen=True)
class ReviewItemView:
    assignment_id: int
    label: str
    mode: Mode
    scenario: str  # the title reviewers see: the admin's, the name, or "Scenario <n>" when the name names a model
    prompt: str | list[dict[str, str]]
    images: list[str]  # content-hash names of stored images
    criteria: str | None
    reference: str | None
    outputs: list[ShownOutput]
    dimensions: list[Dimension]
    answers: dict[str, str] = field(default_factory=dict)
    comment: str = ""
    cant_judge: str | None = None
    submitted: bool = False
    position: int = 1  # 1-based place in the reviewer's queue
    total: int = 1
    done: int = 0
    instructions: str = ""
    editable: bool = True
    # When the answer shown was last saved (None: never submitted). A submit from this page passes it back,
    # and is refused if the answer was saved again meanwhile (from another tab): see reviews.submit_review.
    saved_at: datetime | None = None
    from_pool: bool = False  # handed out from the shared pool (not planned): the queue's total grows with it


@dataclass(frozen=True)
class BatchProgress:
    batch_id: int
    name: str  # the title reviewers see: the admin's, the name, or "Batch <id>" when the name names a model
    status: BatchStatus
    done: int
    assigned: int


@dataclass(frozen=True)
class QueueEntry:
    assignment_id: int
    label: str
    position: int
    status: AssignmentStatus


def choice_label(dim: Dimension, value: str) -> str:
    """What a reviewer reads for a stored value: a Likert anchor, Yes/No, or A/B wording."""
    if dim.choices == PAIRWISE_CHOICES:
        return PAIRWISE_LABELS[value]
    return spec_of(dim.scale).label(dim, value)
