"""Reviewer-adjusted scores for designs where reviewers did not rate the models evenly.

The report's mean scores compare models within samples. When every reviewer who rated a sample rated all of
its models (the pool's whole-sample assignment), a reviewer's leniency lifts every model of that sample alike
and cancels from the comparisons. When reviewers did particular models (typical of imported ratings, or of a
panel split by model), a lenient reviewer's model looks better: in simulations of equal models with each
reviewer doing mostly one model, 27-40% of pairs were falsely separated and the family-wise error was 43-64%.

This module detects that design and removes it. :func:`reviewer_design` tests whether the reviewer x model
table of ratings is independent (Pearson's chi-squared test on the design alone, never on the scores; Cramer's
V for its size): under the pool's assignment it is, and nothing changes. Where it is not (p < ``DESIGN_P``),
:func:`adjust_for_reviewers` fits the additive model

    score = model effect + sample effect + reviewer effect + error

by least squares (samples absorbed by demeaning within each sample, so its cost is one (M + R) x (M + R)
solve), subtracts each reviewer's estimated effect from their scores, and the report's usual per-sample tests
and cluster bootstrap run on the adjusted scores (a two-way fixed-effects adjustment: Searle, Casella &
McCulloch 1992, *Variance Components*, ch. 4; the reviewer terms are estimated once, from the whole panel,
and held fixed in the bootstrap). Model pairs whose difference cannot be told from the reviewers' leniency
(no reviewer links them, even through others) are returned as ``confounded``: the report never separates them.

The adjustment applies to rating mode only: in pairwise mode a reviewer judges both answers at once, so a
reviewer's leniency does not enter the comparison.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.stats import chi2

from reviewer_app.analysis.inference import t_quantile
from reviewer_app.domain.report_rankings import ReviewerDesignRow
from reviewer_app.domain.words import join_names

__all__ = [
    "DESIGN_P",
    "ReviewerDesign",
    "adjust_for_reviewers",
    "confounded_mask",
    "design_row",
    "design_warning",
    "panel_interval",
    "panel_variance",
    "pooled_mask",
    "reviewer_design",
]

DESIGN_P = 0.01  # a reviewer x model table this unlikely under independence is treated as a confounded design
_TOL = 1e-8


@dataclass(frozen=True)
class ReviewerDesign:
    """How the reviewers were spread over the models of one ranking, and what was done about it.

    ``cramers_v`` (0: every reviewer rated the models in the same proportions, 1: each reviewer rated one
    model only) and ``p_value`` (Pearson's chi-squared test of independence of the reviewer x model table)
    measure the imbalance; ``adjusted`` says the ranking uses reviewer-adjusted scores; ``confounded`` lists
    the model pairs whose difference the design cannot tell from reviewer leniency; ``reviewer_sd`` is the
    spread of the reviewers' estimated effects (points of the score), ``leniency`` the effects themselves."""

    reviewers: int
    cramers_v: float
    p_value: float
    adjusted: bool
    confounded: tuple[tuple[str, str], ...] = ()
    reviewer_sd: float | None = None
    leniency: tuple[tuple[str, float], ...] = ()  # each reviewer's estimated effect, centred on the ratings


def _table(frame: pd.DataFrame) -> pd.DataFrame:
    return pd.crosstab(frame["reviewer"], frame["model_a"])


def reviewer_design(frame: pd.DataFrame) -> ReviewerDesign:
    """The chi-squared test of independence of reviewer and model over ``frame``'s rows (``reviewer``,
    ``model_a``). Reviewers or models with no ratings do not count; one reviewer or one model is balanced."""
    table = _table(frame).to_numpy(dtype=float)
    r, m = table.shape
    if r < 2 or m < 2:
        return ReviewerDesign(reviewers=r, cramers_v=0.0, p_value=1.0, adjusted=False)
    n = table.sum()
    expected = table.sum(axis=1, keepdims=True) * table.sum(axis=0, keepdims=True) / n
    stat = float(((table - expected) ** 2 / expected).sum())
    df = (r - 1) * (m - 1)
    v = float(np.sqrt(stat / (n * (min(r, m) - 1))))
    return ReviewerDesign(reviewers=r, cramers_v=min(v, 1.0), p_value=float(chi2.sf(stat, df)), adjusted=False)


def _normal_equations(
    s_idx: np.ndarray, m_idx: np.ndarray, r_idx: np.ndarray, y: np.ndarray, n_s: int, n_m: int, n_r: int
) -> tuple[np.ndarray, np.ndarray]:
    """X'X and X'y of the model and reviewer indicators after demeaning within each sample."""
    cols = np.concatenate([m_idx, n_m + r_idx])
    rows = np.concatenate([s_idx, s_idx])
    k = n_m + n_r
    counts = np.bincount(rows * k + cols, minlength=n_s * k).reshape(n_s, k).astype(float)  # per-sample indicators
    size = np.bincount(s_idx, minlength=n_s).astype(float)
    total = np.bincount(s_idx, weights=y, minlength=n_s)
    inv = np.where(size > 0, 1.0 / np.maximum(size, 1.0), 0.0)
    xtx = np.zeros((k, k))
    np.add.at(xtx, (m_idx, m_idx), 1.0)
    np.add.at(xtx, (n_m + r_idx, n_m + r_idx), 1.0)
    np.add.at(xtx, (m_idx, n_m + r_idx), 1.0)
    np.add.at(xtx, (n_m + r_idx, m_idx), 1.0)
    xtx -= counts.T @ (counts * inv[:, None])
    xty = np.bincount(m_idx, weights=y, minlength=n_m)
    xty = np.concatenate([xty, np.bincount(r_idx, weights=y, minlength=n_r)])
    xty -= counts.T @ (total * inv)
    return xtx, xty


@dataclass(frozen=True)
class _Fit:
    """The model + sample + reviewer least-squares fit of a ranking's ratings (rows of known models only)."""

    keep: np.ndarray  # which rows of the frame are in the fit
    reviewers: pd.Index
    s_idx: np.ndarray
    m_idx: np.ndarray
    r_idx: np.ndarray
    y: np.ndarray
    xtx: np.ndarray
    pinv: np.ndarray
    beta: np.ndarray  # model effects, then reviewer effects (each up to a constant)
    resid: np.ndarray  # within-sample residuals
    size: np.ndarray  # ratings per sample

    @property
    def n_samples(self) -> int:
        return len(self.size)


def _fit(frame: pd.DataFrame, models: list[str]) -> _Fit:
    samples = pd.Index(pd.unique(frame["sample_id"]))
    reviewers = pd.Index(pd.unique(frame["reviewer"]))
    m_idx = pd.Index(models).get_indexer(pd.Index(frame["model_a"]))
    keep = m_idx >= 0
    s_idx = samples.get_indexer(pd.Index(frame["sample_id"]))[keep]
    r_idx = reviewers.get_indexer(pd.Index(frame["reviewer"]))[keep]
    m_idx = m_idx[keep]
    y = frame["score"].to_numpy(dtype=float)[keep]
    n_s, n_m, n_r = len(samples), len(models), len(reviewers)
    xtx, xty = _normal_equations(s_idx, m_idx, r_idx, y, n_s, n_m, n_r)
    pinv = np.linalg.pinv(xtx, rcond=1e-10, hermitian=True)
    beta = pinv @ xty
    fitted = beta[m_idx] + beta[n_m + r_idx]
    size = np.bincount(s_idx, minlength=n_s).astype(float)
    level = np.bincount(s_idx, weights=y - fitted, minlength=n_s) / np.maximum(size, 1.0)
    resid = y - fitted - level[s_idx]
    return _Fit(keep, reviewers, s_idx, m_idx, r_idx, y, xtx, pinv, beta, resid, size)


def adjust_for_reviewers(frame: pd.DataFrame, models: list[str]) -> tuple[pd.DataFrame, ReviewerDesign]:
    """``frame`` (``sample_id``, ``model_a``, ``reviewer``, ``score``) with each score replaced by its
    pseudo-value under the reviewer-adjusted fit where the design is confounded (see the module docstring),
    and the design.

    The fit's model effects are linear in the scores and sum over samples: beta - b = (X'X)^+ sum_s X_s' e_s.
    Each sample's term, (X'X)^+ X_s' e_s with e_s its residuals, is its influence on the adjusted means,
    which carries the uncertainty of the reviewer effects too (estimated from the same samples). A rating's
    pseudo-value is its model's adjusted mean plus its share of that influence, so the report's per-sample
    tests and cluster bootstrap, which see only per-sample sums, test the adjusted means with a
    cluster-robust (sandwich) variance (Liang & Zeger 1986). The adjusted mean of a model is its effect in
    the fit, on the level of the ratings' grand mean.

    Balanced designs come back unchanged (``adjusted`` False): there the adjustment would change nothing but
    the noise."""
    frame = frame.dropna(subset=["score"])
    design = reviewer_design(frame)
    if design.p_value >= DESIGN_P:
        return frame, design
    fit = _fit(frame, models)
    keep, reviewers, s_idx, m_idx, r_idx, y = fit.keep, fit.reviewers, fit.s_idx, fit.m_idx, fit.r_idx, fit.y
    xtx, pinv, beta, resid = fit.xtx, fit.pinv, fit.beta, fit.resid
    n_s, n_m, n_r = fit.n_samples, len(models), len(reviewers)
    k = n_m + n_r
    score_terms = np.zeros((n_s, k))  # X_s' e_s per sample
    np.add.at(score_terms, (s_idx, m_idx), resid)
    np.add.at(score_terms, (s_idx, n_m + r_idx), resid)
    influence = score_terms @ pinv  # (samples x (models + reviewers)); pinv is symmetric
    count = np.bincount(m_idx, minlength=n_m).astype(float)
    effect = beta[:n_m]
    shift = y.mean() - (count @ effect) / count.sum()
    point = effect + shift
    cell = np.bincount(s_idx * n_m + m_idx, minlength=n_s * n_m).astype(float)
    pseudo = point[m_idx] + count[m_idx] * influence[s_idx, m_idx] / cell[s_idx * n_m + m_idx]
    rev = beta[n_m:]
    weight = np.bincount(r_idx, minlength=n_r).astype(float)
    rev = rev - (weight @ rev) / weight.sum()
    projector = pinv @ xtx  # a contrast c is estimable exactly when projector' c = c
    confounded = []
    rated = sorted(set(m_idx.tolist()))
    for a_pos, a in enumerate(rated):
        for b in rated[a_pos + 1 :]:
            c = np.zeros(k)
            c[a], c[b] = 1.0, -1.0
            if np.abs(projector.T @ c - c).max() > 1e-6:
                confounded.append((models[a], models[b]))
    adjusted = frame.copy()
    score = adjusted["score"].to_numpy(dtype=float).copy()
    score[keep] = pseudo
    adjusted["score"] = score
    design = ReviewerDesign(
        reviewers=design.reviewers,
        cramers_v=design.cramers_v,
        p_value=design.p_value,
        adjusted=True,
        confounded=tuple(confounded),
        reviewer_sd=float(np.sqrt(np.average(rev**2, weights=weight))),
        leniency=tuple((str(name), float(value)) for name, value in zip(reviewers, rev, strict=True)),
    )
    return adjusted, design


def confounded_mask(models: list[str], design: ReviewerDesign) -> np.ndarray | None:
    """(M x M) True where a pair cannot be separated (see :attr:`ReviewerDesign.confounded`), None if none."""
    if not design.confounded:
        return None
    pos = {m: k for k, m in enumerate(models)}
    mask = np.zeros((len(models), len(models)), dtype=bool)
    for a, b in design.confounded:
        if a in pos and b in pos:
            mask[pos[a], pos[b]] = mask[pos[b], pos[a]] = True
    return mask


def pooled_mask(parts: list[tuple[list[str], np.ndarray | None]], models: list[str]) -> np.ndarray | None:
    """The confounded pairs of a ranking pooled over scenarios: a pair confounded in any part (its models and
    mask) is confounded in the pool, whose difference sums the parts' differences."""
    pos = {m: k for k, m in enumerate(models)}
    mask = np.zeros((len(models), len(models)), dtype=bool)
    for names, part in parts:
        if part is None:
            continue
        for a, b in zip(*np.nonzero(part), strict=True):
            if names[a] in pos and names[b] in pos:
                mask[pos[names[a]], pos[names[b]]] = True
    return mask if mask.any() else None


def design_row(dimension: str, design: ReviewerDesign) -> ReviewerDesignRow:
    """The report's row for a ranking on reviewer-adjusted scores."""
    return ReviewerDesignRow(
        dimension=dimension,
        reviewers=design.reviewers,
        cramers_v=round(design.cramers_v, 6),
        p_value=design.p_value,
        adjusted=design.adjusted,
        reviewer_sd=None if design.reviewer_sd is None else round(design.reviewer_sd, 6),
        confounded=tuple(f"{a} / {b}" for a, b in design.confounded),
    )


def design_warning(label: str, design: ReviewerDesign) -> str:
    """What a lead must know about a ranking on a confounded design, in words."""
    p = "p < 0.001" if design.p_value < 0.001 else f"p = {design.p_value:.3f}"
    text = (
        f"{label}: reviewers did not rate the models evenly (imbalance {design.cramers_v:.2f} on a 0-1 scale, "
        f"{p}), so a lenient reviewer's models would look better. The scores and separations here are "
        "adjusted for each reviewer's leniency (a model + sample + reviewer fit); the plain means could "
        "mislead."
    )
    if design.confounded:
        pairs = join_names([f"{a} and {b}" for a, b in design.confounded])
        text += (
            f" No reviewer links {pairs}, even through others, so their difference cannot be told from the "
            "reviewers' leniency: they are not separated. Have the same reviewers rate both to compare them."
        )
    return text


def panel_variance(frame: pd.DataFrame, models: list[str]) -> tuple[float, np.ndarray, int] | None:
    """The reviewers' variance component and, per model, the variance a new panel would add to its mean.

    A model's mean score carries the leniency of the reviewers who happened to rate it. Intervals over
    samples treat this panel as fixed, so they cover the score this panel would give on other samples, not
    the score a new panel would give (61-82% coverage for new panels in the statistician's simulations). With
    reviewers drawn anew, a mean whose ratings came from reviewer r in share w_r gains sigma_R^2 sum_r w_r^2.
    sigma_R^2 is estimated by moments from the model + sample + reviewer fit: the spread of the estimated
    reviewer effects less the part their own estimation noise explains (sigma_e^2 times the trace of their
    centred covariance), floored at 0 (Searle, Casella & McCulloch 1992, ch. 4). Returns sigma_R^2, the
    per-model added variance and the number of reviewers (its degrees of freedom are one fewer). None with
    fewer than 3 reviewers (no spread to measure) or no residual degrees of freedom.
    """
    frame = frame.dropna(subset=["score"])
    if frame["reviewer"].nunique() < 3 or not frame["model_a"].isin(models).any():
        return None
    fit = _fit(frame, models)
    xtx, pinv, beta, resid, size, y = fit.xtx, fit.pinv, fit.beta, fit.resid, fit.size, fit.y
    m_idx, r_idx, n_m, n_r = fit.m_idx, fit.r_idx, len(models), len(fit.reviewers)
    rank = int(np.linalg.matrix_rank(xtx, tol=1e-8 * max(1.0, float(np.abs(xtx).max()))))
    dof = len(y) - int((size > 0).sum()) - rank
    if dof <= 0:
        return None
    sigma_e2 = float(resid @ resid) / dof
    centre = np.eye(n_r) - 1.0 / n_r
    effects = centre @ beta[n_m:]
    noise = sigma_e2 * float(np.trace(centre @ pinv[n_m:, n_m:] @ centre))
    sigma_r2 = max(0.0, (float(effects @ effects) - noise) / (n_r - 1))
    share = np.zeros((n_m, n_r))
    np.add.at(share, (m_idx, r_idx), 1.0)
    share /= np.maximum(share.sum(axis=1, keepdims=True), 1.0)
    return sigma_r2, sigma_r2 * (share**2).sum(axis=1), n_r


def panel_interval(
    point: np.ndarray, lo: np.ndarray, hi: np.ndarray, extra: np.ndarray, reviewers: int, samples: int
) -> tuple[np.ndarray, np.ndarray]:
    """This panel's 95% interval widened for a new panel. The given interval's half-widths are read as 1.96
    standard errors (``samples`` - 1 degrees of freedom) and ``extra`` (:func:`panel_variance`) has
    ``reviewers`` - 1: a handful of reviewers estimate it poorly, so the ends use Student's t at the
    Welch-Satterthwaite degrees of freedom of the sum (Satterthwaite 1946) instead of 1.96. Each end keeps
    its side's sampling part, so the interval keeps its asymmetry; NaN ends stay NaN."""
    z = 1.959964
    extra = np.maximum(extra, 0.0)
    out = []
    for half in (point - lo, hi - point):
        v_s = (half / z) ** 2
        total = v_s + extra
        with np.errstate(divide="ignore", invalid="ignore"):
            df = total**2 / (v_s**2 / max(samples - 1, 1) + extra**2 / max(reviewers - 1, 1))
        q = t_quantile(0.975, np.where(np.isfinite(df) & (df > 0), df, 1e6))
        out.append(q * np.sqrt(total))
    return point - out[0], point + out[1]
