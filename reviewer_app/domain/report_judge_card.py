"""The LLM judge's report card in the report's "Judge vs panel" section: per scenario, the judge measured
against the panel like one more reviewer (agreement, the Alternative Annotator Test, bias, decisions) and a
verdict with its rule (``analysis.judge_card``). The judge-assisted rankings beside it are ``report_assisted``'s.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Literal

from reviewer_app.domain.report_fields import Column, percent_or_none, yes_no

__all__ = [
    "JudgeAgreementRow",
    "JudgeBiasRow",
    "JudgeCard",
    "JudgeDimensionCard",
    "JudgeVerdict",
    "LeaveOneOutRow",
    "VERDICT_RULE",
    "VERDICT_WORDS",
]

JudgeVerdict = Literal["stands_in", "triage_only", "not_trusted"]
VERDICT_WORDS: dict[str, str] = {
    "stands_in": "may stand in for a reviewer",
    "triage_only": "triage only",
    "not_trusted": "not trusted here",
}
VERDICT_RULE = (
    "A scenario's verdict: 'may stand in for a reviewer' when, on every question measured, the judge passes the "
    "Alternative Annotator Test (Calderon et al. 2025: for at least half of the reviewers, the share of items on "
    "which the judge agrees with the other reviewers at least as well as that reviewer does is no more than 0.2 "
    "below the reviewer's share; one-sided t-test at 5% with Benjamini-Yekutieli correction), favours no model "
    "(no bias interval excludes 0 "
    "after Holm correction) and, in pairwise mode, gives the same verdict in both orders at least 80% of the "
    "time; 'triage only' when it fails that but its order of the models agrees with the panel's (on some "
    "question, Kendall tau's 95% interval above 0): good enough to sort outputs for reviewers, not to replace "
    "them; otherwise 'not trusted here'. A panel whose own agreement is low (alpha below "
    "0.4) cannot certify a judge: the verdict is then at best 'triage only', and says so."
)


@dataclass(frozen=True, kw_only=True)
class LeaveOneOutRow:
    """Alpha of the panel with the judge in one reviewer's place (on the items that reviewer rated), beside the
    panel's own alpha: is the judge within the reviewers' spread?"""

    dimension: str
    replaced: str  # the reviewer whose ratings the judge's replaced
    alpha: float | None
    ci_low: float | None
    ci_high: float | None
    # The Alternative Annotator Test against this reviewer: the judge's advantage probability (the share of
    # items on which it agrees with the others at least as well as the reviewer), its one-sided p, whether it won.
    advantage: float | None
    p_value: float | None
    won: bool | None
    n_items: int

    COLUMNS: ClassVar[tuple[Column, ...]] = (
        Column("dimension", "dimension"),
        Column("replaced", "judge in the place of"),
        Column("alpha", "alpha"),
        Column("ci_low", "CI low"),
        Column("ci_high", "CI high"),
        Column("advantage", "advantage probability", "advantage"),
        Column("p_value", "p (BY-adjusted)", brief=False),
        Column("won", "judge as good", show=yes_no),
        Column("n_items", "items"),
    )


@dataclass(frozen=True, kw_only=True)
class JudgeAgreementRow:
    """One question's agreement: the reviewers' alpha, the mean alpha with the judge in a reviewer's place,
    and the Alternative Annotator Test's winning rate (share of reviewers the judge is as good as) and result."""

    dimension: str
    alpha_panel: float | None
    alpha_panel_low: float | None
    alpha_panel_high: float | None
    alpha_with_judge: float | None  # mean over the reviewers replaced
    winning_rate: float | None
    passed: bool | None  # None: not testable (fewer than 2 reviewers on shared items, or too few items)
    reviewers: int
    note: str | None

    COLUMNS: ClassVar[tuple[Column, ...]] = (
        Column("dimension", "dimension"),
        Column("alpha_panel", "alpha, reviewers"),
        Column("alpha_panel_low", "CI low"),
        Column("alpha_panel_high", "CI high"),
        Column("alpha_with_judge", "alpha, judge in a reviewer's place", "alpha with judge"),
        Column("winning_rate", "AAT winning rate", "winning rate", percent_or_none),
        Column("passed", "AAT passed", show=lambda v: "" if v is None else yes_no(v)),
        Column("reviewers", "reviewers"),
        Column("note", "note", brief=False),
    )


@dataclass(frozen=True, kw_only=True)
class JudgeBiasRow:
    """How far the judge's scores of one model sit from the panel's on the same outputs (judge minus panel, in
    the question's points; pairwise: in share of comparisons won), with a 95% interval (Student's t over the
    samples) and whether it is significant after Holm correction across the models."""

    dimension: str
    model: str
    bias: float | None
    ci_low: float | None
    ci_high: float | None
    favours: bool
    n: int

    COLUMNS: ClassVar[tuple[Column, ...]] = (
        Column("dimension", "dimension"),
        Column("model", "model"),
        Column("bias", "judge minus panel"),
        Column("ci_low", "CI low"),
        Column("ci_high", "CI high"),
        Column("favours", "significant (Holm)", "significant", yes_no),
        Column("n", "outputs"),
    )


@dataclass(frozen=True, kw_only=True)
class JudgeDimensionCard:
    """One question's measures beyond agreement: the length bias (the judge's excess over the panel per 100
    more words, with a 95% interval), the position bias (pairwise: share of decisive verdicts for the answer
    shown first, and the share of verdicts that stay when the answers are swapped) and decision agreement
    (Kendall's tau between the judge's and the panel's order of the models, with a 95% interval, and the pairs
    one separates that the other does not)."""

    dimension: str
    length_slope: float | None
    length_low: float | None
    length_high: float | None
    first_shown: float | None = None
    first_shown_low: float | None = None
    first_shown_high: float | None = None
    consistency: float | None = None
    tau: float | None
    tau_low: float | None
    tau_high: float | None
    judge_only_pairs: tuple[str, ...]
    panel_only_pairs: tuple[str, ...]

    COLUMNS: ClassVar[tuple[Column, ...]] = (
        Column("dimension", "dimension"),
        Column("length_slope", "per 100 words"),
        Column("length_low", "CI low", brief=False),
        Column("length_high", "CI high", brief=False),
        Column("first_shown", "picks the first shown", "first shown", percent_or_none, optional=True),
        Column("consistency", "same verdict swapped", "consistent", percent_or_none, optional=True),
        Column("tau", "Kendall tau"),
        Column("tau_low", "tau CI low", brief=False),
        Column("tau_high", "tau CI high", brief=False),
        Column("judge_only_pairs", "only the judge separates", "judge only", lambda v: ", ".join(v)),
        Column("panel_only_pairs", "only the panel separates", "panel only", lambda v: ", ".join(v)),
    )


@dataclass(frozen=True, kw_only=True)
class JudgeCard:
    """The judge's report card in one scenario: agreement, leave-one-out rows, bias, the other measures, and
    the verdict with the reasons for it (sentences for a lead)."""

    scenario: str
    verdict: JudgeVerdict
    reasons: tuple[str, ...]
    agreement: tuple[JudgeAgreementRow, ...]
    leave_one_out: tuple[LeaveOneOutRow, ...]
    bias: tuple[JudgeBiasRow, ...]
    measures: tuple[JudgeDimensionCard, ...]
