"""The report's ranking sections: per scenario (:class:`ScenarioReport`) and across them (:class:`OverallReport`).

What the panel's verdicts are: each dimension's ranking (:class:`RankingRow`), every pair tested
(:class:`PairRow`), agreement (:class:`AgreementRow`), pairwise win rates, the automatic checks' pass rates
and, across scenarios, the models left out, the weighted composite and how its order moves with the weights.
The other sections (reviewers, beside quality, methods, comments) are in ``report_panel``; the top-level
``Report`` that holds them all, and turns them into JSON, is in ``report``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from reviewer_app.domain.benchmarks import BenchmarkSection
from reviewer_app.domain.enums import Level
from reviewer_app.domain.report_fields import (
    Column,
    blank_if_none,
    fine,
    omitted,
    p_text,
    percent,
    percent_or_none,
    yes_no,
)

__all__ = [
    "ALL_CHECKS",
    "AgreementRow",
    "CheckPanelRow",
    "CheckRow",
    "Composite",
    "LETTERS_NOTE",
    "LeftOutRow",
    "OverallReport",
    "PairRow",
    "RankingRow",
    "ReliabilityRow",
    "STRENGTH_NOTE",
    "ScenarioReport",
    "WeightSensitivity",
    "WeightSensitivityRow",
    "WinRateRow",
]

LETTERS_NOTE = (
    "Models that share a letter are not significantly different (every pair tested, Holm-adjusted, 5% "
    "family-wise); a model's tier is its best letter, numbered 1, 2, 3 ... without gaps, and overlapping "
    "letters (a, ab, b) mark a model that is separated from neither of two models that are separated from "
    "each other. P(best) is the share of bootstrap replicates in which the model has the top score."
)


STRENGTH_NOTE = (
    "Pairwise scores are Bradley-Terry strengths (log-odds): a model beats another with probability "
    "1 / (1 + e^-d), d the difference of their strengths (d = 1: 73%, d = 2: 88%); one fit's strengths average "
    "0. 'Beats an average model' says each strength in words: its chance to beat a model of the ranking's "
    "average strength."
)


@dataclass(frozen=True, kw_only=True)
class RankingRow:
    """One model on one dimension: its score with a 95% CI, its rank, tier and letters (best first).

    Models that share a letter are not significantly different (Holm-adjusted over all pairs of the ranking);
    ``tier`` is the model's best letter as a number, counted over the letters that are some model's best
    ("a" = 1, no gaps). ``p_best`` is the share of bootstrap replicates in which the model has the top score of
    the ranking (ties shared): the probability that it is the best, given this panel; they sum to 1 over a
    ranking. A CI end is None where the data give no bound (a model that won or lost every comparison; ``note``
    says so)."""

    model: str
    dimension: str  # a dimension's name, "overall", "overall_agreed" or "composite"
    score: float | None
    ci_low: float | None
    ci_high: float | None
    ci_mc_se: float | None  # Monte Carlo standard error of the bootstrap interval ends (the larger of the two)
    rank: int  # 1 + the number of models significantly better
    tier: int
    letters: str  # compact letter display: "a", "ab", "b" ...
    n: int  # ratings (rating mode) or comparisons (pairwise) behind the score
    note: str | None
    p_best: float | None = omitted()  # share of bootstrap replicates with the top score (None: no replicates)
    # Pairwise: the chance to beat a model of average strength (see STRENGTH_NOTE), with its 95% CI
    win_vs_average: float | None = omitted()
    win_vs_average_ci_low: float | None = omitted()
    win_vs_average_ci_high: float | None = omitted()

    COLUMNS: ClassVar[tuple[Column, ...]] = (
        Column("dimension", "dimension"),
        Column("model", "model"),
        Column("score", "score"),
        Column("ci_low", "CI low"),
        Column("ci_high", "CI high"),
        Column("win_vs_average", "beats an average model", "beats average", percent_or_none, optional=True),
        Column("ci_mc_se", "CI Monte Carlo error", brief=False, show=fine),
        Column("rank", "rank"),
        Column("tier", "tier"),
        Column("letters", "letters"),
        Column("p_best", "probability of being the best", "P(best)", percent_or_none, optional=True),
        Column("n", "n"),
        Column("note", "note", show=blank_if_none),
    )


@dataclass(frozen=True, kw_only=True)
class PairRow:
    """Two models on one dimension: the difference, its test and whether the ranking separates them.

    ``model_a`` is the one placed higher. ``p_adjusted`` is Holm-adjusted over all pairs of the same
    ranking (scenario and dimension); ``separated`` is ``p_adjusted < 0.05``. ``ci_low``/``ci_high`` is the
    difference's 95% bootstrap interval for this pair alone (unadjusted: it may exclude 0 for a pair the
    ranking does not separate); ``holm_ci_low``/``holm_ci_high`` is the interval consistent with the Holm
    decision (at the per-pair level Holm used, with the standard error the pair's test implies), which
    excludes 0 exactly when the pair is separated (None: unbounded, or no test). Ordinal dimensions also carry
    ``win_prob``: how often model_a's rating beats model_b's on the same sample (ties half)."""

    dimension: str
    model_a: str
    model_b: str
    diff: float | None  # score of model_a minus score of model_b, in the score's units
    ci_low: float | None  # 95% CI of diff, not adjusted for the many pairs
    ci_high: float | None
    p_value: float | None
    holm_ci_low: float | None = None  # the interval consistent with the Holm decision (see above)
    holm_ci_high: float | None = None
    p_adjusted: float | None
    separated: bool
    test: str
    win_prob: float | None = omitted()
    win_prob_ci_low: float | None = omitted()
    win_prob_ci_high: float | None = omitted()

    COLUMNS: ClassVar[tuple[Column, ...]] = (
        Column("dimension", "dimension"),
        Column("model_a", "model A"),
        Column("model_b", "model B"),
        Column("diff", "A - B"),
        Column("ci_low", "CI low (unadjusted)"),
        Column("ci_high", "CI high (unadjusted)"),
        Column("holm_ci_low", "Holm-adjusted CI low"),
        Column("holm_ci_high", "Holm-adjusted CI high"),
        Column("win_prob", "A beats B", brief=False),
        Column("p_value", "p", brief=False, show=p_text),
        Column("p_adjusted", "p (Holm)", show=p_text),
        Column("separated", "separated", show=yes_no),
        Column("test", "test", brief=False),
    )


@dataclass(frozen=True, kw_only=True)
class LeftOutRow:
    """A model left out of a ranking across scenarios because it has no ratings in some of them."""

    model: str
    dimension: str
    missing_in: tuple[str, ...]  # the scenarios without its ratings


@dataclass(frozen=True, kw_only=True)
class AgreementRow:
    """Krippendorff's alpha on one dimension with its 95% CI and the counts behind it.

    ``alpha`` is None with the reason in ``note`` when it is undefined."""

    dimension: str
    level: Level
    alpha: float | None
    ci_low: float | None
    ci_high: float | None
    n_units: int  # items rated at least twice
    n_ratings: int  # ratings of those items
    n_reviewers: int
    note: str | None
    low_agreement: bool  # see is_low_agreement

    COLUMNS: ClassVar[tuple[Column, ...]] = (
        Column("dimension", "dimension"),
        Column("level", "level"),
        Column("alpha", "alpha"),
        Column("ci_low", "CI low"),
        Column("ci_high", "CI high"),
        Column("n_units", "items"),
        Column("n_ratings", "ratings"),
        Column("n_reviewers", "reviewers", brief=False),
        Column("note", "note", show=blank_if_none),
        Column("low_agreement", "low agreement", brief="low", show=yes_no),
    )


@dataclass(frozen=True, kw_only=True)
class ReliabilityRow:
    """How reliable one ranking's model scores are: split-half reliability of the models' means (Bradley-Terry
    strengths in pairwise mode), Spearman-Brown corrected, with a 95% bootstrap CI.

    Alpha measures agreement on single items; this measures whether the models' scores, each a mean over many
    items, would come out in the same order on other samples like these. Near 1: they would; near 0 or below:
    the models are too close for this panel to order. None with the reason in ``note`` when undefined."""

    dimension: str
    split_half: float | None
    ci_low: float | None
    ci_high: float | None
    n_models: int
    n_samples: int
    note: str | None

    COLUMNS: ClassVar[tuple[Column, ...]] = (
        Column("dimension", "dimension"),
        Column("split_half", "reliability of the models' means (split-half)", "reliability of means"),
        Column("ci_low", "CI low"),
        Column("ci_high", "CI high"),
        Column("n_models", "models", brief=False),
        Column("n_samples", "samples", brief=False),
        Column("note", "note", show=blank_if_none),
    )


@dataclass(frozen=True, kw_only=True)
class WinRateRow:
    """Pairwise: how often ``model`` beat ``opponent`` (ties half); None if they never met."""

    model: str
    opponent: str
    win_rate: float | None
    n: int


ALL_CHECKS = "all"  # the row of a model's outputs passing every one of their checks


@dataclass(frozen=True, kw_only=True)
class CheckRow:
    """One model's pass rate on one check (``check`` is its name, else its type; "all": every check)."""

    model: str
    check: str
    pass_rate: float | None
    ci_low: float | None
    ci_high: float | None
    n: int  # outputs checked
    rank: int  # 1 + the number of models significantly better
    tier: int
    letters: str  # compact letter display, as in a dimension's ranking

    COLUMNS: ClassVar[tuple[Column, ...]] = (
        Column("check", "check"),
        Column("model", "model"),
        Column("pass_rate", "pass rate"),
        Column("ci_low", "CI low"),
        Column("ci_high", "CI high"),
        Column("n", "outputs"),
        Column("rank", "rank"),
        Column("tier", "tier"),
        Column("letters", "letters"),
    )


@dataclass(frozen=True, kw_only=True)
class CheckPanelRow:
    """How passing a check goes with the panel's overall score (rating mode): Pearson's r over the rated
    outputs (point-biserial without repeats), each output's pass share against its mean overall score, with a
    cluster-bootstrap CI over samples. Positive: outputs that pass are the ones reviewers like."""

    check: str
    correlation: float | None
    ci_low: float | None
    ci_high: float | None
    n: int  # rated outputs behind the correlation
    note: str | None

    COLUMNS: ClassVar[tuple[Column, ...]] = (
        Column("check", "check"),
        Column("correlation", "correlation with the overall score"),
        Column("ci_low", "CI low"),
        Column("ci_high", "CI high"),
        Column("n", "rated outputs"),
        Column("note", "note", optional=True),
    )


@dataclass(frozen=True, kw_only=True)
class ScenarioReport:
    scenario: str
    n_samples: int
    n_ratings: int
    agreement: tuple[AgreementRow, ...]
    ranking: tuple[RankingRow, ...]
    pairs: tuple[PairRow, ...]
    summary: dict[str, str]  # dimension -> one plain-language line
    warnings: tuple[str, ...]
    low_agreement: tuple[str, ...]  # dimensions reviewers do not agree on (is_low_agreement)
    reliability: tuple[ReliabilityRow, ...] = ()  # one per ranking: how reliable its models' means are
    no_ratings: tuple[str, ...]  # models with outputs in the scenario but no ratings yet
    win_rates: tuple[WinRateRow, ...] | None = omitted()  # pairwise mode only
    benchmarks: tuple[BenchmarkSection, ...] | None = omitted()  # only when the report was given benchmark scores
    checks: tuple[CheckRow, ...] | None = omitted()  # automatic checks' pass rates; only when outputs had checks
    checks_vs_panel: tuple[CheckPanelRow, ...] | None = omitted()  # rating mode, with checks


@dataclass(frozen=True, kw_only=True)
class Composite:
    """The weighted mean over scenarios of each model's overall score."""

    weights: dict[str, float]  # scenario -> weight
    ranking: tuple[RankingRow, ...]
    pairs: tuple[PairRow, ...]
    summary: str
    notes: tuple[str, ...]


@dataclass(frozen=True, kw_only=True)
class WeightSensitivityRow:
    model: str
    share_first: float  # share of random weightings that put the model first
    rank_best: int
    rank_worst: int
    rank_median: float

    COLUMNS: ClassVar[tuple[Column, ...]] = (
        Column("model", "model"),
        Column("share_first", "first in", show=percent),
        Column("rank_best", "best rank"),
        Column("rank_worst", "worst rank"),
        Column("rank_median", "median rank"),
    )


@dataclass(frozen=True, kw_only=True)
class WeightSensitivity:
    """How the composite's order changes over random weightings of the scenarios, each drawn together with
    a bootstrap replicate of the scores (so it reflects their uncertainty too)."""

    draws: int  # 0 when there is nothing to weigh
    scenarios: tuple[str, ...] | None = omitted()  # the weighed scenarios; left out when draws is 0
    models: tuple[WeightSensitivityRow, ...]
    note: str | None  # why there is no table (one scenario, no composite)


@dataclass(frozen=True, kw_only=True)
class OverallReport:
    """All scenarios together, and the weighted composite."""

    agreement: tuple[AgreementRow, ...]
    ranking: tuple[RankingRow, ...]
    pairs: tuple[PairRow, ...]
    summary: dict[str, str]
    warnings: tuple[str, ...]
    low_agreement: tuple[str, ...]
    reliability: tuple[ReliabilityRow, ...] = ()  # one per ranking, as a scenario's
    left_out: tuple[LeftOutRow, ...]  # models not ranked across scenarios: no ratings in some of them
    win_rates: tuple[WinRateRow, ...] | None = omitted()  # pairwise mode only
    composite: Composite
    weight_sensitivity: WeightSensitivity
    benchmarks: tuple[BenchmarkSection, ...] | None = omitted()  # only when the report was given benchmark scores
