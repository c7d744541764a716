"""The judge-assisted ranking of the report's "Judge vs panel" section: the panel's ranking with an LLM judge's
ratings of every output, corrected by the judge's error measured where the panel rated (prediction-powered
inference: ``analysis.judge_ppi``). Shown beside the panel's own ranking, never in its place.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from reviewer_app.domain.report_fields import Column
from reviewer_app.domain.report_judge_card import JudgeCard
from reviewer_app.domain.report_rankings import PairRow, RankingRow

__all__ = ["AssistedModelRow", "AssistedRanking", "JudgeRun", "JudgeSection"]


@dataclass(frozen=True, kw_only=True)
class AssistedModelRow:
    """What the judge did for one model's score: how much it was weighed (``judge_weight``, PPI++'s lambda:
    0 the panel alone, 1 the judge fully, its error corrected), on how many samples, the panel's score on its
    own samples with its 95% interval (Student's t at its samples less one), and how many of the panel's ratings the
    judge was worth (``effective_ratings``: the panel ratings that would give the judge-assisted score's
    precision on their own; ``panel_ratings`` is how many it has)."""

    model: str
    dimension: str
    judge_weight: float | None
    judged_samples: int
    panel_samples: int
    panel_score: float | None
    panel_ci_low: float | None
    panel_ci_high: float | None
    panel_ratings: int
    effective_ratings: float | None

    COLUMNS: ClassVar[tuple[Column, ...]] = (
        Column("dimension", "dimension"),
        Column("model", "model"),
        Column("panel_score", "panel alone"),
        Column("panel_ci_low", "CI low, panel alone"),
        Column("panel_ci_high", "CI high, panel alone"),
        Column("judge_weight", "judge's weight"),
        Column("judged_samples", "samples judged", brief=False),
        Column("panel_samples", "samples the panel rated"),
        Column("panel_ratings", "panel ratings", brief=False),
        Column("effective_ratings", "worth panel ratings", "worth ratings"),
    )


@dataclass(frozen=True, kw_only=True)
class AssistedRanking:
    """One scenario's judge-assisted ranking of one dimension (or "overall"): rows and pairs as the panel's
    (same tests, Holm correction, letters), what the judge contributed per model, the width of its intervals
    against the panel-alone ones (``width_ratio``: below 1 the judge narrowed them), and a sentence."""

    scenario: str
    dimension: str
    ranking: tuple[RankingRow, ...]
    pairs: tuple[PairRow, ...]
    models: tuple[AssistedModelRow, ...]
    width_ratio: float | None
    summary: str


@dataclass(frozen=True, kw_only=True)
class JudgeRun:
    """Which judge the section is about and how much it did: its name (``judge:MODEL@TEMPLATE``), the model it
    asked, its template's digest, its answered and failed judgements (a pair judged in both orders is two),
    and the batch's items it answered of all it has (anchors aside)."""

    judge: str
    model: str
    template: str
    judgements: int
    failed: int
    items_judged: int
    items: int


@dataclass(frozen=True, kw_only=True)
class JudgeSection:
    """The report's "Judge vs panel" section, for one LLM judge (the batch's latest, or the one asked for):
    the run, its report card per scenario (measured against the panel like one more reviewer), the
    judge-assisted rankings (rating batches), and notes where something could not be computed."""

    run: JudgeRun
    cards: tuple[JudgeCard, ...]
    assisted: tuple[AssistedRanking, ...]
    notes: tuple[str, ...]
