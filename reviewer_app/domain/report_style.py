"""The report's style-controlled rankings (``analysis.style_control``): per scenario and dimension, each model's
score with the outputs' style held fixed (length, Markdown headers, list items, bold spans, code blocks) beside
its score as rated, the change of rank, and what each style feature is worth."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from reviewer_app.domain.report_fields import Column

__all__ = ["STYLE_NOTE", "StyleCoefficient", "StyleRanking", "StyleRow"]

STYLE_NOTE = (
    'Style control answers "is it just the longer (or more formatted) answers winning?". Rating batches: each '
    "output's mean score is regressed, within each sample (so a hard prompt's long answers are compared with "
    "their own prompt's), on the model and on its length (words) and Markdown headers, list items, bold spans "
    "and code blocks; a model's controlled score is its score as rated minus what its style, against the "
    "average output's, is worth. Pairwise batches: the Bradley-Terry fit gets the same features as covariates, "
    "each the two answers' difference over their sum, z-scored (Chatbot Arena's style control: Li, "
    "Angelopoulos & Chiang 2024). Intervals: the report's cluster bootstrap over samples (pairwise: one Newton "
    "step from the full fit per replicate). A controlled ranking is not the truth either: style can be part of "
    "quality; it shows how much of a lead style explains."
)


@dataclass(frozen=True, kw_only=True)
class StyleRow:
    """One model: its score as rated and its rank, its style-controlled score with a 95% interval and rank, and
    how many places style control moves it (positive: up)."""

    model: str
    score: float
    rank: int
    controlled: float
    ci_low: float | None
    ci_high: float | None
    controlled_rank: int
    rank_change: int

    COLUMNS: ClassVar[tuple[Column, ...]] = (
        Column("model", "model"),
        Column("score", "score as rated"),
        Column("rank", "rank"),
        Column("controlled", "style-controlled"),
        Column("ci_low", "CI low"),
        Column("ci_high", "CI high"),
        Column("controlled_rank", "controlled rank"),
        Column("rank_change", "rank change under style control"),
    )


@dataclass(frozen=True, kw_only=True)
class StyleCoefficient:
    """What one style feature is worth, with its 95% interval, and the sentence that says so."""

    feature: str  # length, headers, list_items, bold, code_blocks
    per: str  # the unit one coefficient is for: "100 words", "header"; pairwise: "SD of the relative difference"
    estimate: float
    ci_low: float | None
    ci_high: float | None
    sentence: str

    COLUMNS: ClassVar[tuple[Column, ...]] = (
        Column("feature", "style feature"),
        Column("per", "per"),
        Column("estimate", "effect"),
        Column("ci_low", "CI low"),
        Column("ci_high", "CI high"),
    )


@dataclass(frozen=True, kw_only=True)
class StyleRanking:
    """One scenario and dimension under style control: rows by controlled rank, the features' coefficients, the
    features left out (no variation to learn from), and a sentence for the lead."""

    scenario: str
    dimension: str
    unit: str
    outputs: int  # outputs (pairwise: sample-pair cells) the fit used
    rows: tuple[StyleRow, ...]
    coefficients: tuple[StyleCoefficient, ...]
    left_out: tuple[str, ...]
    sentence: str
