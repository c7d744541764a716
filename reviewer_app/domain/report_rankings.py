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
    pairs_text,
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
    "ReviewerDesignRow",
    "STRENGTH_NOTE",
    "ScenarioReport",
    "TIES_NOTE",
    "TieModelRow",
    "TieRow",
    "both_bad_line",
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
    # Rating mode, 3+ reviewers: the 95% CI widened by the reviewers' variance, for the score a new panel gives
    panel_ci_low: float | None = omitted()
    panel_ci_high: float | None = omitted()

    COLUMNS: ClassVar[tuple[Column, ...]] = (
        Column("dimension", "dimension"),
        Column("model", "model"),
        Column("score", "score"),
        Column("ci_low", "CI low"),
        Column("ci_high", "CI high"),
        Column("panel_ci_low", "CI low, new panel", brief=False, optional=True),
        Column("panel_ci_high", "CI high, new panel", brief=False, optional=True),
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
class ReviewerDesignRow:
    """A ranking whose reviewers did not rate the models evenly (rating mode), so a reviewer's leniency could
    pass for a model's quality: the imbalance (Cramer's V of the reviewer x model table, 0 even to 1 one model
    per reviewer, and the p-value of its chi-squared test of independence), that the ranking's scores are
    reviewer-adjusted (each reviewer's effect from a model + sample + reviewer least-squares fit taken off
    their scores), the spread of those effects, and the model pairs the design cannot tell apart from
    leniency (never separated)."""

    dimension: str
    reviewers: int
    cramers_v: float
    p_value: float
    adjusted: bool
    reviewer_sd: float | None
    confounded: tuple[str, ...]  # "A / B": pairs the design cannot separate from reviewer leniency

    COLUMNS: ClassVar[tuple[Column, ...]] = (
        Column("dimension", "dimension"),
        Column("reviewers", "reviewers"),
        Column("cramers_v", "imbalance (Cramer's V)"),
        Column("p_value", "p (independence)", show=p_text),
        Column("adjusted", "scores reviewer-adjusted", "adjusted", show=yes_no),
        Column("reviewer_sd", "spread of reviewer effects (SD)", "reviewer SD"),
        Column("confounded", "pairs not separable from leniency", "confounded", show=pairs_text),
    )


@dataclass(frozen=True, kw_only=True)
class WinRateRow:
    """Pairwise: how often ``model`` beat ``opponent`` (ties half); None if they never met."""

    model: str
    opponent: str
    win_rate: float | None
    n: int


TIES_NOTE = (
    "Ties and both bad: the share of each model's comparisons that ended without a winner (tie or both bad) and "
    "judged both bad, with 95% cluster-bootstrap intervals over samples. The ranking counts both as half a win "
    "each way, which pulls its strengths towards 0; Davidson's tie model (1970) does not: its strengths are the "
    "log-odds of winning a decisive comparison, and nu / (2 + nu) is how often two equal models tie. 'Shrinkage' "
    "is the slope of the ranking's strengths on Davidson's (1: not shrunk). The ranking's ranks, tiers and "
    "letters stay the tests of the ties-half strengths (equal models have equal expected scores either way)."
)


@dataclass(frozen=True, kw_only=True)
class TieRow:
    """Pairwise: how one model's comparisons on one dimension ended without a winner, and its Davidson strength.

    ``tie_rate`` is the share of its comparisons answered "tie" or "both bad", ``both_bad_rate`` the share
    answered "both bad" (an absolute-quality signal a win rate hides), each with a 95% cluster-bootstrap
    percentile interval over samples. ``davidson`` is its strength under Davidson's (1970) tie model, the
    log-odds of winning a decisive comparison (not shrunk by ties as the ranking's score is), with a 95%
    bootstrap percentile interval (an end is None where the data give no bound: a model that never lost or
    never won a decisive comparison)."""

    dimension: str
    model: str
    n: int  # comparisons of the model
    tie_rate: float | None
    tie_ci_low: float | None
    tie_ci_high: float | None
    both_bad_rate: float | None
    both_bad_ci_low: float | None
    both_bad_ci_high: float | None
    davidson: float | None
    davidson_ci_low: float | None
    davidson_ci_high: float | None

    COLUMNS: ClassVar[tuple[Column, ...]] = (
        Column("dimension", "dimension"),
        Column("model", "model"),
        Column("n", "comparisons"),
        Column("tie_rate", "no winner (tie or both bad)", "no winner", percent_or_none),
        Column("tie_ci_low", "no winner: CI low", show=percent_or_none),
        Column("tie_ci_high", "no winner: CI high", show=percent_or_none),
        Column("both_bad_rate", "both bad", show=percent_or_none),
        Column("both_bad_ci_low", "both bad: CI low", show=percent_or_none),
        Column("both_bad_ci_high", "both bad: CI high", show=percent_or_none),
        Column("davidson", "Davidson strength"),
        Column("davidson_ci_low", "Davidson: CI low"),
        Column("davidson_ci_high", "Davidson: CI high"),
    )


@dataclass(frozen=True, kw_only=True)
class TieModelRow:
    """Pairwise: Davidson's tie parameter for one ranking, with a 95% bootstrap percentile interval (two equal
    models tie in nu / (2 + nu) of their comparisons), the share of all its comparisons without a winner, and
    ``shrinkage``: the least-squares slope through 0 of the ranking's ties-half strengths on Davidson's (1:
    not shrunk). None with the reason in ``note`` where undefined (no ties, or nothing but ties)."""

    dimension: str
    n: int  # comparisons
    tie_share: float | None
    nu: float | None
    nu_ci_low: float | None
    nu_ci_high: float | None
    shrinkage: float | None
    note: str | None

    COLUMNS: ClassVar[tuple[Column, ...]] = (
        Column("dimension", "dimension"),
        Column("n", "comparisons"),
        Column("tie_share", "no winner", show=percent_or_none),
        Column("nu", "tie parameter nu"),
        Column("nu_ci_low", "CI low"),
        Column("nu_ci_high", "CI high"),
        Column("shrinkage", "shrinkage (ranking / Davidson strengths)", "shrinkage"),
        Column("note", "note", show=blank_if_none),
    )


def both_bad_line(row: TieRow) -> str | None:
    """One model's both-bad rate in words, for the lead: "Both answers were bad in 18% (12%-24%) of B's 120
    comparisons (overall)." None where it has none to give."""
    if row.both_bad_rate is None:
        return None
    ci = ""
    if row.both_bad_ci_low is not None and row.both_bad_ci_high is not None:
        ci = f" ({row.both_bad_ci_low:.0%}-{row.both_bad_ci_high:.0%})"
    share = f"{row.both_bad_rate:.0%}{ci}"
    return f"Both answers were bad in {share} of {row.model}'s {row.n} comparisons ({row.dimension})."


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
    ties: tuple[TieRow, ...] | None = omitted()  # pairwise mode only: tie and both-bad rates, Davidson strengths
    tie_model: tuple[TieModelRow, ...] | None = omitted()  # pairwise mode only: one per ranking
    reviewer_design: tuple[ReviewerDesignRow, ...] | None = omitted()  # rankings on reviewer-adjusted scores


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
    """One model's order under other weights, with the two sources of variation kept apart: the weights
    alone (random weightings of the point scores), the panel's noise alone at the chosen weights (``p_best``,
    the composite's P(best)), and both together (each weighting with a bootstrap replicate)."""

    model: str
    share_first: float  # weights alone: share of random weightings of the point scores that put the model first
    rank_best: int  # weights alone
    rank_worst: int
    rank_median: float
    p_best: float | None  # noise alone: P(best) at the chosen weights (None: the composite ranks no such model)
    share_first_with_noise: float  # weights and noise: share of weightings, each with a bootstrap replicate
    rank_best_with_noise: int
    rank_worst_with_noise: int

    COLUMNS: ClassVar[tuple[Column, ...]] = (
        Column("model", "model"),
        Column("share_first", "first in (weights alone)", show=percent),
        Column("rank_best", "best rank (weights alone)"),
        Column("rank_worst", "worst rank (weights alone)"),
        Column("rank_median", "median rank (weights alone)"),
        Column("p_best", "P(best) at the chosen weights (noise alone)", show=percent_or_none),
        Column("share_first_with_noise", "first in (weights and noise)", show=percent),
        Column("rank_best_with_noise", "best rank (weights and noise)"),
        Column("rank_worst_with_noise", "worst rank (weights and noise)"),
    )


@dataclass(frozen=True, kw_only=True)
class WeightSensitivity:
    """How the composite's order changes with the scenarios' weights, apart from the panel's noise: each row
    gives the weights alone, the noise alone (P(best) at the chosen weights) and both together; ``summary``
    says each in words."""

    draws: int  # 0 when there is nothing to weigh
    scenarios: tuple[str, ...] | None = omitted()  # the weighed scenarios; left out when draws is 0
    models: tuple[WeightSensitivityRow, ...]
    summary: tuple[str, ...] = ()  # one line each: weights alone, noise alone, both; empty when draws is 0
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
    ties: tuple[TieRow, ...] | None = omitted()  # pairwise mode only, as a scenario's
    tie_model: tuple[TieModelRow, ...] | None = omitted()
    reviewer_design: tuple[ReviewerDesignRow, ...] | None = omitted()  # rankings on reviewer-adjusted scores
