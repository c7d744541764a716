"""Agreement over time (``analysis.agreement_windows``): per scenario, Krippendorff's alpha on the overall
score in consecutive windows of completed samples, beside the scenario's alpha over all of them, and a flag
when the latest window falls below that level by more than its own interval."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from reviewer_app.domain.report_fields import Column

__all__ = ["WINDOWS_NOTE", "AgreementTrend", "AgreementWindow"]

WINDOWS_NOTE = (
    "Agreement over time: each scenario's completed samples in the order they were completed, cut into up to five "
    "windows of at least 10 samples; alpha (with its 95% bootstrap interval over items) in each. The latest window "
    "is flagged when its whole interval lies below the scenario's alpha over every completed sample: the panel "
    "agrees less now than it did (tired reviewers, a new reviewer, a drifting rubric), worth a look before the "
    "next batch."
)


@dataclass(frozen=True, kw_only=True)
class AgreementWindow:
    """One window of completed samples (the ``first``-th to the ``last``-th to be completed, from 1)."""

    window: int
    first: int
    last: int
    alpha: float | None
    ci_low: float | None
    ci_high: float | None
    items: int

    COLUMNS: ClassVar[tuple[Column, ...]] = (
        Column("window", "window"),
        Column("first", "from sample"),
        Column("last", "to sample"),
        Column("alpha", "alpha"),
        Column("ci_low", "CI low"),
        Column("ci_high", "CI high"),
        Column("items", "items"),
    )


@dataclass(frozen=True, kw_only=True)
class AgreementTrend:
    """A scenario's windows on one dimension, its alpha over all completed samples, and whether the latest
    window is below it by more than its interval."""

    scenario: str
    dimension: str
    alpha: float | None
    windows: tuple[AgreementWindow, ...]
    flagged: bool
    sentence: str
