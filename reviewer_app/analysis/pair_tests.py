"""The tests of a ranking's pairs of models, without random draws: one per kind of estimate (see
:mod:`.decisions`, which decides on them and explains the choice).

* rating mode: the difference of the two mean scores, a sign-flip test over samples with its analytic
  standard error;
* ordinal dimensions: the probability that one model's rating beats the other's on the same sample (ties
  half), against 1/2;
* pairwise mode: the Bradley-Terry strengths (score test at the fit constrained to equal strengths);
* the composite: the weighted sum of the scenarios' differences (each scenario a stratum).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.stats import norm

from reviewer_app.analysis.inference import bt_score_test, cluster_test, percentile_ci
from reviewer_app.analysis.model_intervals import intervals
from reviewer_app.analysis.ranking import BT_ALPHA, Estimate

TEST_MEAN = "difference of means, sign-flip test over samples"
TEST_RANK = "rank-based: probability of superiority, sign-flip test over samples"
TEST_BT = "Bradley-Terry score, sign-flip test over samples"


@dataclass(frozen=True)
class PairStats:
    """Per tested pair (i, j): the difference i - j with its 95% CI, p-value, and who is ahead (+1: i)."""

    diff: np.ndarray
    ci_low: np.ndarray
    ci_high: np.ndarray
    p: np.ndarray
    direction: np.ndarray
    test: str
    se: np.ndarray | None = None  # analytic standard error of the difference (rating mode)
    win_prob: np.ndarray | None = None
    win_low: np.ndarray | None = None
    win_high: np.ndarray | None = None


def _influence(est: Estimate) -> np.ndarray:
    """Rating mode: each sample's contribution to each model's mean (linearisation of sum / count)."""
    assert est.sums is not None and est.counts is not None
    count = est.counts.sum(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        out: np.ndarray = (est.sums - np.nan_to_num(est.point) * est.counts) / np.where(count > 0, count, 1.0)
    return out


def _null_contributions(est: Estimate, i: np.ndarray, j: np.ndarray) -> np.ndarray:
    """Per pair and sample, the sample's contribution to mean_i - mean_j with both means set to their
    common value (the null): (sums_i - m counts_i) / count_i - (sums_j - m counts_j) / count_j."""
    assert est.sums is not None and est.counts is not None
    total, count = est.sums.sum(axis=0), est.counts.sum(axis=0)
    common = (total[i] + total[j]) / np.maximum(count[i] + count[j], 1e-300)
    a = (est.sums[:, i] - common * est.counts[:, i]) / np.maximum(count[i], 1e-300)
    b = (est.sums[:, j] - common * est.counts[:, j]) / np.maximum(count[j], 1e-300)
    out: np.ndarray = (a - b).T
    return out


def _mean_test(est: Estimate, i: np.ndarray, j: np.ndarray) -> PairStats:
    assert est.counts is not None and est.strata is not None
    infl = _influence(est)
    diff = est.point[i] - est.point[j]
    active = (est.counts[:, i] + est.counts[:, j]).T > 0
    res = cluster_test(diff, (infl[:, i] - infl[:, j]).T, _null_contributions(est, i, j), active, est.strata)
    orient = 1.0 if est.higher_is_better else -1.0
    return PairStats(diff, res.ci_low, res.ci_high, res.p, np.sign(orient * diff), TEST_MEAN, res.se)


def _rank_test(est: Estimate, i: np.ndarray, j: np.ndarray, means: PairStats) -> PairStats:
    assert est.sup is not None and est.sup_valid is not None and est.strata is not None
    assert est.boot_sup_num is not None and est.boot_sup_den is not None
    sup, valid = est.sup[:, i, j], est.sup_valid[:, i, j] > 0
    g = valid.sum(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        prob = np.where(g > 0, (sup * valid).sum(axis=0) / np.maximum(g, 1), np.nan)
        u = np.where(valid, sup / np.maximum(g, 1), 0.0).T
        boot = est.boot_sup_num[:, i, j] / est.boot_sup_den[:, i, j]
    null_u = np.where(valid, (sup - 0.5) / np.maximum(g, 1), 0.0).T
    res = cluster_test(np.nan_to_num(prob, nan=0.5), u, null_u, valid.T, est.strata)
    lo, hi, _ = percentile_ci(boot)
    return PairStats(
        diff=means.diff,
        ci_low=means.ci_low,
        ci_high=means.ci_high,
        p=res.p,
        direction=np.sign(np.nan_to_num(prob, nan=0.5) - 0.5),
        test=TEST_RANK,
        se=means.se,
        win_prob=prob,
        win_low=lo,
        win_high=hi,
    )


def _bt_test(est: Estimate, i: np.ndarray, j: np.ndarray) -> PairStats:
    assert est.sample_wins is not None and est.strata is not None
    res = bt_score_test([est.sample_wins], [(i, j)], [1.0], [est.strata], BT_ALPHA)
    diff = est.point[i] - est.point[j]
    lo, hi = _difference_ci(est, i, j)
    return PairStats(diff, lo, hi, res.p, np.sign(diff), TEST_BT)


def _difference_ci(est: Estimate, i: np.ndarray, j: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Pairwise mode: the bootstrap percentile CI of theta_i - theta_j. Where a strength is bounded on one
    side only, the bootstrap knows nothing: the difference then runs from the lower end of one model's
    interval minus the upper end of the other's (open where either is open)."""
    lo, hi, _ = percentile_ci(est.boot[:, i] - est.boot[:, j])
    m_lo, m_hi, _, notes = intervals(est)
    odd = np.array([notes[a] is not None or notes[b] is not None for a, b in zip(i, j, strict=True)], dtype=bool)
    if odd.any():
        lo = np.where(odd, m_lo[i] - m_hi[j], lo)
        hi = np.where(odd, m_hi[i] - m_lo[j], hi)
    return lo, hi


def _composite_test(est: Estimate, i: np.ndarray, j: np.ndarray) -> PairStats:
    names = est.models
    diff = est.point[i] - est.point[j]
    idx = [
        (np.array([p.models.index(names[a]) for a in i]), np.array([p.models.index(names[b]) for b in j]))
        for p in est.parts
    ]
    if est.parts[0].kind == "bt":
        blocks, strata = [], []
        for part in est.parts:
            assert part.sample_wins is not None and part.strata is not None
            blocks.append(part.sample_wins)
            strata.append(part.strata)
        res = bt_score_test(blocks, idx, est.part_weights, strata, BT_ALPHA)
        lo, hi = _difference_ci(est, i, j)
        return PairStats(diff, lo, hi, res.p, np.sign(diff), TEST_BT)
    u, null_u, active, strata_all = [], [], [], []
    for k, (part, w, (pi, pj)) in enumerate(zip(est.parts, est.part_weights, idx, strict=True)):
        assert part.counts is not None
        infl = _influence(part)
        u.append(w * (infl[:, pi] - infl[:, pj]).T)
        null_u.append(w * _null_contributions(part, pi, pj))
        active.append((part.counts[:, pi] + part.counts[:, pj]).T > 0)
        strata_all.append(np.full(len(part.counts), k))
    res = cluster_test(
        diff,
        np.concatenate(u, axis=1),
        np.concatenate(null_u, axis=1),
        np.concatenate(active, axis=1),
        np.concatenate(strata_all),
    )
    return PairStats(diff, res.ci_low, res.ci_high, res.p, np.sign(diff), TEST_MEAN, res.se)


def pair_stats(est: Estimate, i: np.ndarray, j: np.ndarray) -> PairStats:
    """Test every pair (i[k], j[k]) of ``est``'s models (see the module docstring for the tests)."""
    if est.kind == "bt":
        return _bt_test(est, i, j)
    if est.kind == "composite":
        return _composite_test(est, i, j)
    means = _mean_test(est, i, j)
    return _rank_test(est, i, j, means) if est.ordinal else means


def holm_interval(diff: float, p: float, p_adjusted: float, alpha: float = 0.05) -> tuple[float, float]:
    """The pair's interval consistent with its Holm decision: centred on ``diff``, with the standard error its
    own test implies (|diff| / z, z the normal quantile of its two-sided ``p``), at the per-pair level Holm
    used for it, alpha * p / p_adjusted (alpha / K for the pair with the smallest p of K, up to alpha). It
    excludes 0 exactly when ``p_adjusted`` < ``alpha``: the pair is separated. (NaN, NaN) where a number is
    missing; unbounded (-inf, inf) where the test gives no evidence at all (p = 1)."""
    if not (np.isfinite(diff) and np.isfinite(p) and np.isfinite(p_adjusted)):
        return math.nan, math.nan
    if p <= 0:
        return diff, diff
    z = float(norm.isf(p / 2))
    if z <= 0:
        return -math.inf, math.inf
    level = alpha * p / max(p_adjusted, p)
    half = float(norm.isf(level / 2)) * abs(diff) / z
    return diff - half, diff + half
