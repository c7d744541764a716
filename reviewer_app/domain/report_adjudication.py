"""Adjudication in the report (``analysis.disputes``): which items the panel disagreed on beyond the rubric's
threshold, the rulings made on them, and whether the rankings used those rulings."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from reviewer_app.domain.report_fields import Column

__all__ = ["ADJUDICATION_NOTE", "AdjudicatedItem", "AdjudicationScenario", "AdjudicationSection"]

ADJUDICATION_NOTE = (
    "Adjudication: an item goes to the queue when its reviewers disagree beyond the rubric's threshold; a lead "
    "or a designated senior reviewer sees it blind (the answers under neutral labels, the reviewers' answers and "
    "comments without their names) and rules, with a reason. By default the report ranks the panel as it is "
    "and only lists the rulings; a report made with rulings replaces each ruled item's answers on the ruled "
    "question by the ruling (every reviewer's, so each sample keeps its weight). Agreement, agreement over time "
    "and the reviewer diagnostics always describe the panel as it answered."
)


@dataclass(frozen=True, kw_only=True)
class AdjudicatedItem:
    """One ruling: the item (scenario, sample, its model or two models), the question, what the panel answered
    (``panel``: the answers in order, pairwise as the votes for each side), the ruling and its reason."""

    scenario: str
    sample_id: str
    models: tuple[str, ...]
    dimension: str
    panel: str
    ruling: str
    reason: str
    adjudicator: str
    ruled_at: str  # ISO 8601, to the second

    COLUMNS: ClassVar[tuple[Column, ...]] = (
        Column("scenario", "scenario"),
        Column("sample_id", "sample"),
        Column("models", "model(s)", show=" vs ".join),
        Column("dimension", "question"),
        Column("panel", "panel answered"),
        Column("ruling", "ruling"),
        Column("reason", "reason"),
        Column("adjudicator", "by"),
    )


@dataclass(frozen=True, kw_only=True)
class AdjudicationScenario:
    """A scenario's disputes: items (and questions) disagreed on, and how many of those are ruled."""

    scenario: str
    disputed: int
    ruled: int

    COLUMNS: ClassVar[tuple[Column, ...]] = (
        Column("scenario", "scenario"),
        Column("disputed", "disagreements"),
        Column("ruled", "ruled"),
    )


@dataclass(frozen=True, kw_only=True)
class AdjudicationSection:
    """The batch's disputes and rulings; ``used``: the rankings of this report use the rulings."""

    rule: str
    used: bool
    disputed: int
    ruled: int
    scenarios: tuple[AdjudicationScenario, ...]
    items: tuple[AdjudicatedItem, ...]
    summary: str
