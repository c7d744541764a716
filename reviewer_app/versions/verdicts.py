"""The verdicts of a comparison's rows, decided over all of them at once (issue 28, point 1).

Each row has an estimate of candidate - baseline (``corrected``), its standard error and degrees of freedom
(``paired_change``; without anchors the panel's variance is in them, ``panel``). Two families of tests, each
over the rows that can have a verdict, each held to a family-wise false-verdict rate of 5% by Holm's step-down
procedure (Holm, "A simple sequentially rejective multiple test procedure", Scand. J. Statist. 6, 1979):

* the tolerance verdict: "regression" or "improvement" when the change is beyond the tolerance. Its p-value is
  twice the smaller of the one-sided t tests of "not worse than -tolerance" and "not better than +tolerance"
  (a row whose per-row 95% interval lies beyond the tolerance has p <= 0.05). Holm-adjusted p <= 0.05: the
  verdict, in the direction of the estimate. Otherwise "no change" when the per-row 95% interval lies within
  +-tolerance (two one-sided tests at 2.5%, an equivalence claim, which more rows do not make easier to
  reach), else "inconclusive";
* a significant change of any size (``change``: "worse", "better" or "not significant"): the two-sided t test
  of no change, Holm-adjusted across the rows.

A row without anchors whose panel's variance cannot be estimated has no verdict ("not adjusted for a panel
change: inconclusive"), nor does a row with too few samples; neither counts in the families.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats

from reviewer_app.domain.versions import (
    IMPROVEMENT,
    INCONCLUSIVE,
    NO_CHANGE,
    REGRESSION,
    Change,
    CompareRow,
    Verdict,
)

ALPHA = 0.05  # family-wise, per family
MULTIPLICITY = "holm"


@dataclass(frozen=True)
class Pending:
    """A row before its verdict: its fields, and what the tests need."""

    fields: dict[str, Any]
    estimate: float
    se: float
    df: float
    panel_var: float  # added by a change of panel (0 with anchors or one panel)
    n_interval: int
    eligible: bool  # may have a verdict (enough samples, the panel allowed for)
    floor: int | None  # samples needed before any verdict (too few samples)


def holm(p: np.ndarray) -> np.ndarray:
    """Holm's adjusted p-values (each the smallest family-wise level at which its hypothesis is rejected)."""
    m = len(p)
    if not m:
        return np.zeros(0)
    order = np.argsort(p, kind="stable")
    scaled = np.minimum(1.0, (m - np.arange(m)) * p[order])
    adjusted = np.empty(m)
    adjusted[order] = np.maximum.accumulate(scaled)
    return adjusted


def decide(pending: list[Pending], samples_needed: Any) -> list[CompareRow]:
    """Every row with its verdict, change of any size and meaning. ``samples_needed`` is
    ``compare.samples_needed`` (estimate, half-width, n, tolerance)."""
    use = [k for k, p in enumerate(pending) if p.eligible]
    p_dir, p_any = np.ones(len(pending)), np.ones(len(pending))
    for k in use:
        p = pending[k]
        z = _oriented(p)
        tol = float(p.fields["tolerance"])
        worse = _above(-(z + tol), p.se, p.df)  # H0: change >= -tolerance
        better = _above(z - tol, p.se, p.df)  # H0: change <= +tolerance
        p_dir[k] = min(1.0, 2 * min(worse, better))
        p_any[k] = min(1.0, 2 * _above(abs(z), p.se, p.df))
    adj_dir, adj_any = np.ones(len(pending)), np.ones(len(pending))
    adj_dir[use], adj_any[use] = holm(p_dir[use]), holm(p_any[use])
    m = len(use)
    rows = []
    for k, p in enumerate(pending):
        verdict, change = _verdict(p, adj_dir[k]), _change(p, adj_any[k])
        rows.append(
            CompareRow(
                **p.fields,
                verdict=verdict,
                samples_needed=_needed(p, verdict, samples_needed),
                p_adjusted=float(adj_dir[k]) if p.eligible else None,
                change=change,
                change_p_adjusted=float(adj_any[k]) if p.eligible else None,
                meaning=meaning(p, verdict, float(adj_dir[k]), m),
            )
        )
    return rows


def _above(x: float, se: float, df: float) -> float:
    """The one-sided p of "the mean is at most 0" for an estimate ``x`` with this SE (a zero SE: 0 above, 1
    below, 0.5 on the line)."""
    if se <= 0:
        return 0.0 if x > 0 else 1.0 if x < 0 else 0.5
    return float(stats.t.sf(x / se, df))


def _oriented(p: Pending) -> float:
    """The estimate with positive meaning better."""
    return p.estimate if p.fields["higher_is_better"] else -p.estimate


def _verdict(p: Pending, adjusted: float) -> Verdict:
    if not p.eligible:
        return INCONCLUSIVE
    if adjusted <= ALPHA:
        return IMPROVEMENT if _oriented(p) > 0 else REGRESSION
    low, high, tol = p.fields["decision_low"], p.fields["decision_high"], float(p.fields["tolerance"])
    if low is not None and high is not None and -tol <= low and high <= tol:
        return NO_CHANGE
    return INCONCLUSIVE


def _change(p: Pending, adjusted: float) -> Change:
    if not p.eligible or adjusted > ALPHA:
        return "not significant"
    return "better" if _oriented(p) > 0 else "worse"


def _needed(p: Pending, verdict: Verdict, samples_needed: Any) -> int | None:
    """Samples in all that would likely settle an inconclusive row; without anchors the panel's share of the
    variance does not shrink with more samples (None when more samples alone cannot settle it: more reviewers,
    or anchors, can)."""
    if verdict != INCONCLUSIVE:
        return None
    if not p.eligible:
        return p.floor
    low, high = p.fields["decision_low"], p.fields["decision_high"]
    if low is None or high is None:
        return p.floor
    half = (high - low) / 2
    if p.panel_var <= 0:
        found: int | None = samples_needed(p.estimate, half, p.n_interval, float(p.fields["tolerance"]))
        return found
    t = half / p.se
    margin = abs(abs(p.estimate) - float(p.fields["tolerance"]))
    room = (margin / t) ** 2 - p.panel_var
    if room <= 0:
        return None
    return int(max(p.n_interval + 1, math.ceil(p.n_interval * (p.se**2 - p.panel_var) / room)))


def meaning(p: Pending, verdict: Verdict, adjusted: float, family: int) -> str:
    """What the verdict says, in words."""
    tol = float(p.fields["tolerance"])
    rows = f"{family} row" + ("" if family == 1 else "s")
    unit = "points" if p.fields["unit"] == "points" else "(share)" if "share" in p.fields["unit"] else "(win rate)"
    how = p.fields["panel_adjustment"]
    common = p.fields.get("shift_common_p")
    tested = "" if common is None else f", common to the models (interaction test p = {common:.2g})"
    panel = {
        "anchors": (
            f"corrected by this model's own anchors: the anchors' shift differs by model (p = {common:.2g})"
            if p.fields.get("own_shift") and common is not None
            else f"corrected by the anchors' panel shift{tested}"
        ),
        "reviewer variance": (
            f"no anchors: widened for a new panel (reviewer SD {p.fields['reviewer_sd'] or 0:.2g}, "
            f"panel SD {p.fields['panel_sd'] or 0:.2g})"
        ),
        "same panel": "no anchors, the same reviewers in the same shares",
        "not adjusted": "",
    }[how]
    if how == "not adjusted" and p.fields.get("own_shift"):
        return (
            f"not adjusted for a panel change: inconclusive (the anchors' shift differs by model, p = "
            f"{common or 0:.2g}, so no single shift corrects it, and this model has no anchors of its own)"
        )
    if how == "not adjusted":
        return (
            "not adjusted for a panel change: inconclusive (no anchors, and the reviewers' leniency could not be "
            "estimated: no two reviewers rated two outputs in common)"
        )
    if not p.eligible:
        return f"too few samples for a verdict ({MIN_TEXT}); {panel}"
    if verdict in (REGRESSION, IMPROVEMENT):
        word = "worse" if verdict == REGRESSION else "better"
        return (
            f"{word} by more than {tol:g} {unit}, with 95% confidence family-wise across the {rows} "
            f"(Holm-adjusted p = {adjusted:.2g}); {panel}"
        )
    if verdict == NO_CHANGE:
        return f"within ±{tol:g} {unit}, with 95% confidence (the 95% interval inside the tolerance); {panel}"
    return f"neither beyond nor within ±{tol:g} {unit} at 95% (Holm across the {rows}); {panel}"


MIN_TEXT = "a verdict needs 10 samples rated in both rounds, and 10 anchored ones when anchors correct it"
