"""Rankings with honest uncertainty: mean scores (rating mode) or Bradley-Terry strengths (pairwise mode).

Both use a cluster bootstrap over samples (a sample's ratings are resampled together), vectorised as a
(rounds x samples) matrix of resampling counts times per-sample totals. Ranks come from paired bootstrap
differences: a model's rank is 1 + the number of models significantly better than it, and tiers group
models that are not separated.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from reviewer_app.aggregation.prepare import finite_or_none
from reviewer_app.domain.report import RankingRow, WinRateRow

BT_ALPHA = 0.01  # L2 penalty alpha * sum(theta^2), as in choix: keeps an undefeated model finite


@dataclass
class Estimate:
    """Point estimates and bootstrap replicates for a set of models on one dimension."""

    models: list[str]
    point: np.ndarray  # (M,)
    boot: np.ndarray  # (rounds x M); NaN where a model had no data in a round
    n: np.ndarray  # (M,) ratings (rating mode) or comparisons (pairwise) behind each score
    num: np.ndarray | None = None  # rating mode: bootstrap sums and counts, kept to pool scenarios
    den: np.ndarray | None = None
    wins: np.ndarray | None = None  # pairwise: (M x M) total wins (ties half) and (rounds x M x M) replicates
    boot_wins: np.ndarray | None = None


def sample_index(frame: pd.DataFrame, samples: list[Any]) -> np.ndarray:
    """Position of each row's ``sample_id`` in ``samples`` (-1 if absent)."""
    positions: np.ndarray = pd.Index(samples).get_indexer(pd.Index(frame["sample_id"]))
    return positions


def rating_estimate(frame: pd.DataFrame, models: list[str], samples: list[Any], weights: np.ndarray) -> Estimate:
    """Mean ``score`` per ``model_a`` with cluster-bootstrap replicates.

    ``samples`` fixes the cluster order of ``weights`` (rounds x samples resampling counts).
    """
    frame = frame.dropna(subset=["score"])
    s_idx = sample_index(frame, samples)
    m_idx = pd.Index(models).get_indexer(pd.Index(frame["model_a"]))
    flat = s_idx * len(models) + m_idx
    size = len(samples) * len(models)
    sums = np.bincount(flat, weights=frame["score"].to_numpy(dtype=float), minlength=size)
    sums = sums.reshape(len(samples), len(models))
    counts = np.bincount(flat, minlength=size).reshape(len(samples), len(models)).astype(float)
    num, den = weights @ sums, weights @ counts
    return _rating_from_totals(models, sums.sum(axis=0), counts.sum(axis=0), num, den)


def _rating_from_totals(
    models: list[str], total: np.ndarray, count: np.ndarray, num: np.ndarray, den: np.ndarray
) -> Estimate:
    with np.errstate(divide="ignore", invalid="ignore"):
        point = np.where(count > 0, total / np.maximum(count, 1), np.nan)
        boot = np.where(den > 0, num / np.maximum(den, 1e-300), np.nan)
    return Estimate(models, point, boot, count, num=num, den=den)


def pool_rating(estimates: list[Estimate], models: list[str]) -> Estimate:
    """Pool per-scenario rating estimates (each with its own stratum of resampled samples)."""
    rounds = estimates[0].boot.shape[0]
    total, count = np.zeros(len(models)), np.zeros(len(models))
    num, den = np.zeros((rounds, len(models))), np.zeros((rounds, len(models)))
    for est in estimates:
        cols = [models.index(m) for m in est.models]
        assert est.num is not None and est.den is not None
        total[cols] += np.nan_to_num(est.point) * est.n
        count[cols] += est.n
        num[:, cols] += est.num
        den[:, cols] += est.den
    return _rating_from_totals(models, total, count, num, den)


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
    wins, pairs = pairwise_wins(frame, models, samples)
    rounds = weights.shape[0]
    flat = wins.reshape(len(samples), -1)
    boot_wins = (weights @ flat).reshape(rounds, len(models), len(models))
    return _pairwise_from_wins(models, wins.sum(axis=0), boot_wins)


def _pairwise_from_wins(models: list[str], total: np.ndarray, boot_wins: np.ndarray) -> Estimate:
    point = fit_bradley_terry(total)
    boot = fit_bradley_terry(boot_wins)
    n = (total + total.T).sum(axis=1)
    return Estimate(models, point, boot, n, wins=total, boot_wins=boot_wins)


def pool_pairwise(estimates: list[Estimate], models: list[str]) -> Estimate:
    """Pool per-scenario comparisons into one Bradley-Terry fit (each scenario resampled in its stratum)."""
    rounds = estimates[0].boot.shape[0]
    total = np.zeros((len(models), len(models)))
    boot = np.zeros((rounds, len(models), len(models)))
    for est in estimates:
        assert est.wins is not None and est.boot_wins is not None
        idx = np.array([models.index(m) for m in est.models])
        total[np.ix_(idx, idx)] += est.wins
        boot[:, idx[:, None], idx[None, :]] += est.boot_wins
    return _pairwise_from_wins(models, total, boot)


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


def separation(point: np.ndarray, boot: np.ndarray) -> np.ndarray:
    """(M x M) bool: [i, j] is True when model i is significantly better than j (95% paired bootstrap CI
    of the difference excludes 0)."""
    diffs = boot[:, :, None] - boot[:, None, :]
    valid = ~np.isnan(diffs)
    low = np.full(diffs.shape[1:], np.nan)
    for i in range(diffs.shape[1]):
        for j in range(diffs.shape[2]):
            col = diffs[valid[:, i, j], i, j]
            if len(col) and i != j:
                low[i, j] = np.percentile(col, 2.5)
    return np.nan_to_num(low, nan=-1.0) > 0


def rank_and_tier(point: np.ndarray, better: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``rank`` = 1 + models significantly better; ``tier``: walking down the scores, a new tier starts at
    the first model significantly worse than the current tier's leader."""
    rank = 1 + better.sum(axis=0)
    order = np.argsort(-np.nan_to_num(point, nan=-np.inf), kind="stable")
    tier = np.zeros(len(point), dtype=int)
    current, leader = 1, order[0] if len(order) else 0
    for m in order:
        if better[leader, m]:
            current += 1
            leader = m
        tier[m] = current
    return rank, tier


def ranking_rows(est: Estimate, dimension: str) -> tuple[list[RankingRow], np.ndarray]:
    """The report's ranking rows for one dimension, best first, and the significance matrix."""
    better = separation(est.point, est.boot)
    rank, tier = rank_and_tier(est.point, better)
    rows = []
    for i in np.argsort(-np.nan_to_num(est.point, nan=-np.inf), kind="stable"):
        col = est.boot[:, i]
        col = col[~np.isnan(col)]
        lo, hi = np.percentile(col, [2.5, 97.5]) if len(col) else (np.nan, np.nan)
        rows.append(
            RankingRow(
                model=est.models[i],
                dimension=dimension,
                score=finite_or_none(est.point[i]),
                ci_low=finite_or_none(lo),
                ci_high=finite_or_none(hi),
                rank=int(rank[i]),
                tier=int(tier[i]),
                n=int(round(est.n[i])),
            )
        )
    return rows, better


def _join(names: list[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def describe(rows: Sequence[RankingRow], better: np.ndarray, models: list[str], dimension: str) -> str:
    """One plain-language line: "A and B are tied on extraction; C is behind both."."""
    if not rows:
        return f"No scores on {dimension}."
    if len(rows) == 1:
        return f"Only {rows[0].model} was scored on {dimension}."
    tiers: dict[int, list[str]] = {}
    for r in rows:
        tiers.setdefault(r.tier, []).append(r.model)
    idx = {m: i for i, m in enumerate(models)}
    parts: list[str] = []
    above: list[str] = []
    for t in sorted(tiers):
        names = tiers[t]
        if t == 1:
            if len(names) == len(rows):
                parts.append(f"{_join(names)} are {'tied' if len(names) == 2 else 'all tied'} on {dimension}")
            elif len(names) > 1:
                parts.append(f"{_join(names)} are tied on {dimension}")
            else:
                parts.append(f"{names[0]} leads on {dimension}")
        else:
            beaten_by = [a for a in above if all(better[idx[a], idx[n]] for n in names)]
            verb = "is" if len(names) == 1 else "are"
            if len(beaten_by) == len(above):
                target = "both" if len(above) == 2 else ("all of them" if len(above) > 2 else above[0])
            else:
                target = _join(beaten_by) + f" (not clearly behind {_join([a for a in above if a not in beaten_by])})"
            parts.append(f"{_join(names)} {verb} behind {target}")
        above += names
    return "; ".join(parts) + "."


def separation_warning(est: Estimate, n_samples: int, dimension: str, unit: str) -> str | None:
    """Warn when the samples are too few to separate differences as large as the observed spread.

    The smallest difference a paired comparison separates with 80% power at the 5% level is about
    2.8 bootstrap standard errors of the difference; if that exceeds max - min of the scores, the order
    shown is mostly noise.
    """
    ok = ~np.isnan(est.point)
    if ok.sum() < 2:
        return None
    boot = est.boot[:, ok]
    diffs = boot[:, :, None] - boot[:, None, :]
    iu = np.triu_indices(boot.shape[1], 1)
    se = np.nanstd(diffs[:, iu[0], iu[1]], axis=0)
    if not np.isfinite(se).any():
        return None
    mdd = 2.8 * float(np.nanmedian(se))
    spread = float(np.nanmax(est.point) - np.nanmin(est.point))
    if mdd <= spread:
        return None
    if spread <= 0:
        return (
            f"{dimension}: every model has the same score; {n_samples} samples cannot separate "
            f"differences smaller than about {mdd:.2g} {unit}."
        )
    need = int(np.ceil(n_samples * (mdd / spread) ** 2))
    return (
        f"{dimension}: {n_samples} samples can separate differences of about {mdd:.2g} {unit} or more, "
        f"but the models here differ by at most {spread:.2g}; treat the order as unsettled "
        f"(roughly {need} samples would be needed)."
    )
