"""How reliable a ranking's model scores are: split-half reliability of the models' means, with a bootstrap CI.

Krippendorff's alpha says how far reviewers agree on one item; a ranking rests on each model's mean over many
items, whose noise shrinks with their number. A panel can agree little on single items and still order the
models reliably (or agree well and not tell the models apart). This module measures the second: split the
samples at random into two halves (within each scenario when scenarios are pooled), score every model on each
half, correlate the two halves' scores across models, average the correlation over many splits and step it
up to the full panel with the Spearman-Brown formula, 2r / (1 + r) (a negative r is kept as it is). Its 95% CI
is the bias-corrected (BC) percentile interval of the same statistic over cluster-bootstrap replicates of the
samples, a few coin-toss splits per replicate (Efron & Tibshirani 1993, ch. 14). A replicate's duplicated
samples fall in one half (a sample in both would correlate the halves by itself), so its halves hold fewer
distinct samples: each replicate's correlation is stepped up by the samples of the whole over the halves'
effective number of samples (Kish), the general Spearman-Brown formula, instead of by 2. Past 400 samples, the
samples are first summed into 400 fixed random groups within their scenarios, so the cost stops growing.
Rating mode splits the per-sample totals; pairwise mode refits Bradley-Terry on each half's comparisons. A
composite has none (its parts do).

Like the ranks, tiers and letters, it does not depend on the report's seed or rounds: it draws its splits and
replicates from a fixed seed and the ranking's name, so the sentences built on it do not move with the seed.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
from scipy.stats import norm

from reviewer_app.analysis.prepare import bootstrap_weights, sub_rng
from reviewer_app.analysis.ranking import Estimate, fit_bradley_terry
from reviewer_app.domain.report_rankings import ReliabilityRow

__all__ = ["POINT_SPLITS", "bc_interval", "means_reliability", "spearman_brown"]

POINT_SPLITS = 200  # random halvings averaged for the point estimate
BOOT_SPLITS = {"mean": 8, "bt": 2}  # halvings per bootstrap replicate (a Bradley-Terry fit per half is dearer)
BOOT_ROUNDS = 1000
SEED = 20261204  # the reliability's own seed (see the module's docstring)
MAX_CLUSTERS = 400  # more samples than this are summed into this many random groups (see _clusters)
_CHUNK = 64  # bootstrap replicates per block, to keep the (replicates x splits x samples) arrays small


def spearman_brown(r: np.ndarray | float, factor: np.ndarray | float = 2.0) -> np.ndarray:
    """The reliability of a whole ``factor`` times the size of the parts whose scores correlate ``r``:
    factor r / (1 + (factor - 1) r), 2r / (1 + r) for two halves. Below 0 the correlation itself (no step-up
    applies to parts that disagree; the formula would run to minus infinity)."""
    r = np.clip(np.asarray(r, dtype=float), -1.0, 1.0)
    k = np.asarray(factor, dtype=float)
    out: np.ndarray = np.where(r >= 0, k * r / (1 + (k - 1) * np.abs(r)), r)
    return out


def _halves(strata: np.ndarray, splits: int, rng: np.random.Generator) -> np.ndarray:
    """(splits x samples) 0/1: a random half of each stratum's samples (the smaller half when odd) is 1."""
    keys = rng.random((splits, len(strata)))
    out = np.zeros_like(keys)
    for s in np.unique(strata):
        cols = np.flatnonzero(strata == s)
        ranks = np.argsort(np.argsort(keys[:, cols], axis=1), axis=1)
        out[:, cols] = ranks < len(cols) // 2
    return out


def _row_correlation(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Pearson's r between the rows of ``a`` and ``b`` (... x models); NaN where a row has a NaN or no spread."""
    ok = np.isfinite(a).all(axis=-1) & np.isfinite(b).all(axis=-1)
    a, b = np.where(ok[..., None], a, 0.0), np.where(ok[..., None], b, 0.0)
    da, db = a - a.mean(axis=-1, keepdims=True), b - b.mean(axis=-1, keepdims=True)
    den = np.sqrt((da * da).sum(axis=-1) * (db * db).sum(axis=-1))
    with np.errstate(divide="ignore", invalid="ignore"):
        r = (da * db).sum(axis=-1) / den
    return np.where(ok & (den > 1e-12), r, np.nan)


@dataclass(frozen=True)
class _Data:
    """The kept models' per-cluster data: score totals and counts (rating mode) or wins (pairwise), with each
    cluster's stratum. A cluster is a sample, or a fixed random group of samples of one stratum (see
    :func:`_clusters`)."""

    kind: str
    sums: np.ndarray | None
    counts: np.ndarray | None
    wins: np.ndarray | None
    strata: np.ndarray


def _clusters(est: Estimate, keep: np.ndarray, strata: np.ndarray, rng: np.random.Generator) -> _Data:
    """``est``'s per-sample data for the kept models, summed into at most :data:`MAX_CLUSTERS` random groups of
    samples, each within one stratum (strata keep their share of groups). Random groups of independent samples
    are independent clusters too, so halves and bootstrap replicates of the groups stand for those of the
    samples, and the cost no longer grows with the number of samples."""
    n = len(strata)
    group = np.arange(n)
    if n > MAX_CLUSTERS:
        group = np.empty(n, dtype=int)
        start = 0
        for s in np.unique(strata):
            cols = np.flatnonzero(strata == s)
            k = max(2, round(MAX_CLUSTERS * len(cols) / n))
            group[cols] = start + rng.permutation(len(cols)) % k
            start += k
    size = int(group.max()) + 1
    out_strata = np.zeros(size, dtype=int)
    out_strata[group] = strata

    def summed(values: np.ndarray) -> np.ndarray:
        out = np.zeros((size, *values.shape[1:]))
        np.add.at(out, group, values)
        return out

    if est.kind == "bt":
        assert est.sample_wins is not None
        return _Data("bt", None, None, summed(est.sample_wins[:, keep[:, None], keep[None, :]]), out_strata)
    assert est.sums is not None and est.counts is not None
    return _Data("mean", summed(est.sums[:, keep]), summed(est.counts[:, keep]), None, out_strata)


def _half_scores(data: _Data, w: np.ndarray) -> np.ndarray:
    """The models' scores on clusters weighted by ``w`` (... x clusters): means, or Bradley-Terry strengths."""
    if data.kind == "bt":
        assert data.wins is not None
        sub = data.wins
        m = sub.shape[1]
        wins = (w.reshape(-1, w.shape[-1]) @ sub.reshape(len(sub), -1)).reshape(-1, m, m)
        games = wins + wins.transpose(0, 2, 1)
        theta = fit_bradley_terry(wins)
        # A model with no comparison in a half has no strength there (the penalty alone would put it at 0).
        theta = np.where(games.sum(axis=2) > 0, theta, np.nan)
        return theta.reshape(*w.shape[:-1], m)
    assert data.sums is not None and data.counts is not None
    num = w @ data.sums
    den = w @ data.counts
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)


def _split_half(data: _Data, w: np.ndarray, halves: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean half-to-half correlation over the splits (last but one axis) of the weighted samples ``w``, and the
    mean step-up factor: the samples of the whole over the halves' mean effective number of samples (Kish's
    (sum w)^2 / sum w^2; 2 without a bootstrap's duplicates, more with them)."""
    one, other = w * halves, w * (1 - halves)
    r = _row_correlation(_half_scores(data, one), _half_scores(data, other))
    with np.errstate(divide="ignore", invalid="ignore"):
        size = [(h.sum(axis=-1) ** 2) / (h * h).sum(axis=-1) for h in (one, other)]
    factor = w.shape[-1] / ((size[0] + size[1]) / 2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # an all-NaN row (no split had both halves scored) stays NaN
        out: np.ndarray = np.nanmean(r, axis=-1)
    return out, factor.mean(axis=-1)


def bc_interval(values: np.ndarray, point: float, level: float = 0.95) -> tuple[float, float]:
    """The bias-corrected percentile interval of bootstrap ``values`` around ``point`` (Efron & Tibshirani 1993,
    14.3): the percentiles Phi(2 z0 +- z) with z0 = Phi^-1(share of replicates below the point, ties half)."""
    b = len(values)
    below = (np.sum(values < point) + 0.5 * np.sum(values == point)) / b
    z0 = float(norm.ppf(np.clip(below, 1 / (b + 1), b / (b + 1))))
    z = float(norm.ppf(0.5 + level / 2))
    lo, hi = np.quantile(values, [float(norm.cdf(2 * z0 - z)), float(norm.cdf(2 * z0 + z))])
    return float(lo), float(hi)


def means_reliability(est: Estimate, dimension: str, label: str) -> ReliabilityRow | None:
    """The split-half reliability (Spearman-Brown) of ``est``'s model scores with a 95% bootstrap CI, over the
    models with data; None for a composite. ``label`` names the ranking (its random draws are keyed by it).
    Where it is undefined (fewer than 3 models, fewer than 4 samples, the halves' scores do not vary) the row
    says why in ``note``."""
    rng = sub_rng(SEED, "reliability", label)
    if est.kind not in BOOT_SPLITS:
        return None
    keep = np.flatnonzero((est.n > 0) & np.isfinite(est.point))
    strata = est.strata if est.strata is not None else np.zeros(0, dtype=int)
    n_samples = len(strata)

    def row(value: float | None, lo: float | None, hi: float | None, note: str | None) -> ReliabilityRow:
        return ReliabilityRow(dimension=dimension, split_half=value, ci_low=lo, ci_high=hi, n_models=len(keep),
                              n_samples=n_samples, note=note)  # fmt: skip

    if len(keep) < 3:
        return row(None, None, None, "needs 3 or more models")
    if n_samples < 4:
        return row(None, None, None, "needs 4 or more samples")
    data = _clusters(est, keep, strata, rng)
    n_clusters = len(data.strata)
    ones = np.ones((1, n_clusters))
    r = float(_split_half(data, ones, _halves(data.strata, POINT_SPLITS, rng)[None])[0][0])
    if not np.isfinite(r):
        return row(None, None, None, "the models' scores on half the samples do not vary")
    weights = np.zeros((BOOT_ROUNDS, n_clusters))
    for s in np.unique(data.strata):
        cols = np.flatnonzero(data.strata == s)
        weights[:, cols] = bootstrap_weights(len(cols), len(weights), rng)
    boot = []
    splits = BOOT_SPLITS[est.kind]
    for start in range(0, len(weights), _CHUNK):
        w = weights[start : start + _CHUNK]
        # Each sample to either half by a coin (not an exact halving: a sort per replicate would cost more
        # than the rest); the step-up below counts the halves' actual effective sizes.
        halves = (rng.random((len(w), splits, n_clusters)) < 0.5).astype(float)
        boot.append(spearman_brown(*_split_half(data, w[:, None, :], halves)))
    values = np.concatenate(boot)
    values = values[np.isfinite(values)]
    point = float(spearman_brown(r))
    lo, hi = bc_interval(values, point) if len(values) else (None, None)
    return row(point, lo, hi, None)
