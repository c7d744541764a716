"""The report's sections beside the rankings: the reviewers, quality beside the panel's, methods, comments.

Per reviewer, the diagnostics that flag one (:class:`ReviewerRow`); beside quality, the outputs' lengths and
timings, position bias or effect and stability over repeats (:class:`Beside`); how the report was computed
(:class:`Methods`); and what reviewers wrote (:class:`CommentGroup`). The ranking sections are in
``report_rankings``; the top-level ``Report``, and its JSON, in ``report``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import ClassVar

from reviewer_app.domain.enums import Level, Scale
from reviewer_app.domain.report_fields import Column, omitted, yes_no

__all__ = [
    "Beside",
    "COMMENTS_SHOWN",
    "CommentGroup",
    "CommentRow",
    "Counts",
    "MethodDimension",
    "Methods",
    "MetricStats",
    "OutputStats",
    "PositionBias",
    "PositionBin",
    "PositionEffect",
    "ReviewerRow",
    "StabilityRow",
    "flag_lines",
]


@dataclass(frozen=True, kw_only=True)
class ReviewerRow:
    """One reviewer's diagnostics; ``flag`` is set when there are ``reasons``. None: not measurable."""

    reviewer: str
    n_ratings: int | None
    leniency: float | None  # mean difference from the other reviewers of the same items, share of the scale
    n_shared: int | None
    disagreement: float | None
    alpha_change_without: float | None
    gold_n: int | None
    gold_accuracy: float | None
    repeat_n: int | None
    self_consistency: float | None
    median_seconds: float | None  # median time per item answered in the app (imported ratings have none)
    timed_n: int | None  # items behind median_seconds
    reasons: tuple[str, ...]
    flag: bool

    COLUMNS: ClassVar[tuple[Column, ...]] = (
        Column("reviewer", "reviewer"),
        Column("n_ratings", "ratings"),
        Column("leniency", "leniency"),
        Column("disagreement", "disagreement", brief=False),
        Column("alpha_change_without", "alpha change without"),
        Column("gold_n", "gold n", brief=False),
        Column("gold_accuracy", "gold accuracy", brief="gold"),
        Column("repeat_n", "repeats", brief=False),
        Column("self_consistency", "self-consistency"),
        Column("median_seconds", "median seconds per item", brief="s/item"),
        Column("flag", "flagged", show=yes_no),  # the reasons are listed below the table: see flag_lines
    )


def flag_lines(rows: Iterable[ReviewerRow]) -> list[tuple[str, str]]:
    """Each flagged reviewer with the reasons in full, for a list below the reviewers' table: a column of
    reasons made the table too wide to read without scrolling sideways."""
    return [(r.reviewer, "; ".join(r.reasons)) for r in rows if r.reasons]


@dataclass(frozen=True, kw_only=True)
class MetricStats:
    """Distribution of one output metric; the quartiles and range only for lengths."""

    n: int
    median: float
    p95: float
    p25: float | None = omitted()
    p75: float | None = omitted()
    min: float | None = omitted()
    max: float | None = omitted()


def _median(stats: MetricStats | None) -> float | None:
    return None if stats is None else stats.median


def _p95(stats: MetricStats | None) -> float | None:
    return None if stats is None else stats.p95


@dataclass(frozen=True, kw_only=True)
class OutputStats:
    """Per model: how many outputs, and each metric the outputs carry (left out when none do)."""

    model: str
    n_outputs: int
    output_chars: MetricStats | None = omitted()
    output_words: MetricStats | None = omitted()
    output_tokens: MetricStats | None = omitted()
    latency_ms: MetricStats | None = omitted()
    ttft_ms: MetricStats | None = omitted()

    COLUMNS: ClassVar[tuple[Column, ...]] = (
        Column("model", "model"),
        Column("n_outputs", "outputs"),
        Column("output_chars", "chars median", show=_median),
        Column("output_chars", "chars p95", show=_p95),
        Column("latency_ms", "latency median (ms)", show=_median),
        Column("latency_ms", "latency p95", show=_p95),
        Column("ttft_ms", "TTFT median (ms)", show=_median),
        Column("ttft_ms", "TTFT p95", show=_p95),
    )


@dataclass(frozen=True, kw_only=True)
class PositionBias:
    """Pairwise: the share of decisive answers that picked the left side (0.5 = no bias), with a 95% CI.

    Only answers whose side was recorded when shown count (imported answers are left out); ``note`` says
    "not recorded" when none was."""

    left_win_rate: float | None
    ci_low: float | None
    ci_high: float | None
    n: int
    n_not_recorded: int  # decisive answers left out: side not recorded (imported)
    note: str | None


@dataclass(frozen=True, kw_only=True)
class PositionBin:
    position_from: int
    position_to: int
    mean_score_vs_model: float
    n: int


@dataclass(frozen=True, kw_only=True)
class PositionEffect:
    """Rating mode: slope of the 0-1 score against queue position, per 100 positions, with a 95% CI.

    Only ratings whose queue position was recorded when shown count (imported ones are left out)."""

    slope_per_100: float | None
    ci_low: float | None
    ci_high: float | None
    bins: tuple[PositionBin, ...]
    n: int
    n_not_recorded: int
    note: str | None


@dataclass(frozen=True, kw_only=True)
class StabilityRow:
    """Spread of a model's scores across repeated generations of the same sample."""

    model: str
    n_samples: int
    mean_sd_across_repeats: float
    max_sd_across_repeats: float

    COLUMNS: ClassVar[tuple[Column, ...]] = (
        Column("model", "model"),
        Column("n_samples", "samples with repeats"),
        Column("mean_sd_across_repeats", "mean SD across repeats"),
        Column("max_sd_across_repeats", "max SD"),
    )


@dataclass(frozen=True, kw_only=True)
class Beside:
    """Beside quality: output length and latency, position bias (one of the two, by mode), stability."""

    outputs: tuple[OutputStats, ...]
    position_bias: PositionBias | None = omitted()  # pairwise mode
    position_effect: PositionEffect | None = omitted()  # rating mode
    stability: tuple[StabilityRow, ...]


@dataclass(frozen=True, kw_only=True)
class Counts:
    ratings: int
    gold_ratings: int
    repeat_ratings: int
    reviewers: int
    items: int


@dataclass(frozen=True, kw_only=True)
class MethodDimension:
    name: str
    scale: Scale
    level: Level
    min: float | None
    max: float | None
    higher_is_better: bool

    COLUMNS: ClassVar[tuple[Column, ...]] = (
        Column("name", "dimension"),
        Column("scale", "scale"),
        Column("level", "level"),
        Column("min", "min"),
        Column("max", "max"),
        Column("higher_is_better", "better", show=lambda v: "higher" if v else "lower"),
    )


@dataclass(frozen=True, kw_only=True)
class Methods:
    seed: int
    bootstrap_rounds: int
    weight_draws: int
    confidence: float
    multiple_comparisons: str  # how pairs are tested and adjusted
    max_ci_mc_se: float | None  # the largest Monte Carlo standard error of any bootstrap interval end
    counts: Counts
    dimensions: tuple[MethodDimension, ...]
    definitions: tuple[str, ...]


COMMENTS_SHOWN = 10  # per scenario, model (pair) and kind: the most recent answers whose words a report lists


@dataclass(frozen=True, kw_only=True)
class CommentRow:
    """What a reviewer wrote with one answer: its comment and, on a "can't judge" answer, the reason."""

    sample_id: str
    reviewer: str
    submitted_at: str | None  # ISO 8601, to the second, UTC
    comment: str | None
    cant_judge_reason: str | None


@dataclass(frozen=True, kw_only=True)
class CommentGroup:
    """What reviewers wrote about one model's outputs (pairwise: one pair's) in one scenario.

    The counts are of every finished answer (gold items and repeat showings included); the lists hold the
    most recent :data:`COMMENTS_SHOWN` answers of each kind, newest first: a report stays readable and its
    size bounded however much was written, and the ratings export has every comment and reason. Only models
    (pairs) with at least one comment or can't-judge answer in the scenario have a group."""

    scenario: str
    models: tuple[str, ...]  # the rated model; pairwise: the pair, in canonical order
    n_answers: int  # finished answers: scored or "can't judge"
    n_cant_judge: int
    n_commented: int  # scored answers with a comment
    cant_judge: tuple[CommentRow, ...]  # the latest can't-judge answers (with any comment they had)
    commented: tuple[CommentRow, ...]  # the latest scored answers with a comment

    @property
    def more(self) -> tuple[int, int]:
        """How many can't-judge and commented answers are left out of the lists (in the export only)."""
        return self.n_cant_judge - len(self.cant_judge), self.n_commented - len(self.commented)
