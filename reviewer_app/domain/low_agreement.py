"""The one rule for "reviewers do not agree on this", and the sentences that say so with the numbers.

The report marks each agreement row by it (``AgreementRow.low_agreement``), and the report's summaries, its
renderers and the results page's headline put the same sentence before any ranking that rests on such a
dimension. Apart from the report's types: a rule and its wording, not a part of the JSON.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

from reviewer_app.domain.report_rankings import AgreementRow

__all__ = ["is_low_agreement", "low_agreement_line", "low_agreement_words"]

LOW_AGREEMENT_ALPHA = 0.4  # below this alpha (or with a CI reaching below 0) reviewers do not agree enough


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
