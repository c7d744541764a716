"""Each model's interval in a ranking: the expanded percentile cluster-bootstrap interval (widened for few
samples, :func:`~reviewer_app.analysis.inference.expanded_tails`) with its Monte Carlo error, except for a
model that won (or lost) every comparison, whose strength is only bounded on one side (:func:`boundary_bounds`);
the pair tests and the decisions both use them.
"""

from __future__ import annotations

import numpy as np

from reviewer_app.analysis.inference import expanded_tails, percentile_ci
from reviewer_app.analysis.ranking import Estimate

UNDEFEATED = "won every comparison; its strength is a lower bound"
WINLESS = "lost every comparison; its strength is an upper bound"


def boundary(est: Estimate) -> np.ndarray:
    """Pairwise: +1 for a model that won every comparison it took part in (no loss, no tie), -1 for one that
    lost every one, 0 otherwise. Their penalised strengths are set by the penalty, not by the data."""
    if est.wins is None:
        return np.zeros(len(est.models), dtype=int)
    played = est.n > 0
    lost = est.wins.sum(axis=0)  # wins of the others over the model (ties count half)
    won = est.wins.sum(axis=1)
    return np.where(played & (lost == 0), 1, np.where(played & (won == 0), -1, 0))


def boundary_bounds(est: Estimate) -> tuple[np.ndarray, np.ndarray]:
    """One-sided 97.5% bounds on the strength of models that won or lost every comparison (NaN elsewhere).

    A model that won all its comparisons in G samples wins, with 97.5% confidence, at least p = 0.025^(1/G)
    of the time against the models it met (Clopper-Pearson with the samples, not the comparisons, as the
    units: comparisons on one sample are not independent). Its strength is then at least the comparison-
    weighted mean strength of its opponents plus logit(p); mirrored for a model that lost every comparison.
    """
    side = boundary(est)
    low, high = np.full(len(side), np.nan), np.full(len(side), np.nan)
    if not side.any() or est.sample_wins is None or est.wins is None:
        return low, high
    met = est.wins + est.wins.T
    for k in np.flatnonzero(side):
        samples = int(((est.sample_wins[:, k, :] + est.sample_wins[:, :, k]).sum(axis=1) > 0).sum())
        p = 0.025 ** (1.0 / max(samples, 1))
        margin = float(np.log(p / (1 - p)))
        opponents = float((met[k] * est.point).sum() / met[k].sum())
        if side[k] > 0:
            low[k] = min(opponents + margin, est.point[k])
        else:
            high[k] = max(opponents - margin, est.point[k])
    return low, high


def intervals(est: Estimate) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[str | None]]:
    """Each model's 95% interval (NaN: no bound), the Monte Carlo error of its bootstrap ends, and a note.

    The bootstrap interval is the expanded percentile one for the model's own samples (:func:`active_samples`),
    so it keeps its 95% coverage at a dozen samples, where the plain one covers about 91%."""
    samples, strata = active_samples(est)
    lo, hi, mc = percentile_ci(est.boot, expanded_tails(samples, strata))
    notes: list[str | None] = [None] * len(est.models)
    if est.kind == "bt":
        side = boundary(est)
        low, high = boundary_bounds(est)
        for k in np.flatnonzero(side):
            lo[k], hi[k], mc[k] = (low[k], np.nan, np.nan) if side[k] > 0 else (np.nan, high[k], np.nan)
            notes[k] = UNDEFEATED if side[k] > 0 else WINLESS
    elif est.kind == "composite" and est.parts and est.parts[0].kind == "bt":
        _composite_bounds(est, lo, hi, mc, notes)
    return lo, hi, mc, notes


def active_samples(est: Estimate) -> tuple[np.ndarray, np.ndarray]:
    """Per model, the number of samples behind its score (those with a rating of it, or a comparison it took
    part in) and the number of strata (scenarios) they come from; a composite adds up its parts'. A model
    without per-sample data gets (0, 0), which leaves its interval unexpanded."""
    m = len(est.models)
    if est.kind == "composite" and est.parts:
        g, h = np.zeros(m), np.zeros(m)
        for part in est.parts:
            pg, ph = active_samples(part)
            pos = [part.models.index(x) for x in est.models]
            g, h = g + pg[pos], h + ph[pos]
        return g, h
    if est.counts is not None:
        active = est.counts > 0
    elif est.sample_wins is not None:
        active = (est.sample_wins.sum(axis=2) + est.sample_wins.sum(axis=1)) > 0
    else:
        return np.zeros(m), np.zeros(m)
    strata = est.strata if est.strata is not None else np.zeros(active.shape[0], dtype=int)
    g = active.sum(axis=0).astype(float)
    h = np.array([len(np.unique(strata[active[:, k]])) for k in range(m)], dtype=float)
    return g, h


def _composite_bounds(est: Estimate, lo: np.ndarray, hi: np.ndarray, mc: np.ndarray, notes: list[str | None]) -> None:
    """A composite with a part bounded on one side: add up the parts' interval ends (a conservative bound)."""
    parts = [(p, w, intervals(p)) for p, w in zip(est.parts, est.part_weights, strict=True)]
    for k, name in enumerate(est.models):
        where = []
        ends_lo = ends_hi = 0.0
        for part, w, (plo, phi, _, pnotes) in parts:
            q = part.models.index(name)
            ends_lo += w * plo[q]
            ends_hi += w * phi[q]
            if pnotes[q] is not None:
                where.append((part, pnotes[q]))
        if where:
            lo[k], hi[k], mc[k] = ends_lo, ends_hi, np.nan
            won = all(n == UNDEFEATED for _, n in where)
            notes[k] = (
                "won every comparison in a scenario; its composite is a lower bound"
                if won
                else ("won or lost every comparison in a scenario; its composite interval adds up the scenarios' ends")
            )


def best_shares(est: Estimate, ranked: list[int]) -> np.ndarray:
    """For each model of ``est`` (NaN for those not in ``ranked``), the share of bootstrap replicates in which
    it has the top score among the ``ranked`` models: the probability that it is the best, given this panel
    (Efron & Tibshirani 1993). Models tied at the top of a replicate share it; a model with no score in a
    replicate does not compete there; replicates where none has a score are left out. The shares of the
    ranked models sum to 1."""
    out = np.full(len(est.models), np.nan)
    if not ranked:
        return out
    orient = 1.0 if est.higher_is_better else -1.0
    scores = orient * est.boot[:, ranked]
    scores = np.where(np.isfinite(scores), scores, -np.inf)
    top = scores.max(axis=1, keepdims=True)
    valid = np.isfinite(top[:, 0])
    if not valid.any():
        return out
    first = (scores == top)[valid].astype(float)
    out[ranked] = (first / first.sum(axis=1, keepdims=True)).mean(axis=0)
    return out
