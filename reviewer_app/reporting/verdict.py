"""The verdict: per scenario (and for the composite) one line a lead can read aloud, before any detail.

Who leads, who is tied with them, who follows; how sure that is (whether the leader is separated from every
other model by the report's own pair tests, whether reviewers agree on single items of the dimension and, if
not, whether the models' means are reliable all the same); and what to look
at before acting on it (the scenario's cautions, models with no ratings, flagged reviewers). Every part is
read from the report's numbers (ranks, letters, Holm-adjusted pair tests, agreement), never worked out again,
so the verdict cannot say what the tables beneath it do not.

Plain text with the model names as they are: the page escapes them (names are shown as typed).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from reviewer_app.domain.low_agreement import means_reliable, reliability_words
from reviewer_app.domain.report import Report
from reviewer_app.domain.report_rankings import AgreementRow, PairRow, RankingRow, ReliabilityRow, ScenarioReport
from reviewer_app.domain.words import join_names

__all__ = ["Verdict", "before_acting", "verdicts"]


@dataclass(frozen=True)
class Verdict:
    """One line of the verdict: ``where`` (a scenario, or "Composite"), ``standing`` (who leads, who is tied,
    who follows), ``sureness`` (how sure, in words), ``look_at`` (what to read before acting) and ``settled``
    (one model leads, separated from every other model)."""

    where: str
    samples: int | None
    standing: str
    sureness: str
    look_at: tuple[str, ...]
    settled: bool


def verdicts(report: Report) -> list[Verdict]:
    """The composite's verdict (when there are several scenarios), then one per scenario, in the report's
    order."""
    out = []
    composite = report.overall.composite
    if len(report.scenarios) > 1 and composite.ranking:
        ws = report.overall.weight_sensitivity
        extra: list[str] = []
        if ws.models:
            top = max(ws.models, key=lambda r: r.share_first)
            extra.append(
                f"{top.model} comes first in {top.share_first:.0%} of {ws.draws:,} random weightings of the "
                "scenarios (the weights alone, on the point scores)"
            )
        out.append(_verdict("Composite", None, composite.ranking, composite.pairs, None, None, extra, ()))
    for block in report.scenarios:
        look = [_cautions(block)] if block.warnings else []
        if block.no_ratings:
            look.append(f"no ratings yet for {join_names(list(block.no_ratings))}")
        rows, dimension = _headline_rows(block)
        agreement = next((a for a in block.agreement if a.dimension == dimension), None)
        pairs = tuple(p for p in block.pairs if p.dimension == dimension)
        reliability = next((r for r in block.reliability if r.dimension == dimension), None)
        out.append(_verdict(block.scenario, block.n_samples, rows, pairs, agreement, reliability, [], tuple(look)))
    return out


def before_acting(report: Report) -> list[str]:
    """What to read before acting on any of the verdicts: flagged reviewers, models left out of the pooled
    ranking, and production feedback that disagrees with the panel."""
    out = []
    flagged = [r.reviewer for r in report.reviewers if r.flag]
    if flagged:
        out.append(
            f"{len(flagged)} flagged reviewer{'s' if len(flagged) != 1 else ''} ({join_names(flagged)}): see Reviewers"
        )
    if report.overall.left_out:
        left = list(dict.fromkeys(r.model for r in report.overall.left_out))
        out.append(f"left out of the pooled ranking (no ratings in some scenarios): {join_names(left)}")
    if report.production is not None:
        n = sum(p.agreement == "disagree" for p in report.production.pairs)
        if n:
            out.append(
                f"production feedback disagrees with the panel on {n} pair{'s' if n != 1 else ''}: see Production"
            )
    return out


def _headline_rows(block: ScenarioReport) -> tuple[tuple[RankingRow, ...], str]:
    """The ranking the scenario's verdict reads: 'overall' where there is one (several dimensions pooled),
    else the scenario's one dimension."""
    dimensions = list(dict.fromkeys(r.dimension for r in block.ranking))
    dimension = "overall" if "overall" in dimensions else (dimensions[0] if dimensions else "")
    return tuple(r for r in block.ranking if r.dimension == dimension), dimension


def _cautions(block: ScenarioReport) -> str:
    n = len(block.warnings)
    return f"{n} caution{'s' if n != 1 else ''} in {block.scenario}'s details"


def _verdict(
    where: str,
    samples: int | None,
    rows: Sequence[RankingRow],
    pairs: Sequence[PairRow],
    agreement: AgreementRow | None,
    reliability: ReliabilityRow | None,
    extra: Sequence[str],
    look_at: tuple[str, ...],
) -> Verdict:
    if not rows:
        return Verdict(where, samples, "no ratings yet", "nothing to rank", look_at, False)
    ranked = sorted(rows, key=lambda r: (r.tier, r.rank))
    tiers: dict[int, list[str]] = {}
    for r in ranked:
        tiers.setdefault(r.tier, []).append(r.model)
    groups = list(tiers.values())
    top = groups[0]
    if len(rows) == 1:
        standing = f"{top[0]} is the only model rated"
    elif len(top) == 1:
        standing = f"{top[0]} leads"
    elif len(top) == len(rows):
        standing = f"{join_names(top)} are all tied"
    else:
        standing = f"{join_names(top)} are tied at the top"
    if len(groups) > 1:
        standing += "; then " + "; then ".join(join_names(g) for g in groups[1:])
    leader = top[0] if len(top) == 1 else None
    mine = [p for p in pairs if leader in (p.model_a, p.model_b)]
    close = [p.model_b if p.model_a == leader else p.model_a for p in mine if not p.separated]
    apart = leader is not None and len(mine) == len(rows) - 1 and not close
    if len(rows) == 1:
        sure = "nothing to compare it with"
    elif apart:
        sure = "clear: the leader is separated from every other model (95%, Holm-adjusted)"
    elif leader is not None and close:
        sure = f"not settled: the leader is not separated from {join_names(close)}"
    else:
        sure = "not settled: the data cannot order the top models"
    if agreement is not None and agreement.low_agreement and agreement.alpha is not None:
        sure += f"; reviewers agree little on single items (alpha {agreement.alpha:.2f})"
        if reliability is not None and means_reliable(reliability):
            sure += f", but the models' means are reliable ({reliability_words(reliability)})"
        elif reliability is not None and reliability.split_half is not None:
            sure += f", and the models' means are not reliable either ({reliability_words(reliability)})"
    parts = [sure, *extra]
    return Verdict(where, samples, standing, "; ".join(parts), look_at, apart)
