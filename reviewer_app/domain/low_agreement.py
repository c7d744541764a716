"""The one rule for "reviewers do not agree on this", and the sentences that say so with the numbers.

The report marks each agreement row by it (``AgreementRow.low_agreement``), and the report's summaries, its
renderers and the results page's headline put the same sentence before any ranking that rests on such a
dimension. Apart from the report's types: a rule and its wording, not a part of the JSON.

The sentence says what each number measures. Alpha is agreement on single items; a ranking rests on the
models' means over many items, whose reliability is measured apart (``ReliabilityRow``, split-half). Low alpha
with reliable means is a panel whose single judgements are noisy but whose ranking can stand; only where the
means are not reliable either (or their reliability is unknown) is a ranking to be treated as weak.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

from reviewer_app.domain.report_rankings import AgreementRow, ReliabilityRow

__all__ = [
    "is_low_agreement",
    "low_agreement_line",
    "low_agreement_words",
    "means_by_dimension",
    "means_reliable",
    "pooled_caution",
    "reliability_words",
]

LOW_AGREEMENT_ALPHA = 0.4  # below this alpha (or with a CI reaching below 0) reviewers do not agree enough
RELIABLE_MEANS = 0.8  # split-half reliability of the models' means from which a ranking can stand...
RELIABLE_MEANS_CI_LOW = 0.5  # ...when its 95% CI also stays above this


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
        return "agree less than chance on single items of", f"{dimension} (alpha {_alpha(alpha)})"
    if alpha < LOW_AGREEMENT_ALPHA:
        down = f", 95% CI down to {_alpha(ci_low)}" if ci_low is not None and ci_low < 0 else ""
        return "barely agree on single items of", f"{dimension} (alpha {_alpha(alpha)}{down})"
    assert ci_low is not None  # low by its interval alone
    return (
        "may not agree at all on single items of",
        f"{dimension} (alpha {_alpha(alpha)}, but its 95% CI reaches {_alpha(ci_low)})",
    )


def means_reliable(row: ReliabilityRow | None) -> bool | None:
    """Whether a ranking's model means are reliable enough for it to stand: split-half reliability at least
    0.8 with its 95% CI above 0.5. None when it is unknown (no row, or undefined)."""
    if row is None or row.split_half is None:
        return None
    return row.split_half >= RELIABLE_MEANS and (row.ci_low is None or row.ci_low >= RELIABLE_MEANS_CI_LOW)


def reliability_words(row: ReliabilityRow) -> str:
    """The reliability of the means in a sentence: "split-half 0.93, 95% CI 0.85 – 0.97"."""
    assert row.split_half is not None
    ci = (
        f", 95% CI {_alpha(row.ci_low)} – {_alpha(row.ci_high)}"
        if row.ci_low is not None and row.ci_high is not None
        else ""
    )
    return f"split-half {_alpha(row.split_half)}{ci}"


def low_agreement_words(rows: Iterable[AgreementRow]) -> str | None:
    """What reviewers do not agree on, with the numbers, grouped by how little: "barely agree on correctness
    (alpha 0.12) and agree less than chance on style (alpha -0.30)". None when they agree on every one."""
    groups: dict[str, list[str]] = {}
    for r in rows:
        phrase = agreement_phrase(r.dimension, r.alpha, r.ci_low)
        if phrase is not None:
            groups.setdefault(phrase[0], []).append(phrase[1])
    return _and([f"{verb} {_and(what)}" for verb, what in groups.items()]) if groups else None


def low_agreement_line(
    rows: Iterable[AgreementRow], reliability: Iterable[ReliabilityRow] = (), *, headline: bool = False
) -> str | None:
    """The sentence that comes before any ranking sentence resting on dimensions reviewers do not agree on,
    saying what each number measures: "Reviewers barely agree on single items of correctness (alpha 0.12), but
    the models' means are reliable (split-half 0.93, 95% CI 0.85 – 0.97): this ranking can stand." or "...,
    and the models' means are not reliable either (split-half 0.41, ...): treat this ranking as weak." The
    means' reliability is read from ``reliability`` (the rankings' rows, by dimension); where it is unknown the
    ranking is called weak. Several dimensions, or a ``headline`` above every ranking, say it per dimension.
    None when reviewers agree on every one of ``rows``."""
    rows = list(rows)
    words = low_agreement_words(rows)
    if words is None:
        return None
    by_dim = {r.dimension: r for r in reliability}
    low = [r.dimension for r in rows if agreement_phrase(r.dimension, r.alpha, r.ci_low) is not None]
    if len(low) == 1 and not headline:
        return f"Reviewers {words}{_means_clause(by_dim.get(low[0]), 'this ranking')}."
    return f"Reviewers {words}; {means_by_dimension(low, by_dim)}."


def _means_clause(row: ReliabilityRow | None, what: str) -> str:
    """ ", but the models' means are reliable (...): <what> can stand" (or weak), for one ranking."""
    reliable = means_reliable(row)
    if reliable is None:
        return f": treat {what} as weak (the reliability of the models' means is not known)"
    assert row is not None
    if reliable:
        return f", but the models' means are reliable ({reliability_words(row)}): {what} can stand"
    return f", and the models' means are not reliable either ({reliability_words(row)}): treat {what} as weak"


def means_by_dimension(dims: Sequence[str], by_dim: dict[str, ReliabilityRow]) -> str:
    """Per dimension, whether its ranking can stand by the reliability of the models' means: "the models'
    means are reliable on correctness (split-half 0.93, ...): its ranking can stand; not on style (...):
    treat its ranking as weak"."""
    strong = [d for d in dims if means_reliable(by_dim.get(d))]
    weak = [d for d in dims if means_reliable(by_dim.get(d)) is False]
    unknown = [d for d in dims if means_reliable(by_dim.get(d)) is None]

    def listed(names: list[str]) -> str:
        return _and([f"{d} ({reliability_words(by_dim[d])})" for d in names])

    def its(names: list[str]) -> str:
        return "its ranking" if len(names) == 1 else "their rankings"

    parts = []
    if strong:
        parts.append(f"the models' means are reliable on {listed(strong)}: {its(strong)} can stand")
    if weak:
        lead = "not on" if strong else "the models' means are not reliable on"
        parts.append(f"{lead} {listed(weak)}: treat {its(weak)} as weak")
    if unknown:
        parts.append(
            f"the reliability of the models' means on {_and(unknown)} is not known: treat {its(unknown)} as weak"
        )
    return "; ".join(parts)


def pooled_caution(measured: Sequence[AgreementRow], row: ReliabilityRow | None) -> str:
    """The caution of a pooled ranking (pairwise "overall") when reviewers agree on none of the dimensions it
    pools: what alpha says, then what the reliability of its means says."""
    return f"Reviewers {low_agreement_words(measured)}, and this ranking pools them{_means_clause(row, 'it')}."


def _and(parts: Sequence[str]) -> str:
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]
