"""Compare a follow-up round with its baseline: per scenario, dimension and model, did the new version regress?

Inputs are two ``ratings_frame`` frames (``storage.repositories.frames``): the baseline batch's and the
follow-up (candidate) batch's, both reviewed under one rubric. The follow-up frame carries one more column,
``is_anchor`` (:data:`ANCHOR`): True on the ratings of *anchor items*, outputs of the baseline batch shown
again to the panel of the follow-up round. An anchor row names the output it repeats the way the baseline
frame does (``sample_id``, ``model_a`` and ``repeat_a`` as in the baseline batch; pairwise also ``model_b``
and ``repeat_b``), so that a candidate model keeping its baseline's name is not confused with the anchors. A
frame without the column has no anchors; anchor rows in the baseline frame (a baseline that was itself a
follow-up) are left out, since anchors never count for any model's score.

What is compared, for each :class:`ModelPair` (baseline model, candidate model):

* rating mode: each numeric dimension's mean score (its own units) and "overall", the mean of a rating's
  dimensions rescaled to 0-1 (as in the report: ``prepare.add_scores`` / ``overall_rows``);
* pairwise mode: the win rate (ties and "both bad" half) against the *common opponents*, the models both
  versions were compared with (an opponent in the follow-up pairs with its baseline by the same pairing).

``diff`` is candidate - baseline on the samples both were rated on (paired: a sample is a cluster, all its
ratings stay together). ``panel_shift`` is the mean anchor score in the follow-up round minus the same
outputs' mean score in the baseline round, over the outputs rated in both (rating mode: all anchored outputs
of the scenario, whatever their model, since the panel is what is measured; pairwise: the baseline model's
anchored comparisons with the common opponents). ``corrected`` is diff - panel_shift, or diff when there are
no anchors (``panel_shift`` is then None).

Uncertainty (computed in ``paired_change`` from the per-sample totals ``contrasts`` builds). Samples are
resampled once per bootstrap round for the diff and the shift together (the anchors' samples are among the
candidate's), so the displayed interval of ``corrected`` (``ci_low``/``ci_high``, a percentile cluster-bootstrap
interval, with the Monte Carlo error of its ends) includes the uncertainty of the shift and its covariance with
the diff.

The verdict does not depend on the seed (nor on the number of rounds). A verdict a lead acts on must not
change when the report is made again, and a bootstrap interval's ends move with the draws: near the line,
two seeds would give two verdicts. So, as the rankings decide on sign-flip tests (``decisions``), the verdict
is decided on a deterministic 95% interval of ``corrected`` (``decision_low``/``decision_high``): the estimate
plus or minus a Student t quantile times the cluster-robust standard error over samples (CR1: each sample's
contribution to corrected is its linearised share of the four means involved, so the shift's variance and its
covariance with the diff are included), with Satterthwaite degrees of freedom between the diff's samples and
the anchors' samples. It is the interval the bootstrap approximates (for one rating per sample and no anchors
it is exactly the paired t interval), and no random draw enters it; the bootstrap interval is only shown.
Without anchors the panel's change is allowed for by the variance of the reviewers' leniency (``panel``: the
interval widened by it, or the row "not adjusted" and inconclusive where it cannot be estimated). Rules, with
positive meaning better (a lower-is-better dimension is turned round), against the tolerance (``tolerance`` in
each dimension's units, ``tolerance_share`` for overall and win rates), decided over all rows at once with Holm's
adjustment (``verdicts``):

* ``regression``/``improvement``: a change beyond -tolerance/+tolerance at a Holm-adjusted 5% (each such row's
  own 95% interval lies wholly beyond the tolerance);
* ``no change``: the interval within [-tolerance, +tolerance];
* ``inconclusive``: anything else, with ``samples_needed`` (see :func:`samples_needed`).

A verdict other than ``inconclusive`` also needs at least :data:`MIN_VERDICT_SAMPLES` samples rated in both
rounds and, when anchors correct the difference, as many anchored samples: with fewer, the interval's own
width is too uncertain to act on (two anchored samples that happen to move alike give a zero-width interval,
and a "no change" on it would be a verdict made of luck).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

from reviewer_app.analysis.prepare import finite_or_none, sub_rng
from reviewer_app.domain.enums import Mode
from reviewer_app.domain.rubric import Rubric
from reviewer_app.domain.versions import (
    IMPROVEMENT,
    INCONCLUSIVE,
    NO_CHANGE,
    REGRESSION,
    Comparison,
    ModelPair,
    PanelAdjustment,
    Verdict,
)
from reviewer_app.versions.contrasts import Contrast, scenario_contrasts
from reviewer_app.versions.paired_change import paired_change
from reviewer_app.versions.verdicts import MULTIPLICITY, Pending, decide

__all__ = [
    "DEFAULT_ROUNDS",
    "DEFAULT_TOLERANCE",
    "DEFAULT_TOLERANCE_SHARE",
    "compare_ratings",
    "samples_needed",
    "verdict_for",
]

DEFAULT_TOLERANCE = 0.25  # in each dimension's own units
DEFAULT_TOLERANCE_SHARE = 0.05  # for "overall" (0-1) and pairwise win rates
DEFAULT_ROUNDS = 1000


def verdict_for(low: float, high: float, tolerance: float, *, higher_is_better: bool = True) -> Verdict:
    """The verdict of an interval [low, high] of candidate - baseline (see the module docstring).

    NaN ends (no interval: fewer than two samples) give "inconclusive"."""
    if not (math.isfinite(low) and math.isfinite(high)):
        return INCONCLUSIVE
    if not higher_is_better:
        low, high = -high, -low
    if high < -tolerance:
        return REGRESSION
    if low > tolerance:
        return IMPROVEMENT
    if -tolerance <= low and high <= tolerance:
        return NO_CHANGE
    return INCONCLUSIVE


MIN_VERDICT_SAMPLES = 10


def samples_needed(estimate: float, half_width: float, n: int, tolerance: float) -> int | None:
    """How many samples in all would likely settle an inconclusive verdict: the n' at which an interval of
    the same centre, with its half-width shrunk as 1/sqrt(n), would leave the tolerance band (|estimate| >
    tolerance) or fit inside it (|estimate| < tolerance): n' = n (half_width / | |estimate| - tolerance |)^2.

    Assumes the point estimate stays where it is, new samples vary as the rated ones do (and bring anchors in
    the same share), and holds the t quantile fixed (it only shrinks with more samples, so n' errs high).
    None when the estimate sits on the band's edge (no n settles it) or there is no interval."""
    if not (math.isfinite(estimate) and math.isfinite(half_width)) or n < 2:
        return None
    margin = abs(abs(estimate) - tolerance)
    if margin <= 1e-12 * max(1.0, tolerance):
        return None
    return max(n + 1, math.ceil(n * (half_width / margin) ** 2))


def compare_ratings(
    baseline: pd.DataFrame,
    candidate: pd.DataFrame,
    rubric: Rubric,
    pairs: Sequence[ModelPair],
    *,
    seed: int,
    rounds: int = DEFAULT_ROUNDS,
    tolerance: float = DEFAULT_TOLERANCE,
    tolerance_share: float = DEFAULT_TOLERANCE_SHARE,
) -> Comparison:
    """Compare every pair on every scenario and dimension (see the module docstring).

    ``baseline``/``candidate`` are ratings frames (the candidate's with :data:`ANCHOR`), ``pairs`` from
    ``services.model_pairing.pair_models``. Bootstrap draws come from ``seed`` (one stream per scenario,
    shared by its rows); verdicts depend on neither ``seed`` nor ``rounds``. Raises ValueError when
    ``rounds`` < 1 or a tolerance is negative."""
    if rounds < 1:
        raise ValueError("rounds must be at least 1")
    if tolerance < 0 or tolerance_share < 0:
        raise ValueError("tolerances must not be negative")
    pending: list[Pending] = []
    found = scenario_contrasts(baseline, candidate, rubric, pairs, tolerance=tolerance, tolerance_share=tolerance_share)
    for scen, contrasts in found:
        if contrasts:
            pending += _rows(contrasts, rounds, sub_rng(seed, "compare", scen))
    rows = decide(pending, samples_needed)
    return Comparison(
        mode=Mode(rubric.mode),
        pairs=tuple(pairs),
        rows=tuple(rows),
        tolerance=tolerance,
        tolerance_share=tolerance_share,
        seed=seed,
        rounds=rounds,
        multiplicity=MULTIPLICITY,
    )


def _rows(contrasts: list[Contrast], rounds: int, rng: np.random.Generator) -> list[Pending]:
    """The rows of one scenario's contrasts (one joint bootstrap for all of them), before the verdicts (those
    are decided over every row of the comparison at once: :func:`_decide`)."""
    sums, counts = (np.stack([getattr(k, part) for k in contrasts], axis=1) for part in ("sums", "counts"))
    shifted_by = [bool(np.isfinite(_shift_of(sums[:, k], counts[:, k]))) for k in range(len(contrasts))]
    adjustments = [_adjustment(con, shifted) for con, shifted in zip(contrasts, shifted_by, strict=True)]
    panel_var = np.array([a[1] for a in adjustments])
    panel_df = np.array([max(con.reviewer_df, 1.0) for con in contrasts])
    res = paired_change(sums, counts, rounds=rounds, rng=rng, panel_var=panel_var, panel_df=panel_df)
    anchored = res.anchored
    rows = []
    for k, con in enumerate(contrasts):
        low, high = float(res.decision_low[k]), float(res.decision_high[k])
        shifted = bool(anchored[k])
        n, n_anchored = int(res.n_paired[k]), int(res.n_anchored[k])
        too_few = n < MIN_VERDICT_SAMPLES or (shifted and n_anchored < MIN_VERDICT_SAMPLES)
        how, extra = adjustments[k]
        fields = {
            "scenario": con.scenario,
            "dimension": con.dimension,
            "model": con.pair.candidate,
            "baseline_model": con.pair.baseline,
            "unit": con.unit,
            "higher_is_better": con.higher_is_better,
            "tolerance": con.tolerance,
            "baseline_score": finite_or_none(res.baseline[k]),
            "candidate_score": finite_or_none(res.candidate[k]),
            "diff": finite_or_none(res.diff[k]),
            "diff_ci_low": finite_or_none(res.diff_ci[0][k]),
            "diff_ci_high": finite_or_none(res.diff_ci[1][k]),
            "panel_shift": finite_or_none(res.shift[k]) if shifted else None,
            "shift_ci_low": finite_or_none(res.shift_ci[0][k]) if shifted else None,
            "shift_ci_high": finite_or_none(res.shift_ci[1][k]) if shifted else None,
            "corrected": finite_or_none(res.corrected[k]),
            "ci_low": finite_or_none(res.corrected_ci[0][k]),
            "ci_high": finite_or_none(res.corrected_ci[1][k]),
            "ci_mc_se": finite_or_none(res.corrected_ci[2][k]),
            "decision_low": finite_or_none(low),
            "decision_high": finite_or_none(high),
            "n": n,
            "n_anchors": con.n_anchors if shifted else 0,
            "panel_adjustment": how,
            "reviewer_sd": None if shifted else finite_or_none(math.sqrt(con.reviewer_var)),
            "panel_sd": finite_or_none(math.sqrt(extra)) if how == "reviewer variance" else None,
            "shift_common_p": finite_or_none(con.shift_common_p),
            "own_shift": con.own_shift,
        }
        needed = None
        if too_few and n > 0:  # at least enough samples (and anchored ones, in the same share) for any verdict
            share = n_anchored / max(n, 1) if shifted else 1.0
            needed = math.ceil(MIN_VERDICT_SAMPLES / share) if share > 0 else None
        pending = Pending(
            fields=fields,
            estimate=float(res.corrected[k]),
            se=float(res.se[k]),
            df=float(res.df[k]),
            panel_var=extra,
            n_interval=int(res.n_interval[k]),
            eligible=not too_few and how != "not adjusted" and math.isfinite(float(res.se[k])),
            floor=needed,
        )
        rows.append(pending)
    return rows


def _shift_of(sums: np.ndarray, counts: np.ndarray) -> float:
    """The anchors' shift of one contrast (NaN without anchors), as ``paired_change`` finds it."""
    c2, c3 = counts[:, 2].sum(), counts[:, 3].sum()
    if c2 <= 0 or c3 <= 0:
        return float("nan")
    return float(sums[:, 2].sum() / c2 - sums[:, 3].sum() / c3)


def _adjustment(con: Contrast, shifted: bool) -> tuple[PanelAdjustment, float]:
    """How a change of the panel is allowed for in a contrast, and the variance it adds (``panel``)."""
    if shifted:
        return "anchors", 0.0
    if con.own_shift:  # the anchors' shift differs by model and this model has none of its own
        return "not adjusted", 0.0
    if math.isfinite(con.panel_weight) and con.panel_weight <= 1e-12:
        return "same panel", 0.0
    if math.isfinite(con.reviewer_var) and math.isfinite(con.panel_weight):
        return "reviewer variance", con.reviewer_var * con.panel_weight
    return "not adjusted", 0.0
