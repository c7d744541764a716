"""Pairwise comparisons that end without a winner: each model's tie and "both bad" rates, and a tie model.

The ranking's Bradley-Terry fit (``ranking.fit_bradley_terry``) counts a tie or a "both bad" as half a win each
way. That keeps its pair tests simple and valid (equal models have equal expected scores whatever the ties), but
it estimates the log-odds of a model's *expected score* (wins + half its ties), which ties pull towards an even
score: with a third of the comparisons tied, its strengths come out about 0.78x the strengths that generate the
decisive outcomes. And merging "both bad" into ties hides an absolute-quality signal a win rate cannot show.

So this module reports, beside the ranking:

* each model's **tie rate** (tie or both bad) and **both-bad rate**: the share of its comparisons judged so,
  with a 95% cluster-bootstrap percentile interval over samples (the report's bootstrap replicates, a ratio
  of resampled totals), and
* **Davidson's (1970) tie model**, P(i beats j) = pi_i / (pi_i + pi_j + nu sqrt(pi_i pi_j)),
  P(tie) = nu sqrt(pi_i pi_j) / (same), fitted by penalised maximum likelihood with "tie" and "both bad" both
  counted as ties. Its strengths log(pi) are the log-odds of winning a *decisive* comparison (P(i beats j |
  not a tie) = 1 / (1 + exp(-(theta_i - theta_j)))), so ties do not shrink them; nu says how often equal
  models tie (nu / (2 + nu) of their comparisons). Bootstrap percentile CIs refit the model in every round.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from reviewer_app.analysis.inference import percentile_ci
from reviewer_app.analysis.prepare import finite_or_none
from reviewer_app.analysis.ranking import BT_ALPHA, Estimate
from reviewer_app.domain.report_rankings import TieModelRow, TieRow

__all__ = ["LOG_NU_RANGE", "TieFit", "davidson_probabilities", "fit_davidson", "tie_fit", "tie_section"]

LOG_NU_RANGE = (-12.0, 8.0)  # log nu is kept here: no ties (or only ties) would send it to -inf (+inf)


def _pairs(m: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The unordered pairs (i < j) of m models and, per pair, how each outcome's linear predictor loads on the
    parameters (theta_1..theta_m, log nu): i wins theta_i, j wins theta_j, tie log nu + (theta_i + theta_j) / 2."""
    iu, ju = np.triu_indices(m, k=1)
    p = len(iu)
    design = np.zeros((p, 3, m + 1))
    rows = np.arange(p)
    design[rows, 0, iu] = 1.0
    design[rows, 1, ju] = 1.0
    design[rows, 2, iu] = 0.5
    design[rows, 2, ju] = 0.5
    design[:, 2, m] = 1.0
    return iu, ju, design


def davidson_probabilities(theta: np.ndarray, log_nu: float) -> tuple[np.ndarray, np.ndarray]:
    """(M x M) probabilities under Davidson's model that i beats j, and that i and j tie (symmetric)."""
    t = np.asarray(theta, dtype=float)
    half = np.exp((t[:, None] + t[None, :]) / 2)
    denom = np.exp(t)[:, None] + np.exp(t)[None, :] + np.exp(log_nu) * half
    win: np.ndarray = np.exp(t)[:, None] / denom
    tie: np.ndarray = np.exp(log_nu) * half / denom
    np.fill_diagonal(win, 0.0)
    np.fill_diagonal(tie, 0.0)
    return win, tie


def fit_davidson(
    decisive: np.ndarray, draws: np.ndarray, alpha: float = BT_ALPHA, tol: float = 1e-10, max_iter: int = 200
) -> tuple[np.ndarray, np.ndarray]:
    """Davidson's (1970) tie model by penalised maximum likelihood: log-strengths theta and log nu.

    ``decisive`` is (M x M) or a batch (R x M x M) of wins of i over j (ties excluded), ``draws`` the matching
    symmetric counts of ties. Maximises the multinomial log-likelihood of (i wins, j wins, tie) over the pairs
    minus ``alpha * sum theta^2`` (the ranking's penalty, as in choix: it keeps an undefeated model finite and
    makes the strengths sum to 0; nu is not penalised but kept within ``LOG_NU_RANGE``). Each pair is a
    three-category logit with predictors (theta_i, theta_j, log nu + (theta_i + theta_j) / 2), so the gradient
    is X'(y - n p) and the information X'(diag p - p p')X n: damped Newton, batched. Returns theta ((M,) or
    (R x M)) and log nu (scalar array or (R,)).
    """
    w = np.asarray(decisive, dtype=float)
    d = np.asarray(draws, dtype=float)
    single = w.ndim == 2
    if single:
        w, d = w[None], d[None]
    r, m = w.shape[0], w.shape[-1]
    iu, ju, design = _pairs(m)
    y = np.stack([w[:, iu, ju], w[:, ju, iu], d[:, iu, ju]], axis=2)  # (R x P x 3)
    n = y.sum(axis=2)
    params = np.zeros((r, m + 1))
    params[:, m] = np.log(np.clip(d[:, iu, ju].sum(axis=1), 0.5, None) / np.clip(w.sum(axis=(1, 2)), 0.5, None))
    params[:, m] = np.clip(params[:, m] + np.log(2.0), *LOG_NU_RANGE)  # equal strengths: tie share nu / (2 + nu)
    ridge = np.zeros(m + 1)
    ridge[:m] = 2 * alpha
    for _ in range(max_iter):
        eta = np.einsum("pck,rk->rpc", design, params)
        eta -= eta.max(axis=2, keepdims=True)
        prob = np.exp(eta)
        prob /= prob.sum(axis=2, keepdims=True)
        grad = np.einsum("rpc,pck->rk", y - n[:, :, None] * prob, design) - ridge * params
        cov = n[:, :, None, None] * (prob[:, :, :, None] * np.eye(3) - prob[:, :, :, None] * prob[:, :, None, :])
        info = np.einsum("pck,rpcd,pdl->rkl", design, cov, design, optimize=True) + np.diag(ridge)
        info[:, m, m] += 1e-9  # no ties at all: the nu direction is flat; keep the system solvable
        step = np.linalg.solve(info, grad[..., None])[..., 0]
        # Damping, as in fit_bradley_terry: a Newton step can overshoot when one model wins nearly always.
        scale = np.minimum(1.0, 2.0 / np.maximum(np.abs(step).max(axis=1, keepdims=True), 1e-300))
        new = params + scale * step
        new[:, m] = np.clip(new[:, m], *LOG_NU_RANGE)
        moved = np.abs(new - params).max()
        params = new
        if moved < tol:
            break
    theta, log_nu = params[:, :m], params[:, m]
    return (theta[0], log_nu[0]) if single else (theta, log_nu)


def _rate(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        out: np.ndarray = np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)
    return out


@dataclass(frozen=True)
class TieFit:
    """Davidson's model fitted to one ranking's comparisons: at the data and in every bootstrap replicate."""

    decisive: np.ndarray  # (M x M) wins of i over j, ties left out
    theta: np.ndarray  # (M,) log-strengths
    log_nu: float
    boot_theta: np.ndarray  # (rounds x M)
    boot_log_nu: np.ndarray  # (rounds,)


def tie_fit(est: Estimate) -> TieFit:
    """Fit Davidson's model to a pairwise estimate's decisive wins (its half-win totals minus half its draws)
    and draws, and refit it in each of its bootstrap replicates."""
    assert est.wins is not None and est.boot_wins is not None
    assert est.draws is not None and est.boot_draws is not None
    decisive = est.wins - est.draws / 2
    theta, log_nu = fit_davidson(decisive, est.draws)
    boot_theta, boot_log_nu = fit_davidson(est.boot_wins - est.boot_draws / 2, est.boot_draws)
    return TieFit(decisive, theta, float(log_nu), boot_theta, np.asarray(boot_log_nu, dtype=float))


def tie_section(est: Estimate, dimension: str) -> tuple[list[TieRow], TieModelRow]:
    """The report's tie rows of one pairwise ranking (:func:`tie_rows`) and its tie-model row
    (:func:`tie_model_row`), from one fit of Davidson's model."""
    fit = tie_fit(est)
    return tie_rows(est, dimension, fit), tie_model_row(est, dimension, fit)


def tie_rows(est: Estimate, dimension: str, fit: TieFit) -> list[TieRow]:
    """Each model's tie and both-bad rates with their 95% CIs, and its Davidson strength with its 95% CI.

    A rate is the share of the model's comparisons (against any model of ``est``) that ended so; its interval
    is the percentile interval of the same ratio over the cluster-bootstrap replicates of samples. A Davidson
    interval end is None where the data give no bound: a model that never lost (won) a decisive comparison has
    no upper (lower) end, as in the ranking."""
    assert est.draws is not None and est.both_bad is not None and est.wins is not None
    assert est.boot_draws is not None and est.boot_both_bad is not None and est.boot_wins is not None
    n = (est.wins + est.wins.T).sum(axis=1)
    boot_n = (est.boot_wins + est.boot_wins.transpose(0, 2, 1)).sum(axis=2)
    tie_rate = _rate(est.draws.sum(axis=1), n)
    bad_rate = _rate(est.both_bad.sum(axis=1), n)
    tie_lo, tie_hi, _ = percentile_ci(_rate(est.boot_draws.sum(axis=2), boot_n))
    bad_lo, bad_hi, _ = percentile_ci(_rate(est.boot_both_bad.sum(axis=2), boot_n))
    theta = fit.theta
    th_lo, th_hi, _ = percentile_ci(fit.boot_theta)
    won, lost = fit.decisive.sum(axis=1) > 0, fit.decisive.sum(axis=0) > 0
    rows = []
    for k, model in enumerate(est.models):
        if n[k] <= 0:
            continue
        rows.append(
            TieRow(
                dimension=dimension,
                model=model,
                n=int(round(n[k])),
                tie_rate=finite_or_none(tie_rate[k]),
                tie_ci_low=finite_or_none(tie_lo[k]),
                tie_ci_high=finite_or_none(tie_hi[k]),
                both_bad_rate=finite_or_none(bad_rate[k]),
                both_bad_ci_low=finite_or_none(bad_lo[k]),
                both_bad_ci_high=finite_or_none(bad_hi[k]),
                davidson=finite_or_none(theta[k]),
                davidson_ci_low=finite_or_none(th_lo[k]) if won[k] else None,
                davidson_ci_high=finite_or_none(th_hi[k]) if lost[k] else None,
            )
        )
    return rows


def tie_model_row(est: Estimate, dimension: str, fit: TieFit) -> TieModelRow:
    """The ranking's tie parameter nu with its 95% CI, the share of comparisons without a winner, and how much
    the ranking's (ties-half) strengths are shrunk: the least-squares slope through 0 of its strengths on
    Davidson's (1 = not shrunk; about 0.78 with a third of comparisons tied)."""
    assert est.draws is not None and est.wins is not None
    n = float(np.triu(est.wins + est.wins.T, k=1).sum())
    draws = float(np.triu(est.draws, k=1).sum())
    theta, log_nu = fit.theta, fit.log_nu
    lo, hi, _ = percentile_ci(np.exp(fit.boot_log_nu)[:, None])
    ranked = est.n > 0
    centred = theta[ranked] - theta[ranked].mean()
    spread = float((centred**2).sum())
    bt = est.point[ranked] - est.point[ranked].mean()
    ratio = float((bt * centred).sum() / spread) if spread > 1e-12 else None
    note = None
    if draws == 0:
        note = "no ties or both-bad answers: Davidson's model is Bradley-Terry's, nu is 0"
    elif draws >= n:
        note = "every comparison ended without a winner: no strengths to estimate"
    at_edge = not LOG_NU_RANGE[0] < log_nu < LOG_NU_RANGE[1]
    return TieModelRow(
        dimension=dimension,
        n=int(round(n)),
        tie_share=finite_or_none(draws / n) if n else None,
        nu=None if at_edge else finite_or_none(float(np.exp(log_nu))),
        nu_ci_low=None if at_edge else finite_or_none(lo[0]),
        nu_ci_high=None if at_edge else finite_or_none(hi[0]),
        shrinkage=finite_or_none(ratio) if ratio is not None and note is None else None,
        note=note,
    )
