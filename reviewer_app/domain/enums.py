"""The closed sets of words the app stores and compares: modes, scales, statuses, roles.

``StrEnum`` members are ``str`` subclasses, so they go into the database and JSON as their plain value and
compare equal to it; the type checker still catches a misspelt status. ``Level`` is a ``Literal`` rather
than an enum because ``krippendorff.alpha`` is typed with exactly those four strings.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Literal, get_args

__all__ = [
    "AssignmentStatus",
    "BatchStatus",
    "FINISHED_STATUSES",
    "LEVELS",
    "Level",
    "Mode",
    "OnLeak",
    "PairwiseChoice",
    "PairwiseGranularity",
    "Role",
    "Scale",
]


class Mode(StrEnum):
    """How reviewers judge a batch: one output at a time, or two side by side."""

    RATING = "rating"
    PAIRWISE = "pairwise"


class Scale(StrEnum):
    LIKERT = "likert"
    BINARY = "binary"
    CATEGORICAL = "categorical"
    CONTINUOUS = "continuous"  # any number from min to max (MQM error scores, 0-100 direct assessment)


Level = Literal["nominal", "ordinal", "interval", "ratio"]
LEVELS: tuple[Level, ...] = get_args(Level)


class PairwiseChoice(StrEnum):
    """A pairwise answer as the reviewer saw the pair (``left`` is the answer shown as "A")."""

    LEFT = "left"
    RIGHT = "right"
    TIE = "tie"
    BOTH_BAD = "both_bad"


class PairwiseGranularity(StrEnum):
    OVERALL = "overall"
    PER_DIMENSION = "per_dimension"


class BatchStatus(StrEnum):
    OPEN = "open"
    CLOSED = "closed"


class AssignmentStatus(StrEnum):
    """``skipped`` is a finished assignment whose reviewer said they cannot judge it."""

    PENDING = "pending"
    DONE = "done"
    SKIPPED = "skipped"


FINISHED_STATUSES = (AssignmentStatus.DONE, AssignmentStatus.SKIPPED)


class Role(StrEnum):
    """Ordered by rank: an admin may do what a lead may, a lead what a reviewer may."""

    REVIEWER = "reviewer"
    LEAD = "lead"
    ADMIN = "admin"

    @property
    def rank(self) -> int:
        return list(Role).index(self)


class OnLeak(StrEnum):
    """What ``load-batch`` does with an output that names a model or vendor."""

    MASK = "mask"  # reviewed with the names replaced by "[model name]"; reports keep the text
    FLAG = "flag"
    EXCLUDE = "exclude"
    FAIL = "fail"
