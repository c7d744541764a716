"""How fragile a verdict is (``analysis.fragility``): per scenario, for the verdicts a lead reads on its overall
ranking (the model first alone, each pair separated), how few samples, and how few reviewers, would have to
be dropped for it not to hold."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Literal

from reviewer_app.domain.report_fields import Column

__all__ = ["FRAGILITY_NOTE", "FragilityRow"]

FRAGILITY_NOTE = (
    "Fragility: the samples (or reviewers) most favourable to the winner are dropped one more at a time, and the "
    "report's own test (sign-flip, Holm) is run again on what is left, until the verdict no longer holds. The "
    "count is an upper bound on the true minimum (dropping those does undo the verdict; checked against every "
    "subset on small panels, where it equals the minimum in most cases), in the spirit of Broderick, Giordano & "
    "Meager (2023) on dropping a little data; Huang et al. (2025) show two of 57,477 Chatbot Arena votes can flip "
    "its first place. A verdict is flagged fragile when dropping at most 2 samples (or 1% of them, whichever is "
    "more), or one reviewer, undoes it."
)


@dataclass(frozen=True, kw_only=True)
class FragilityRow:
    """One verdict: ``better`` first alone (claim "top") or separated above ``worse`` (claim "separation"), and
    what undoes it: the fewest samples and reviewers found (None: not within the search, up to a quarter of the
    samples and half the reviewers), which ones, and whether that makes it fragile."""

    scenario: str
    dimension: str
    claim: Literal["top", "separation"]
    better: str
    worse: str | None  # the model it is separated from (top: the one whose separation falls first)
    samples: int
    samples_to_undo: int | None
    dropped_samples: tuple[str, ...]
    reviewers: int
    reviewers_to_undo: int | None
    dropped_reviewers: tuple[str, ...]
    fragile: bool
    sentence: str

    COLUMNS: ClassVar[tuple[Column, ...]] = (
        Column("claim", "verdict"),
        Column("better", "model"),
        Column("worse", "over"),
        Column("samples_to_undo", "samples that undo it"),
        Column("samples", "of samples"),
        Column("reviewers_to_undo", "reviewers that undo it"),
        Column("reviewers", "of reviewers"),
        Column("fragile", "fragile"),
    )
