"""The typed report: what ``aggregation.report.build_report`` returns and what every renderer and page reads.

The types mirror ``reviewer_app/reporting/schema.json``, the published JSON contract (a test walks both and
checks that each schema object has a type with the same fields, and each required field is never null).
:func:`report_to_dict` is the only way from the types to JSON: a field marked with :func:`omitted` is left
out of the JSON when it is None (``win_rates`` outside pairwise mode, for instance); any other None is null.

A table's columns are described once, on its row type (``RankingRow.COLUMNS`` ...), as :class:`Column`:
the field a cell shows and its heading. The HTML report shows every column; the Markdown report and the CSV
only the ``brief`` ones.

    Report
    ├── scenarios: ScenarioReport        agreement (AgreementRow), ranking (RankingRow), pairs (PairRow),
    │                                    win_rates (WinRateRow)
    ├── overall: OverallReport           the same across scenarios (LeftOutRow: models not ranked there),
    │                                    plus Composite and WeightSensitivity
    ├── reviewers: ReviewerRow           per-reviewer diagnostics and flags
    ├── beside: Beside                   OutputStats, PositionBias / PositionEffect, StabilityRow
    ├── methods: Methods                 Counts, MethodDimension, definitions
    └── comments: CommentGroup           per scenario and model: counts, the latest CommentRows
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, fields, is_dataclass
from typing import Any, ClassVar

# Re-exported: schema.json describes these too, and its contract test looks every described type up here.
from reviewer_app.domain.benchmarks import BenchmarkModel as BenchmarkModel
from reviewer_app.domain.benchmarks import BenchmarkPair as BenchmarkPair
from reviewer_app.domain.benchmarks import BenchmarkSection
from reviewer_app.domain.enums import Level, Mode, Scale
from reviewer_app.domain.production import PanelProduction
from reviewer_app.domain.production import ProductionModel as ProductionModel
from reviewer_app.domain.production import ProductionPair as ProductionPair

SCHEMA_VERSION = 1
LOW_AGREEMENT_ALPHA = 0.4  # below this alpha (or with a CI reaching below 0) reviewers do not agree enough
LETTERS_NOTE = (
    "Models that share a letter are not significantly different (every pair tested, Holm-adjusted, 5% "
    "family-wise); a model's tier is its best letter, and overlapping letters (a, ab, b) mark a model that "
    "is separated from neither of two models that are separated from each other."
)
STRENGTH_NOTE = (
    "Pairwise scores are Bradley-Terry strengths (log-odds): a model beats another with probability "
    "1 / (1 + e^-d), d the difference of their strengths (d = 1: 73%, d = 2: 88%); one fit's strengths average "
    "0. 'Beats an average model' says each strength in words: its chance to beat a model of the ranking's "
    "average strength."
)
OMIT_IF_NONE = "omit_if_none"  # dataclass field metadata: leave the key out of the JSON when the value is None


def omitted() -> Any:
    """A field that defaults to None and is left out of the JSON while None (not written as null)."""
    return field(default=None, metadata={OMIT_IF_NONE: True})


@dataclass(frozen=True)
class Column:
    """One column of a report table: the row field it shows, its heading, and how a cell shows the value.

    ``brief`` says whether the compact tables (Markdown, CSV) have the column too: True under the same
    heading, a string for a shorter heading, False not at all. ``show`` turns the field's value into the
    cell (default: the value itself; the renderers format numbers). An ``optional`` column (a field one
    mode fills and the other leaves out) is left out of a rendered table where no row has a value; the
    CSV keeps it, so its header does not depend on the mode.
    """

    name: str
    header: str
    brief: bool | str = True
    show: Callable[[Any], object] | None = None
    optional: bool = False

    @property
    def brief_header(self) -> str | None:
        """The heading in the compact tables, or None when they leave the column out."""
        if self.brief is False:
            return None
        return self.brief if isinstance(self.brief, str) else self.header

    def cell(self, row: object) -> object:
        """What the column shows for ``row``."""
        value = getattr(row, self.name)
        return value if self.show is None else self.show(value)


def shown_columns(columns: Iterable[Column], rows: Sequence[object]) -> tuple[Column, ...]:
    """The columns a rendered table of ``rows`` shows: all but the optional ones no row has a value for."""
    return tuple(c for c in columns if not c.optional or any(getattr(r, c.name) is not None for r in rows))


def _blank_if_none(value: str | None) -> str:
    return value or ""


def _percent(value: float) -> str:
    return f"{value:.0%}"


def _percent_or_none(value: float | None) -> str | None:
    return None if value is None else f"{value:.0%}"


def _yes_no(value: bool) -> str:
    return "yes" if value else "no"


def _p(value: float | None) -> str | None:
    """A p-value for a table: three decimals, "<0.001" below that."""
    if value is None:
        return None
    return "<0.001" if value < 0.001 else f"{value:.3f}"


def _fine(value: float | None) -> str | None:
    """A small error for a table, to four decimals."""
    return None if value is None else f"{value:.4f}"


def is_low_agreement(alpha: float | None, ci_low: float | None) -> bool:
    """The one rule for "reviewers do not agree on this" (report, summaries, the results page's headline):
    Krippendorff's alpha below 0.4, or its 95% CI reaching below 0. An undefined alpha is not judged."""
    if alpha is None:
        return False
    return alpha < LOW_AGREEMENT_ALPHA or (ci_low is not None and ci_low < 0)


def _alpha(value: float) -> str:
    """An alpha in a sentence: two decimals, or one significant digit near 0 ("-0.00006", never "-0.00")."""
    if abs(value) >= 0.01 or value == 0:
        return f"{value:.2f}"
    return f"{value:.{-math.floor(math.log10(abs(value)))}f}"


def agreement_phrase(dimension: str, alpha: float | None, ci_low: float | None) -> tuple[str, str] | None:
    """How little reviewers agree on ``dimension``, as (verb, what): ("barely agree on", "correctness (alpha
    0.12)"); None when they agree enough by :func:`is_low_agreement`. The words follow the number: below 0
    they agree less than chance would, below 0.4 barely, and above that only the interval says they may not."""
    if alpha is None or not is_low_agreement(alpha, ci_low):
        return None
    if alpha < 0:
        return "agree less than chance on", f"{dimension} (alpha {_alpha(alpha)})"
    if alpha < LOW_AGREEMENT_ALPHA:
        down = f", 95% CI down to {_alpha(ci_low)}" if ci_low is not None and ci_low < 0 else ""
        return "barely agree on", f"{dimension} (alpha {_alpha(alpha)}{down})"
    assert ci_low is not None  # low by its interval alone
    return "may not agree at all on", f"{dimension} (alpha {_alpha(alpha)}, but its 95% CI reaches {_alpha(ci_low)})"


def low_agreement_words(rows: Iterable[AgreementRow]) -> str | None:
    """What reviewers do not agree on, with the numbers, grouped by how little: "barely agree on correctness
    (alpha 0.12) and agree less than chance on style (alpha -0.30)". None when they agree on every one."""
    groups: dict[str, list[str]] = {}
    for r in rows:
        phrase = agreement_phrase(r.dimension, r.alpha, r.ci_low)
        if phrase is not None:
            groups.setdefault(phrase[0], []).append(phrase[1])
    return _and([f"{verb} {_and(what)}" for verb, what in groups.items()]) if groups else None


def low_agreement_line(rows: Iterable[AgreementRow], *, headline: bool = False) -> str | None:
    """The sentence that comes before any ranking sentence resting on dimensions reviewers do not agree on:
    "Reviewers barely agree on correctness (alpha 0.12): treat this ranking as weak." (several dimensions, or
    a ``headline`` above every ranking: "... treat the rankings on them as weak"). None when they agree on
    every one of ``rows``."""
    rows = list(rows)
    words = low_agreement_words(rows)
    if words is None:
        return None
    many = sum(agreement_phrase(r.dimension, r.alpha, r.ci_low) is not None for r in rows) > 1
    what = f"the rankings on {'them' if many else 'it'}" if many or headline else "this ranking"
    return f"Reviewers {words}: treat {what} as weak."


def _and(parts: Sequence[str]) -> str:
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


@dataclass(frozen=True, kw_only=True)
class RankingRow:
    """One model on one dimension: its score with a 95% CI, its rank, tier and letters (best first).

    Models that share a letter are not significantly different (Holm-adjusted over all pairs of the ranking);
    ``tier`` is the model's best letter as a number ("a" = 1). A CI end is None where the data give no bound
    (a model that won or lost every comparison; ``note`` says so)."""

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
        Column("win_vs_average", "beats an average model", "beats average", _percent_or_none, optional=True),
        Column("ci_mc_se", "CI Monte Carlo error", brief=False, show=_fine),
        Column("rank", "rank"),
        Column("tier", "tier"),
        Column("letters", "letters"),
        Column("n", "n"),
        Column("note", "note", show=_blank_if_none),
    )


@dataclass(frozen=True, kw_only=True)
class PairRow:
    """Two models on one dimension: the difference, its test and whether the ranking separates them.

    ``model_a`` is the one placed higher. ``p_adjusted`` is Holm-adjusted over all pairs of the same
    ranking (scenario and dimension); ``separated`` is ``p_adjusted < 0.05``. Ordinal dimensions also carry
    ``win_prob``: how often model_a's rating beats model_b's on the same sample (ties half)."""

    dimension: str
    model_a: str
    model_b: str
    diff: float | None  # score of model_a minus score of model_b, in the score's units
    ci_low: float | None  # 95% CI of diff, not adjusted for the many pairs
    ci_high: float | None
    p_value: float | None
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
        Column("ci_low", "CI low"),
        Column("ci_high", "CI high"),
        Column("win_prob", "A beats B", brief=False),
        Column("p_value", "p", brief=False, show=_p),
        Column("p_adjusted", "p (Holm)", show=_p),
        Column("separated", "separated", show=_yes_no),
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
        Column("note", "note", show=_blank_if_none),
        Column("low_agreement", "low agreement", brief="low", show=_yes_no),
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
        Column("share_first", "first in", show=_percent),
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
    left_out: tuple[LeftOutRow, ...]  # models not ranked across scenarios: no ratings in some of them
    win_rates: tuple[WinRateRow, ...] | None = omitted()  # pairwise mode only
    composite: Composite
    weight_sensitivity: WeightSensitivity
    benchmarks: tuple[BenchmarkSection, ...] | None = omitted()  # only when the report was given benchmark scores


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
        Column("flag", "flagged", show=_yes_no),  # the reasons are listed below the table: see flag_lines
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


@dataclass(frozen=True, kw_only=True)
class Report:
    """The whole report of one batch. Model names are unblinded: for leads and admins only."""

    schema_version: int
    batch: str
    generated_at: str  # ISO 8601, to the second
    mode: Mode
    models: tuple[str, ...]
    scenarios: tuple[ScenarioReport, ...]
    overall: OverallReport
    reviewers: tuple[ReviewerRow, ...]
    beside: Beside
    methods: Methods
    comments: tuple[CommentGroup, ...]  # reviewers' comments and can't-judge reasons, per scenario and model
    # Whether production feedback (``import-feedback``) agrees with the panel, for the batch's models that
    # have some; left out when none has.
    production: PanelProduction | None = omitted()


def score_bounds(report: Report, dimension: str) -> tuple[float, float] | None:
    """The lowest and highest score a ranking on ``dimension`` can have, where a chart's axis ends; None where
    scores have no bounds (pairwise: Bradley-Terry strengths). Rating mode: the dimension's scale (binary
    0-1), and 0-1 for the overall score, its variant without low-agreement dimensions, and the composite."""
    if report.mode == Mode.PAIRWISE:
        return None
    for d in report.methods.dimensions:
        if d.name == dimension:
            if d.scale == Scale.BINARY:
                return 0.0, 1.0
            return (float(d.min), float(d.max)) if d.min is not None and d.max is not None else None
    return (0.0, 1.0) if dimension in ("overall", "overall_agreed", "composite") else None


def report_to_dict(report: Report) -> dict[str, Any]:
    """The report as the JSON object of ``schema.json``: plain dicts, lists, numbers and strings."""
    out: dict[str, Any] = _plain(report)
    return out


def records(rows: Iterable[object]) -> list[dict[str, Any]]:
    """Rows of a report table as JSON-style dicts (one key per field, as in the JSON), e.g. for a DataFrame."""
    return [_plain(row) for row in rows]


def plain(value: object) -> Any:
    """Any part of the report as JSON-style data (see :func:`report_to_dict`)."""
    return _plain(value)


def _plain(value: object) -> Any:
    if is_dataclass(value) and not isinstance(value, type):
        out = {}
        for f in fields(value):
            item = getattr(value, f.name)
            if item is None and f.metadata.get(OMIT_IF_NONE):
                continue
            out[f.name] = _plain(item)
        return out
    if isinstance(value, tuple | list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, float) and not math.isfinite(value):
        return None  # JSON has no NaN
    return value
