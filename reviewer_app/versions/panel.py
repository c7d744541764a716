"""How much a change of the panel alone could move a comparison without anchors (issue 28, point 1).

A rating is taken as ``quality + b_r + noise``, ``b_r`` the leniency of reviewer ``r``, drawn from the pool of
reviewers with variance ``sigma_b^2`` (a reviewer random effect). A difference of two means, each over its own
ratings, carries ``Sum_r (w_c,r - w_b,r) b_r`` of leniency, ``w`` each reviewer's share of the candidate's and of
the baseline's ratings: its variance over panels is ``sigma_b^2 Sum_r (w_c,r - w_b,r)^2`` (``sigma_b^2 (1/R_c +
1/R_b)`` for two disjoint panels of R_c and R_b reviewers with equal shares; 0 for one panel in the same
shares). That variance is added to the sampling variance of the verdict's interval when there are no anchors.

``sigma_b^2`` is estimated within each round, where reviewers rate the same outputs, by the method of moments
(an unbiased U-statistic): for two reviewers r and s who rated outputs o and o', the differences ``d_o = y_or -
y_os`` have ``E[d_o d_o'] = Var(b_r - b_s) = 2 sigma_b^2`` (the outputs' quality cancels within an output and the
noise is independent between outputs), so ``2 sigma_b^2 = Sum (S^2 - Q) / Sum n (n - 1)`` over pairs of
reviewers, S, Q and n the sum, sum of squares and number of their differences (Searle, Casella & McCulloch,
*Variance Components*, 1992, ch. 4: ANOVA estimators). Its degrees of freedom are taken as the number of
reviewers less one per round. In pairwise mode the "leniency" is a reviewer's preference within a pair of models,
and differences are paired within the same pair of models (``group``).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def reviewer_variance(rounds: Sequence[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]]) -> tuple[float, float]:
    """The between-reviewer variance of leniency and its degrees of freedom, from the ratings of each round:
    (group, output, reviewer, value) arrays, one rating each. NaN (and 0 df) when no two reviewers rated two
    outputs in common in any round: then it cannot be estimated."""
    num, den, df = 0.0, 0.0, 0.0
    for group, output, reviewer, value in rounds:
        keep = reviewer >= 0
        if keep.sum() < 4:
            continue
        n_rev = int(reviewer[keep].max()) + 1
        # One value per (output, reviewer): a reviewer who saw an output twice counts once, at the mean.
        key = output[keep].astype(np.int64) * n_rev + reviewer[keep]
        cells, where = np.unique(key, return_inverse=True)
        total = np.bincount(where, weights=value[keep], minlength=len(cells))
        mean = total / np.bincount(where, minlength=len(cells))
        cell_group = np.zeros(len(cells), dtype=np.int64)
        cell_group[where] = group[keep]
        out, rev = cells // n_rev, cells % n_rev  # sorted by output, then reviewer
        diffs: list[np.ndarray] = []
        keys_all: list[np.ndarray] = []
        for j in range(1, len(cells)):
            same = out[:-j] == out[j:]
            if not same.any():
                break
            i = np.flatnonzero(same)
            d = mean[i] - mean[i + j]  # rev[i] < rev[i + j]: cells are sorted by reviewer within an output
            keys_all.append((cell_group[i] * n_rev + rev[i]) * n_rev + rev[i + j])
            diffs.append(d)
        if not keys_all:
            continue
        keys, d = np.concatenate(keys_all), np.concatenate(diffs)
        _, k = np.unique(keys, return_inverse=True)
        s, q, n = np.bincount(k, weights=d), np.bincount(k, weights=d * d), np.bincount(k).astype(float)
        num += float((s * s - q).sum())
        den += float((n * (n - 1)).sum())
        df += max(len(np.unique(rev)) - 1, 0)
    if den <= 0:
        return float("nan"), 0.0
    return max(num / (2 * den), 0.0), max(df, 1.0)


def panel_weight(cand_reviewers: np.ndarray, base_reviewers: np.ndarray) -> float:
    """``Sum_r (w_c,r - w_b,r)^2``, ``w`` each reviewer's share of the candidate's and of the baseline's ratings
    (codes; -1, an unknown reviewer, counts as one more). NaN when a side has no ratings."""
    if not len(cand_reviewers) or not len(base_reviewers):
        return float("nan")
    size = int(max(cand_reviewers.max(), base_reviewers.max())) + 2
    w_c = np.bincount(cand_reviewers + 1, minlength=size) / len(cand_reviewers)
    w_b = np.bincount(base_reviewers + 1, minlength=size) / len(base_reviewers)
    return float(((w_c - w_b) ** 2).sum())
