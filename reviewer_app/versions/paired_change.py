"""Candidate - baseline, corrected by the panel shift, from per-sample totals: the estimate, a seed-free
interval for decisions, and a joint cluster bootstrap for display (``compare`` builds the totals).

Each contrast is four ratio means, each the sum of some values over their number, with one total and one
count per sample (the cluster): 0 the candidate, 1 the baseline (both kept on the samples both were rated
on), 2 the anchors in the follow-up round, 3 the same anchored outputs in the baseline round. The estimate is
``corrected = (m0 - m1) - (m2 - m3)``, or ``m0 - m1`` when there are no anchors.

* Seed-free interval: each sample's contribution to the estimate is its linearised share of the four means,
  (sum_s - mean count_s) / count, signed; Sum of contributions = 0 at the estimate, and their cluster-robust
  variance (CR1, G/(G-1) Sum u^2 over the G samples that carry any part) includes the shift's variance and
  its covariance with the diff (the anchors' samples are among the candidate's). The t reference takes
  Satterthwaite's degrees of freedom between the two parts, so a handful of anchored samples does not pass
  for hundreds.
* Bootstrap: samples are resampled once per round for all four means (``prepare.bootstrap_weights``), so
  the replicates of diff, shift and corrected come from the same draws; percentile intervals with the Monte
  Carlo error of their ends (``inference.percentile_ci``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from reviewer_app.analysis.inference import CONFIDENCE, percentile_ci, t_quantile
from reviewer_app.analysis.prepare import bootstrap_weights

_BLOCK_ROUNDS = 256  # bootstrap rounds drawn at a time: bounded memory, the same draws as one call (64 | 256)


@dataclass(frozen=True)
class PairedChange:
    """Per contrast (arrays of length K; NaN where undefined)."""

    candidate: np.ndarray  # mean 0
    baseline: np.ndarray  # mean 1
    diff: np.ndarray  # mean 0 - mean 1
    shift: np.ndarray  # mean 2 - mean 3 (NaN without anchors)
    corrected: np.ndarray  # diff - shift, or diff without anchors
    decision_low: np.ndarray  # seed-free 95% interval of ``corrected``
    decision_high: np.ndarray
    se: np.ndarray  # the standard error behind the interval (with the panel's variance, when given)
    df: np.ndarray  # its degrees of freedom
    n_interval: np.ndarray  # samples behind the interval (those with either part)
    n_paired: np.ndarray  # samples both candidate and baseline were rated on
    n_anchored: np.ndarray  # samples with anchors rated in both rounds (0 without anchors)
    diff_ci: tuple[np.ndarray, np.ndarray]  # bootstrap percentile intervals
    shift_ci: tuple[np.ndarray, np.ndarray]
    corrected_ci: tuple[np.ndarray, np.ndarray, np.ndarray]  # low, high, Monte Carlo error of the ends

    @property
    def anchored(self) -> np.ndarray:
        out: np.ndarray = np.isfinite(self.shift)
        return out


def anchor_totals(
    first: tuple[np.ndarray, np.ndarray], again: tuple[np.ndarray, np.ndarray, np.ndarray], n: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, int]:
    """Per sample (``n`` of them): the anchors' totals and counts in the follow-up round and in the baseline
    round over the outputs (or compared pairs of outputs) rated in both rounds, paired by an integer key,
    and how many such outputs there are. ``first`` is (keys, values) of the baseline round's ratings,
    ``again`` (keys, values, sample index) of the anchors' ratings."""
    key2, value2, s2 = again
    key1, value1 = first
    zero = np.zeros(n)
    if not len(key2) or not len(key1):
        return zero, zero, zero, zero, 0
    keys, where = np.unique(np.concatenate([key2, key1]), return_inverse=True)
    i2, i1 = where[: len(key2)], where[len(key2) :]
    k = len(keys)
    n2, n1 = np.bincount(i2, minlength=k), np.bincount(i1, minlength=k)
    sum2 = np.bincount(i2, weights=value2, minlength=k)
    sum1 = np.bincount(i1, weights=value1, minlength=k)
    sample = np.zeros(k, dtype=np.int64)
    sample[i2] = s2
    both = (n2 > 0) & (n1 > 0)
    s = sample[both]
    out = [np.bincount(s, weights=x[both].astype(float), minlength=n) for x in (sum2, n2, sum1, n1)]
    return out[0], out[1], out[2], out[3], int(both.sum())


def paired_change(
    sums: np.ndarray,
    counts: np.ndarray,
    *,
    rounds: int,
    rng: np.random.Generator,
    panel_var: np.ndarray | None = None,
    panel_df: np.ndarray | None = None,
) -> PairedChange:
    """The estimates, seed-free intervals and bootstrap intervals of K contrasts from their per-sample
    totals and counts (S x K x 4, see the module docstring; the candidate's and baseline's columns already
    restricted to the samples both have). ``panel_var`` (K, 0 where none) is a variance added to the
    seed-free interval's (``panel.py``: a change of the panel without anchors), with ``panel_df`` degrees of
    freedom (Satterthwaite's between the two); the bootstrap interval is given the panel, as before."""
    total, count = sums.sum(axis=0), counts.sum(axis=0)  # (K x 4)
    with np.errstate(divide="ignore", invalid="ignore"):
        mean = np.where(count > 0, total / np.where(count > 0, count, 1.0), np.nan)
        infl = np.where(count > 0, (sums - np.nan_to_num(mean) * counts) / np.where(count > 0, count, 1.0), 0.0)
    diff = mean[:, 0] - mean[:, 1]
    shift = mean[:, 2] - mean[:, 3]
    anchored = np.isfinite(shift)
    corrected = diff - np.where(anchored, shift, 0.0)
    u_diff = infl[:, :, 0] - infl[:, :, 1]  # (S x K)
    u_shift = np.where(anchored, infl[:, :, 2] - infl[:, :, 3], 0.0)
    in_diff = counts[:, :, 0] > 0
    k = len(corrected)
    extra = np.zeros(k) if panel_var is None else np.nan_to_num(np.asarray(panel_var, dtype=float))
    extra_df = np.ones(k) if panel_df is None else np.maximum(np.asarray(panel_df, dtype=float), 1.0)
    low, high, g, se, df = _decision_interval(
        corrected, u_diff, u_shift, in_diff, (counts[:, :, 2] > 0) & anchored, extra, extra_df
    )
    boot_diff, boot_shift = _bootstrap(sums, counts, rounds, rng)
    d_lo, d_hi, _ = percentile_ci(boot_diff)
    s_lo, s_hi, _ = percentile_ci(boot_shift)
    corrected_ci = percentile_ci(boot_diff - np.where(anchored, boot_shift, 0.0))
    return PairedChange(
        candidate=mean[:, 0],
        baseline=mean[:, 1],
        diff=diff,
        shift=shift,
        corrected=corrected,
        decision_low=low,
        decision_high=high,
        se=se,
        df=df,
        n_interval=g.astype(int),
        n_paired=in_diff.sum(axis=0),
        n_anchored=((counts[:, :, 2] > 0) & anchored).sum(axis=0),
        diff_ci=(d_lo, d_hi),
        shift_ci=(s_lo, s_hi),
        corrected_ci=corrected_ci,
    )


def _decision_interval(
    estimate: np.ndarray,
    u_diff: np.ndarray,
    u_shift: np.ndarray,
    in_diff: np.ndarray,
    in_shift: np.ndarray,
    extra: np.ndarray,
    extra_df: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Estimate -/+ t x SE per contrast (columns of the S x K arrays); NaN where the diff, or the shift when
    there are anchors, has fewer than two samples. Also the number of samples behind each interval, the SE
    and its degrees of freedom. ``extra`` is a variance added (``extra_df`` its degrees of freedom)."""
    g = (in_diff | in_shift).sum(axis=0).astype(float)
    g_d, g_s = in_diff.sum(axis=0).astype(float), in_shift.sum(axis=0).astype(float)
    with np.errstate(divide="ignore", invalid="ignore"):
        var = np.where(g > 1, g / (g - 1) * ((u_diff - u_shift) ** 2).sum(axis=0), np.nan)
        v_d = np.where(g_d > 1, g_d / (g_d - 1) * (u_diff**2).sum(axis=0), 0.0)
        v_s = np.where(g_s > 1, g_s / (g_s - 1) * (u_shift**2).sum(axis=0), 0.0)
        den = np.where(g_d > 1, v_d**2 / (g_d - 1), 0.0) + np.where(g_s > 1, v_s**2 / (g_s - 1), 0.0)
        df = np.where(den > 0, (v_d + v_s) ** 2 / np.where(den > 0, den, 1.0), np.maximum(g - 1, 1.0))
        # The panel's variance joins with its own degrees of freedom (Satterthwaite); none added, none changed.
        total = var + extra
        joint = np.where(extra > 0, total**2 / (var**2 / np.maximum(df, 1.0) + extra**2 / extra_df), df)
        df = np.where(extra > 0, joint, df)
    bad = (g_d < 2) | (in_shift.any(axis=0) & (g_s < 2)) | ~np.isfinite(estimate)
    half = t_quantile(1 - (1 - CONFIDENCE) / 2, np.maximum(df, 1.0)) * np.sqrt(total)
    half = np.where(bad, np.nan, half)
    se = np.where(bad, np.nan, np.sqrt(total))
    return estimate - half, estimate + half, g, se, np.maximum(df, 1.0)


def _bootstrap(
    sums: np.ndarray, counts: np.ndarray, rounds: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """Replicates (rounds x K) of the diff and of the shift, from one resampling of the samples per round."""
    s, k, _ = sums.shape
    flat_s, flat_c = sums.reshape(s, -1), counts.reshape(s, -1)
    diff, shift = np.empty((rounds, k)), np.empty((rounds, k))
    for start in range(0, rounds, _BLOCK_ROUNDS):
        size = min(_BLOCK_ROUNDS, rounds - start)
        w = bootstrap_weights(s, size, rng)
        num, den = (w @ flat_s).reshape(size, k, 4), (w @ flat_c).reshape(size, k, 4)
        with np.errstate(divide="ignore", invalid="ignore"):
            m = np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)
        diff[start : start + size] = m[:, :, 0] - m[:, :, 1]
        shift[start : start + size] = m[:, :, 2] - m[:, :, 3]
    return diff, shift
