"""The report's anytime-valid verdicts (``analysis.anytime``): per scenario, each pair's confidence sequence and
whether the scenario is settled, would likely settle with N more samples, or is not settling."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Literal

from reviewer_app.domain.report_fields import Column

__all__ = ["ANYTIME_NOTE", "AnytimePair", "AnytimeScenario"]

ANYTIME_NOTE = (
    "Anytime-valid: each pair's 95% confidence sequence (the asymptotic sequence of Waudby-Smith, Arbour, Sinha, "
    "Kennedy & Ramdas 2024, Bonferroni over the scenario's pairs) holds at every look at once, so these verdicts "
    "do not wear out however often the results are read or whenever the study stops; wider than the "
    "fixed-sample intervals above. Rating batches: the difference of the overall scores (0-1); pairwise "
    "batches: head to head, the share of the pair's answers the first model won minus the second's (-1 to 1)."
)


@dataclass(frozen=True, kw_only=True)
class AnytimePair:
    """Two models' mean paired difference (model_a the higher) over the completed samples (rating: overall
    scores; pairwise: head-to-head win shares), its confidence sequence's current interval, and its state:
    separated, equivalent (inside the tolerance) or open."""

    model_a: str
    model_b: str
    diff: float
    cs_low: float | None  # None: unbounded (before the burn-in)
    cs_high: float | None
    n: int
    state: Literal["separated", "equivalent", "open"]

    COLUMNS: ClassVar[tuple[Column, ...]] = (
        Column("model_a", "model"),
        Column("model_b", "versus"),
        Column("diff", "difference"),
        Column("cs_low", "sequence low"),
        Column("cs_high", "sequence high"),
        Column("state", "state"),
        Column("n", "samples"),
    )


@dataclass(frozen=True, kw_only=True)
class AnytimeScenario:
    """A scenario's state on one dimension: settled, more_samples (``more_samples`` would likely settle it) or
    not_settling, with the equivalence tolerance used, its pairs and a sentence for the lead page."""

    scenario: str
    dimension: str
    samples: int
    tolerance: float
    state: Literal["settled", "more_samples", "not_settling"]
    more_samples: int | None
    pairs: tuple[AnytimePair, ...]
    sentence: str
