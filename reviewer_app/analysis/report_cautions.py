"""What a report warns about: low agreement (and the ranking without those dimensions), one reviewer's
dominance, ratings by people who can see unblinded results.

The warnings open a block's list, the cautions go in front of the summary line of a ranking that rests on a
dimension reviewers do not agree on: both come before any ranking sentence. Worded here, apart from
``report``'s assembling, so the sentences a report adds about how far to trust it are in one place.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from reviewer_app.analysis.prepare import OVERALL, OVERALL_AGREED
from reviewer_app.domain.low_agreement import (
    low_agreement_line,
    low_agreement_words,
    means_by_dimension,
    means_reliable,
    pooled_caution,
)
from reviewer_app.domain.report_rankings import AgreementRow, ReliabilityRow
from reviewer_app.domain.words import join_names

DOMINANT_SHARE = 0.6  # one reviewer giving more than this share of a scenario's ratings gets a warning


def low_dimensions(agreement: list[AgreementRow]) -> tuple[str, ...]:
    """The dimensions reviewers do not agree on (``AgreementRow.low_agreement``)."""
    return tuple(r.dimension for r in agreement if r.low_agreement)


def low_warning(
    agreement: list[AgreementRow], dims: list[str], scope: str, reliability: Sequence[ReliabilityRow] = ()
) -> str:
    """Which dimensions reviewers do not agree on, how little (the numbers), whether each ranking can stand
    by the reliability of its models' means, and what the overall ranking does about it. The block's first
    warning: it comes before any ranking sentence."""
    low = low_dimensions(agreement)
    by_dim = {r.dimension: r for r in reliability}
    text = (
        f"{scope}: reviewers {low_agreement_words(agreement)} (low agreement on single items: alpha below 0.4 or "
        f"its 95% CI reaching below 0); {means_by_dimension(low, by_dim)}."
    )
    named = [d for d in low if d in dims]
    if not named:
        return text
    it = "it" if len(named) == 1 else "them"
    if len(named) == len(dims):
        if all(means_reliable(by_dim.get(d)) for d in [*named, OVERALL]):
            return text  # every ranking it rests on can stand, and so can its own
        return text + f" '{OVERALL}' rests on {'it alone' if len(named) == 1 else 'them all'}; read it with care."
    return text + f" '{OVERALL}' still includes {it}; '{OVERALL_AGREED}' ranks the models without {it}."


def add_cautions(
    summary: dict[str, str], agreement: list[AgreementRow], reliability: Sequence[ReliabilityRow] = ()
) -> None:
    """Put the low-agreement sentence, with its alpha and the reliability of the models' means, in front of
    each summary line of a dimension reviewers do not agree on ("Reviewers barely agree on single items of
    correctness (alpha 0.12), but the models' means are reliable (split-half 0.93, ...): this ranking can
    stand. ...")."""
    for dim, line in summary.items():
        caution = dimension_caution(dim, agreement, reliability)
        if caution:
            summary[dim] = f"{caution} {line}"


def dimension_caution(
    dim: str, agreement: list[AgreementRow], reliability: Sequence[ReliabilityRow] = ()
) -> str | None:
    """The low-agreement sentence for one ranking: by the dimension's own alpha, or for a pooled "overall"
    without one (pairwise) when reviewers agree on none of the dimensions it pools; each with the
    reliability of the ranking's means (``reliability``, by dimension)."""
    own = [r for r in agreement if r.dimension == dim]
    mine = [r for r in reliability if r.dimension == dim]
    if own:
        return low_agreement_line(own, mine)
    measured = [r for r in agreement if r.alpha is not None]
    if dim != OVERALL or not measured or not all(r.low_agreement for r in measured):
        return None
    return pooled_caution(measured, mine[0] if mine else None)


def agreed_variant(low: tuple[str, ...], dims: list[str]) -> frozenset[str] | None:
    """The dimensions "overall_agreed" leaves out, or None when there is no such ranking to show."""
    named = frozenset(d for d in low if d in dims)
    return named if named and len(named) < len(dims) else None


def dominance_warning(frame: pd.DataFrame, scope: str) -> str | None:
    """When one reviewer gave more than :data:`DOMINANT_SHARE` of the showings: the ranking is theirs."""
    showings = frame[["item_id", "reviewer"]].drop_duplicates()
    if showings.empty:
        return None
    counts = showings["reviewer"].value_counts()
    share = float(counts.iloc[0]) / len(showings)
    if share <= DOMINANT_SHARE:
        return None
    return (
        f"{scope}: {counts.index[0]} gave {share:.0%} of the ratings, so this ranking is largely one person's opinion."
    )


def unblinded_raters_warning(frame: pd.DataFrame, scope: str) -> str | None:
    """Ratings by leads or admins, who may have seen unblinded results and rated only because an admin named
    them as reviewers of the batch: they count, and the report says whose and how many."""
    if "rater_role" not in frame or frame.empty:
        return None
    showings = frame[["item_id", "reviewer", "rater_role"]].drop_duplicates(["item_id", "reviewer"])
    others = showings[showings["rater_role"] != "reviewer"]
    if others.empty:
        return None
    who = sorted(others["reviewer"].unique())
    return (
        f"{scope}: {len(others)} of {len(showings)} judgements come from {join_names(who)}, who can see unblinded "
        "results (a lead or admin named as a reviewer of this batch)."
    )
