"""Scores with honest uncertainty: mean scores (rating mode) or Bradley-Terry strengths (pairwise mode).

Both use a cluster bootstrap over samples (a sample's ratings are resampled together), vectorised as a
(rounds x samples) matrix of resampling counts times per-sample totals. Each :class:`Estimate` also keeps its
per-sample totals, from which ``decisions`` tests every pair analytically (the decisions do not depend on the
bootstrap seed) and ranks the models.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from reviewer_app.domain.report_rankings import WinRateRow

BT_ALPHA = 0.01  # L2 penalty alpha * sum(theta^2), as in choix: keeps an undefeated model finite


@dataclass
class Estimate:
    """Point estimates and bootstrap replicates for a set of models on one dimension, and per-sample data.

    ``kind`` says how pairs are tested: "mean" (rating mode), "bt" (Bradley-Terry) or "composite" (a
    weighted sum of the ``parts``' scores, one part per scenario). Per-sample arrays have one row per
    sample; ``strata`` gives each sample's stratum (its scenario when scenarios are pooled).
    """

    models: list[str]
    point: np.ndarray  # (M,)
    boot: np.ndarray  # (rounds x M); NaN where a model had no data in a round
    n: np.ndarray  # (M,) ratings (rating mode) or comparisons (pairwise) behind each score
    kind: str = "mean"
    higher_is_better: bool = True
    strata: np.ndarray | None = None  # (S,)
    num: np.ndarray | None = None  # rating mode: bootstrap sums and counts (rounds x M), kept to pool scenarios
    den: np.ndarray | None = None
    sums: np.ndarray | None = None  # rating mode: per-sample score totals and counts (S x M)
    counts: np.ndarray | None = None
    sup: np.ndarray | None = None  # ordinal: (S x M x M) how often i's rating beats j's on the sample (ties half)
    sup_valid: np.ndarray | None = None  # (S x M x M) both rated on the sample
    boot_sup_num: np.ndarray | None = None  # (rounds x M x M) bootstrap totals of sup and of sup_valid
    boot_sup_den: np.ndarray | None = None
    wins: np.ndarray | None = None  # pairwise: (M x M) total wins (ties half) and (rounds x M x M) replicates
    boot_wins: np.ndarray | None = None
    sample_wins: np.ndarray | None = None  # pairwise: (S x M x M) per-sample wins
    # pairwise: (M x M) comparisons that ended without a winner ("tie" or "both bad", symmetric) and those judged
    # "both bad", and their (rounds x M x M) bootstrap totals (see ``analysis.ties``)
    draws: np.ndarray | None = None
    both_bad: np.ndarray | None = None
    boot_draws: np.ndarray | None = None
    boot_both_bad: np.ndarray | None = None
    parts: list[Estimate] = field(default_factory=list)  # composite: one estimate per scenario
    part_weights: list[float] = field(default_factory=list)
    confounded: np.ndarray | None = None  # (M x M) pairs never separated: the design confounds them with reviewers
    panel_var: np.ndarray | None = None  # rating mode: (M,) variance a new panel of reviewers adds to each score
    panel_reviewers: int = 0  # the reviewers that variance was estimated from

    @property
    def ordinal(self) -> bool:
        return self.sup is not None


def sample_index(frame: pd.DataFrame, samples: list[Any]) -> np.ndarray:
    """Position of each row's ``sample_id`` in ``samples`` (-1 if absent)."""
    positions: np.ndarray = pd.Index(samples).get_indexer(pd.Index(frame["sample_id"]))
    return positions


def rating_estimate(
    frame: pd.DataFrame,
    models: list[str],
    samples: list[Any],
    weights: np.ndarray,
    *,
    higher_is_better: bool = True,
    ordinal_levels: Sequence[float] | None = None,
) -> Estimate:
    """Mean ``score`` per ``model_a`` with cluster-bootstrap replicates.

    ``samples`` fixes the cluster order of ``weights`` (rounds x samples resampling counts). With
    ``ordinal_levels`` (the scale's values, lowest first) the estimate also carries, per sample and pair of
    models, how often one's rating beats the other's (the rank-based comparison of ordinal dimensions).
    """
    frame = frame.dropna(subset=["score"])
    s_idx = sample_index(frame, samples)
    m_idx = pd.Index(models).get_indexer(pd.Index(frame["model_a"]))
    flat = s_idx * len(models) + m_idx
    size = len(samples) * len(models)
    score = frame["score"].to_numpy(dtype=float)
    sums = np.bincount(flat, weights=score, minlength=size).reshape(len(samples), len(models))
    counts = np.bincount(flat, minlength=size).reshape(len(samples), len(models)).astype(float)
    num, den = weights @ sums, weights @ counts
    est = _rating_from_totals(models, sums.sum(axis=0), counts.sum(axis=0), num, den, higher_is_better)
    est.sums, est.counts, est.strata = sums, counts, np.zeros(len(samples), dtype=int)
    if ordinal_levels is not None:
        level = np.searchsorted(np.asarray(ordinal_levels, dtype=float), score)
        k = len(ordinal_levels)
        hist = np.bincount(flat * k + np.clip(level, 0, k - 1), minlength=size * k)
        hist = hist.reshape(len(samples), len(models), k)
        if not higher_is_better:
            hist = hist[:, :, ::-1]
        est.sup, est.sup_valid = superiority(hist.astype(float))
        rounds, m = weights.shape[0], len(models)
        est.boot_sup_num = (weights @ est.sup.reshape(len(samples), -1)).reshape(rounds, m, m)
        est.boot_sup_den = (weights @ est.sup_valid.reshape(len(samples), -1)).reshape(rounds, m, m)
    return est


def superiority(hist: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per sample, from rating histograms (samples x M x levels, worst level first): the probability that a
    rating of model i beats one of model j (ties half), and where both were rated (0 elsewhere)."""
    below = np.cumsum(hist, axis=2) - hist
    beats = np.einsum("sik,sjk->sij", hist, below) + 0.5 * np.einsum("sik,sjk->sij", hist, hist)
    n = hist.sum(axis=2)
    pairs = n[:, :, None] * n[:, None, :]
    valid = pairs > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        sup = np.where(valid, beats / np.where(valid, pairs, 1.0), 0.0)
    return sup, valid.astype(float)


def _rating_from_totals(
    models: list[str], total: np.ndarray, count: np.ndarray, num: np.ndarray, den: np.ndarray, higher: bool
) -> Estimate:
    with np.errstate(divide="ignore", invalid="ignore"):
        point = np.where(count > 0, total / np.maximum(count, 1), np.nan)
        boot = np.where(den > 0, num / np.maximum(den, 1e-300), np.nan)
    return Estimate(models, point, boot, count, kind="mean", higher_is_better=higher, num=num, den=den)


def _expand(index: np.ndarray, width: int, values: np.ndarray, axes: int = 1) -> np.ndarray:
    """``values`` (rows x m [x m]) placed in the columns ``index`` of a zero array with ``width`` columns."""
    shape = (values.shape[0],) + (width,) * axes
    out = np.zeros(shape)
    if axes == 1:
        out[:, index] = values
    else:
        out[:, index[:, None], index[None, :]] = values
    return out


def _kept(est: Estimate, models: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Positions in ``est.models`` of the models in ``models``, and their positions in ``models``."""
    own = [k for k, x in enumerate(est.models) if x in models]
    return np.array(own, dtype=int), np.array([models.index(est.models[k]) for k in own], dtype=int)


def pool_rating(estimates: list[Estimate], models: list[str]) -> Estimate:
    """Pool per-scenario rating estimates (each with its own stratum of resampled samples) over ``models``
    (the others' ratings are left out)."""
    rounds = estimates[0].boot.shape[0]
    m = len(models)
    total, count = np.zeros(m), np.zeros(m)
    num, den = np.zeros((rounds, m)), np.zeros((rounds, m))
    sums, counts, strata = [], [], []
    ordinal = all(e.ordinal for e in estimates)
    sup, valid = [], []
    sup_num, sup_den = np.zeros((rounds, m, m)), np.zeros((rounds, m, m))
    for k, est in enumerate(estimates):
        own, cols = _kept(est, models)
        assert est.num is not None and est.den is not None and est.sums is not None and est.counts is not None
        total[cols] += np.nan_to_num(est.point[own]) * est.n[own]
        count[cols] += est.n[own]
        num[:, cols] += est.num[:, own]
        den[:, cols] += est.den[:, own]
        sums.append(_expand(cols, m, est.sums[:, own]))
        counts.append(_expand(cols, m, est.counts[:, own]))
        strata.append(np.full(len(est.sums), k))
        if ordinal:
            assert est.sup is not None and est.sup_valid is not None
            assert est.boot_sup_num is not None and est.boot_sup_den is not None
            sub = np.ix_(own, own)
            sup.append(_expand(cols, m, est.sup[:, sub[0], sub[1]], axes=2))
            valid.append(_expand(cols, m, est.sup_valid[:, sub[0], sub[1]], axes=2))
            sup_num[:, cols[:, None], cols[None, :]] += est.boot_sup_num[:, sub[0], sub[1]]
            sup_den[:, cols[:, None], cols[None, :]] += est.boot_sup_den[:, sub[0], sub[1]]
    out = _rating_from_totals(models, total, count, num, den, estimates[0].higher_is_better)
    out.sums, out.counts, out.strata = np.concatenate(sums), np.concatenate(counts), np.concatenate(strata)
    if ordinal:
        out.sup, out.sup_valid = np.concatenate(sup), np.concatenate(valid)
        out.boot_sup_num, out.boot_sup_den = sup_num, sup_den
    return out


def pairwise_wins(frame: pd.DataFrame, models: list[str], samples: list[Any]) -> tuple[np.ndarray, np.ndarray]:
    """Per-sample win tensor (samples x M x M): [s, i, j] = wins of i over j, ties and "both bad" half each.

    ``frame`` needs ``sample_id, model_a, model_b, outcome`` (canonical: "a", "b", "tie", "both_bad").
    Also returns per-sample comparison counts per model pair (symmetric).
    """
    s_idx = sample_index(frame, samples)
    pos = {m: i for i, m in enumerate(models)}
    a = frame["model_a"].map(pos).to_numpy()
    b = frame["model_b"].map(pos).to_numpy()
    outcome = frame["outcome"].to_numpy()
    a_score = np.select([outcome == "a", outcome == "b"], [1.0, 0.0], default=0.5)
    wins = np.zeros((len(samples), len(models), len(models)))
    np.add.at(wins, (s_idx, a, b), a_score)
    np.add.at(wins, (s_idx, b, a), 1.0 - a_score)
    return wins, wins + wins.transpose(0, 2, 1)


def pairwise_draws(frame: pd.DataFrame, models: list[str], samples: list[Any]) -> tuple[np.ndarray, np.ndarray]:
    """Per-sample tensors (samples x M x M, symmetric) of comparisons without a winner ("tie" or "both_bad")
    and of those judged "both_bad": what :func:`pairwise_wins` counts half a win each way, kept apart so the
    report can give each model's both-bad rate and fit a tie model (``analysis.ties``)."""
    s_idx = sample_index(frame, samples)
    pos = {m: i for i, m in enumerate(models)}
    a = frame["model_a"].map(pos).to_numpy()
    b = frame["model_b"].map(pos).to_numpy()
    outcome = frame["outcome"].to_numpy()
    out = []
    for kind in ((outcome != "a") & (outcome != "b"), outcome == "both_bad"):
        counts = np.zeros((len(samples), len(models), len(models)))
        np.add.at(counts, (s_idx[kind], a[kind], b[kind]), 1.0)
        out.append(counts + counts.transpose(0, 2, 1))
    return out[0], out[1]


def fit_bradley_terry(wins: np.ndarray, alpha: float = BT_ALPHA, tol: float = 1e-10, max_iter: int = 200) -> np.ndarray:
    """Bradley-Terry log-strengths maximising sum w_ij log sigmoid(t_i - t_j) - alpha * sum t^2.

    ``wins`` is (M x M) or a batch (R x M x M) of win counts (fractional ties allowed). The penalty matches
    ``choix.opt_pairwise(alpha=...)``; it also makes the strengths sum to zero. Damped Newton, batched.
    """
    w = np.asarray(wins, dtype=float)
    single = w.ndim == 2
    if single:
        w = w[None]
    n = w + w.transpose(0, 2, 1)
    m = w.shape[-1]
    theta = np.zeros(w.shape[:2])
    eye = np.eye(m)
    for _ in range(max_iter):
        diff = theta[:, :, None] - theta[:, None, :]
        p = 1.0 / (1.0 + np.exp(-diff))
        grad = (n * p - w).sum(axis=2) + 2 * alpha * theta
        curv = n * p * (1 - p)
        hess = -curv + eye * (curv.sum(axis=2)[:, :, None] + 2 * alpha)
        if np.abs(grad).max() < tol:
            break
        step = np.linalg.solve(hess, grad[..., None])[..., 0]
        # Damping: a Newton step on a logistic likelihood can overshoot when one model wins nearly always.
        scale = np.minimum(1.0, 2.0 / np.maximum(np.abs(step).max(axis=1, keepdims=True), 1e-300))
        theta = theta - scale * step
    return theta[0] if single else theta


def pairwise_estimate(frame: pd.DataFrame, models: list[str], samples: list[Any], weights: np.ndarray) -> Estimate:
    """Bradley-Terry strengths with cluster-bootstrap replicates (the model is refit in every round)."""
    wins, _ = pairwise_wins(frame, models, samples)
    draws, both_bad = pairwise_draws(frame, models, samples)
    rounds = weights.shape[0]

    def boot(per_sample: np.ndarray) -> np.ndarray:
        out: np.ndarray = (weights @ per_sample.reshape(len(samples), -1)).reshape(rounds, len(models), len(models))
        return out

    est = _pairwise_from_wins(models, wins, np.zeros(len(samples), dtype=int), boot(wins))
    est.draws, est.both_bad = draws.sum(axis=0), both_bad.sum(axis=0)
    est.boot_draws, est.boot_both_bad = boot(draws), boot(both_bad)
    return est


def _pairwise_from_wins(
    models: list[str], sample_wins: np.ndarray, strata: np.ndarray, boot_wins: np.ndarray
) -> Estimate:
    total = sample_wins.sum(axis=0)
    point = fit_bradley_terry(total)
    boot = fit_bradley_terry(boot_wins)
    n = (total + total.T).sum(axis=1)
    return Estimate(
        models, point, boot, n, kind="bt", strata=strata, wins=total, boot_wins=boot_wins, sample_wins=sample_wins
    )


def pool_pairwise(estimates: list[Estimate], models: list[str]) -> Estimate:
    """Pool per-scenario comparisons into one Bradley-Terry fit over ``models`` (comparisons with any other
    model are left out), each scenario resampled in its own stratum."""
    rounds = estimates[0].boot.shape[0]
    m = len(models)
    boot = np.zeros((rounds, m, m))
    draws, both_bad = np.zeros((m, m)), np.zeros((m, m))
    boot_draws, boot_both_bad = np.zeros((rounds, m, m)), np.zeros((rounds, m, m))
    sample_wins, strata = [], []
    for k, est in enumerate(estimates):
        assert est.sample_wins is not None and est.boot_wins is not None
        own, idx = _kept(est, models)
        at, of = (slice(None), idx[:, None], idx[None, :]), (slice(None), own[:, None], own[None, :])
        boot[at] += est.boot_wins[of]
        sample_wins.append(_expand(idx, m, est.sample_wins[:, own[:, None], own[None, :]], axes=2))
        strata.append(np.full(len(est.sample_wins), k))
        if est.draws is not None and est.both_bad is not None:
            assert est.boot_draws is not None and est.boot_both_bad is not None
            draws[at[1:]] += est.draws[of[1:]]
            both_bad[at[1:]] += est.both_bad[of[1:]]
            boot_draws[at] += est.boot_draws[of]
            boot_both_bad[at] += est.boot_both_bad[of]
    out = _pairwise_from_wins(models, np.concatenate(sample_wins), np.concatenate(strata), boot)
    out.draws, out.both_bad, out.boot_draws, out.boot_both_bad = draws, both_bad, boot_draws, boot_both_bad
    return out


def log_odds_scale(est: Estimate) -> bool:
    """Whether ``est``'s scores are Bradley-Terry strengths (a fit, or a composite of fits): log-odds, where
    model i beats model j with probability 1 / (1 + exp(-(theta_i - theta_j)))."""
    return est.kind == "bt" or (est.kind == "composite" and bool(est.parts) and est.parts[0].kind == "bt")


def average_strength(est: Estimate) -> float:
    """The mean strength of the models ``est`` ranks (those with a finite score and comparisons behind it).

    The penalised fit makes strengths sum to zero (see :func:`fit_bradley_terry`), so for one fit this is 0;
    a composite's weighted strengths, kept to the models rated in every scenario, need not be."""
    ranked = np.isfinite(est.point) & (est.n > 0)
    return float(np.mean(est.point[ranked])) if ranked.any() else 0.0


def win_vs_average(strengths: np.ndarray, average: float) -> np.ndarray:
    """The chance that a model of each strength beats a model of strength ``average`` (see
    :func:`average_strength`): 1 / (1 + exp(-(theta - average))), the Bradley-Terry win probability; NaN
    stays NaN. Monotone, so the ends of a strength's 95% interval give the ends of this chance's interval."""
    values = np.asarray(strengths, dtype=float)
    with np.errstate(over="ignore"):
        out: np.ndarray = 1.0 / (1.0 + np.exp(-(values - average)))
    return out


def win_rates(est: Estimate) -> list[WinRateRow]:
    """The win-rate matrix as rows, every ordered pair of models (ties count half; None if never met)."""
    assert est.wins is not None
    rows = []
    for i, a in enumerate(est.models):
        for j, b in enumerate(est.models):
            if i == j:
                continue
            n = est.wins[i, j] + est.wins[j, i]
            rate = float(est.wins[i, j] / n) if n else None
            rows.append(WinRateRow(model=a, opponent=b, win_rate=rate, n=int(round(n))))
    return rows
