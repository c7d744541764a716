"""Seed-free tests for the ranking decisions, Holm's adjustment, and the Monte Carlo error of bootstrap CIs.

Which models a ranking separates must not depend on the bootstrap seed, so every p-value here is computed
without random draws. Each test writes its statistic as a sum of per-sample contributions (samples are the
independent units: all ratings of a sample stay together), as the null hypothesis sees them:

* a difference of means: each sample's share of mean_i - mean_j with both means set to their common value;
* a probability of superiority: each sample's P(i's rating beats j's) - 1/2;
* Bradley-Terry: each sample's efficient score for theta_i - theta_j at the fit constrained to equality (a
  generalised score test, Boos 1992), which stays valid for a model that won every comparison.

Under the null these contributions are symmetric about 0, so flipping their signs does not change their
distribution: :func:`sign_flip_p` is Fisher's randomisation test of z = sum u / sqrt(sum u^2), enumerated
exactly up to 12 samples and by its normal approximation beyond (conservative in the far tail, where Holm's
thresholds sit; Efron 1969). :func:`holm` adjusts a ranking's p-values for the many pairs.

The bootstrap is kept for intervals; :func:`percentile_ci` also returns the Monte Carlo standard error of each
interval end by the binomial order-statistic approximation, and a model's interval is expanded for few samples
(:func:`expanded_tails`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

ALPHA = 0.05  # family-wise error rate of each ranking's pairs
CONFIDENCE = 0.95


def _lgamma(x: np.ndarray) -> np.ndarray:
    out: np.ndarray = np.vectorize(math.lgamma, otypes=[float])(x)
    return out


def _betacf(a: np.ndarray, b: np.ndarray, x: np.ndarray, iters: int = 300) -> np.ndarray:
    """Continued fraction of the incomplete beta function (modified Lentz), vectorised."""
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c = np.ones_like(x)
    d = 1.0 - qab * x / qap
    d = np.where(np.abs(d) < tiny, tiny, d)
    d = 1.0 / d
    h = d.copy()
    for m in range(1, iters + 1):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = np.where(np.abs(d) < tiny, tiny, d)
        c = 1.0 + aa / c
        c = np.where(np.abs(c) < tiny, tiny, c)
        d = 1.0 / d
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = np.where(np.abs(d) < tiny, tiny, d)
        c = 1.0 + aa / c
        c = np.where(np.abs(c) < tiny, tiny, c)
        d = 1.0 / d
        delta = d * c
        h *= delta
        if np.all(np.abs(delta - 1.0) < 1e-14):
            break
    return h


def betainc(a: np.ndarray, b: np.ndarray, x: np.ndarray) -> np.ndarray:
    """The regularised incomplete beta function I_x(a, b), elementwise (a, b > 0, 0 <= x <= 1)."""
    a, b, x = np.broadcast_arrays(*(np.asarray(v, dtype=float) for v in (a, b, x)))
    out = np.where(x <= 0, 0.0, 1.0)
    inner = (x > 0) & (x < 1)
    if not inner.any():
        return out
    a, b, x = a[inner], b[inner], x[inner]
    log_front = _lgamma(a + b) - _lgamma(a) - _lgamma(b) + a * np.log(x) + b * np.log1p(-x)
    front = np.exp(log_front)
    direct = x < (a + 1.0) / (a + b + 2.0)
    value = np.empty_like(x)
    if direct.any():
        value[direct] = front[direct] * _betacf(a[direct], b[direct], x[direct]) / a[direct]
    flip = ~direct
    if flip.any():
        value[flip] = 1.0 - front[flip] * _betacf(b[flip], a[flip], 1.0 - x[flip]) / b[flip]
    out[inner] = np.clip(value, 0.0, 1.0)
    return out


def t_two_sided_p(t: np.ndarray, df: np.ndarray) -> np.ndarray:
    """Two-sided p-value of Student's t statistic ``t`` with ``df`` degrees of freedom (inf allowed)."""
    t, df = np.broadcast_arrays(np.abs(np.asarray(t, dtype=float)), np.asarray(df, dtype=float))
    out = np.ones_like(t)
    big = np.isinf(df) | (df > 1e7)
    if big.any():
        out[big] = np.vectorize(math.erfc, otypes=[float])(t[big] / math.sqrt(2.0))
    rest = ~big & np.isfinite(t)
    if rest.any():
        out[rest] = betainc(df[rest] / 2.0, np.full(rest.sum(), 0.5), df[rest] / (df[rest] + t[rest] ** 2))
    out[np.isinf(t)] = 0.0
    return out


def t_quantile(q: float, df: np.ndarray) -> np.ndarray:
    """The ``q`` quantile (q > 0.5) of Student's t with ``df`` degrees of freedom, once per distinct df: the
    Cornish-Fisher expansion in the normal quantile (exact to about 1e-10 from 200 degrees of freedom), below
    that polished by Newton steps on the exact CDF, and by bisection where those have not converged."""
    df = np.asarray(df, dtype=float)
    unique, where = np.unique(df, return_inverse=True)
    z = _normal_quantile(q)
    nu = np.where(np.isfinite(unique), np.maximum(unique, 1.0), np.inf)
    with np.errstate(divide="ignore"):
        t = (
            z
            + (z**3 + z) / (4 * nu)
            + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * nu**2)
            + (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / (384 * nu**3)
        )
    few = nu < 200
    if few.any():
        t[few] = _polish_t_quantile(q, t[few], nu[few])
    out: np.ndarray = t[where].reshape(df.shape)
    return out


def _polish_t_quantile(q: float, guess: np.ndarray, nu: np.ndarray) -> np.ndarray:
    log_norm = _lgamma((nu + 1) / 2) - _lgamma(nu / 2) - 0.5 * np.log(nu * math.pi)
    for _ in range(6):
        upper = t_two_sided_p(guess, nu) / 2  # 1 - CDF
        pdf = np.exp(log_norm - (nu + 1) / 2 * np.log1p(guess**2 / nu))
        guess = np.maximum(guess + (upper - (1 - q)) / pdf, 1e-8)
    off = np.abs(t_two_sided_p(guess, nu) / 2 - (1 - q)) > 1e-9 * (1 - q)
    if off.any():
        lo, hi = np.zeros(off.sum()), np.full(off.sum(), 1e4)
        for _ in range(100):
            mid = (lo + hi) / 2
            below = t_two_sided_p(mid, nu[off]) / 2 > 1 - q
            lo, hi = np.where(below, mid, lo), np.where(below, hi, mid)
        guess[off] = (lo + hi) / 2
    return guess


def _normal_quantile(q: float) -> float:
    """Standard normal quantile by bisection on erfc (a scalar, called once per quantile)."""
    lo, hi = -10.0, 10.0
    for _ in range(100):
        mid = (lo + hi) / 2
        if 0.5 * math.erfc(-mid / math.sqrt(2)) < q:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def holm(p: np.ndarray) -> np.ndarray:
    """Holm's step-down adjusted p-values (Holm 1979): family-wise error control under any dependence."""
    p = np.asarray(p, dtype=float)
    m = len(p)
    if m == 0:
        return p
    order = np.argsort(p, kind="stable")
    adjusted = np.maximum.accumulate((m - np.arange(m)) * p[order])
    out = np.empty(m)
    out[order] = np.minimum(adjusted, 1.0)
    return out


@dataclass(frozen=True)
class TestResult:
    """Per contrast: the estimate, its standard error, degrees of freedom, p-value and 95% CI (unadjusted)."""

    estimate: np.ndarray
    se: np.ndarray
    df: np.ndarray
    p: np.ndarray
    ci_low: np.ndarray
    ci_high: np.ndarray


def _stratified_variance(
    u: np.ndarray, active: np.ndarray, strata: np.ndarray, *, centred: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Cluster-robust variance of sum_s u[:, s], samples resampled within strata: per stratum, G/(G-1) x the
    sum of squares about the stratum mean (CR1) if ``centred``, else the plain sum of squares (a score under
    its null has mean 0). Returns variance, Satterthwaite degrees of freedom and the number of active
    samples. ``u`` and ``active`` are (contrasts x samples)."""
    total = np.zeros(u.shape[0])
    df_den = np.zeros(u.shape[0])
    n_active = active.sum(axis=1)
    for h in np.unique(strata):
        cols = strata == h
        uh = np.where(active[:, cols], u[:, cols], 0.0)
        g = active[:, cols].sum(axis=1).astype(float)
        if centred:
            mean = uh.sum(axis=1) / np.maximum(g, 1.0)
            uh = np.where(active[:, cols], uh - mean[:, None], 0.0)
        ss = (uh**2).sum(axis=1)
        # Centred, a stratum of one sample has no spread to estimate; uncentred (the sign-flip test's null
        # variance) it still counts: its u is in the numerator sum, so its u**2 must be in the denominator.
        keep = g > 1 if centred else g > 0
        with np.errstate(divide="ignore", invalid="ignore"):
            v = np.where(keep, (g / (g - 1.0) if centred else 1.0) * ss, 0.0)
            df_den += np.where(g > 1, v**2 / (g - 1.0), 0.0)
        total += v
    with np.errstate(divide="ignore", invalid="ignore"):
        df = np.where(df_den > 0, total**2 / df_den, np.maximum(n_active - 1.0, 1.0))
    return total, np.maximum(df, 1.0), n_active


def cluster_test(
    estimate: np.ndarray, u: np.ndarray, null_u: np.ndarray, active: np.ndarray, strata: np.ndarray
) -> TestResult:
    """Test each contrast against its null, with per-sample contributions (contrasts x samples) over the
    ``active`` samples (those with data for the contrast), scenarios as ``strata``.

    ``u`` are the contributions to the estimator (estimate - truth is about sum_s u_s); they give the 95% CI
    from the cluster-robust variance (CR1, centred within strata) and a Student t reference.
    ``null_u`` are the contributions as the null hypothesis sees them (symmetric about 0 under it, summing
    to the estimate minus the null value); they give the p-value by the sign-flip test of
    :func:`sign_flip_p`."""
    estimate = np.asarray(estimate, dtype=float)
    var, df, n_active = _stratified_variance(u, active, strata, centred=True)
    se = np.where(n_active < 2, np.nan, np.sqrt(var))  # one sample has no spread: no interval, not a point
    total, _, _ = _stratified_variance(null_u, active, strata, centred=False)
    root = np.sqrt(total)
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(root > 0, np.where(active, null_u, 0.0).sum(axis=1) / np.where(root > 0, root, 1.0), 0.0)
    p = sign_flip_p(null_u, active, z, n_active)
    p = np.where(n_active < 2, 1.0, p)  # one sample cannot say anything about a difference
    half = t_quantile(1 - (1 - CONFIDENCE) / 2, df) * se
    return TestResult(estimate, se, df, p, estimate - half, estimate + half)


def percentile_ci(boot: np.ndarray, tails: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Percentile 95% interval of each column of ``boot`` (rounds x K, NaN ignored) and the Monte Carlo
    standard error of its ends: by the binomial order-statistic approximation, the q-quantile of R replicates
    moves by about half the spread between the quantiles q -/+ sqrt(q (1 - q) / R). Reports the larger of
    the two ends' errors. Columns with fewer than 2 finite replicates give NaN. ``tails`` (one per column)
    replaces the 2.5% in each tail, e.g. by :func:`expanded_tails`' smaller ones for few samples."""
    k = boot.shape[1]
    lo, hi, mc = np.full(k, np.nan), np.full(k, np.nan), np.full(k, np.nan)
    if boot.shape[0] == 0 or k == 0:
        return lo, hi, mc
    tail = np.full(k, (1 - CONFIDENCE) / 2) if tails is None else np.asarray(tails, dtype=float)
    finite = np.isfinite(boot)
    complete = finite.all(axis=0)
    for t in np.unique(tail[complete]):
        cols = complete & (tail == t)
        lo[cols], hi[cols], mc[cols] = _quantile_ends(boot[:, cols], float(t))
    for j in np.flatnonzero(~complete):
        col = boot[finite[:, j], j]
        if len(col) >= 2:
            a, b, c = _quantile_ends(col[:, None], float(tail[j]))
            lo[j], hi[j], mc[j] = a[0], b[0], c[0]
    return lo, hi, mc


def expanded_tails(samples: np.ndarray, strata: np.ndarray) -> np.ndarray:
    """Per column, the tail share for an *expanded percentile interval* (Hesterberg 2015): the percentile
    interval at the level whose normal quantile is sqrt(G / (G - H)) x t(0.975, G - H), for G resampled
    samples in H strata (scenarios).

    Why: the plain percentile interval under-covers with few samples (90.7% at 12), for two reasons the
    expansion undoes: the bootstrap's variance of a mean of G clusters is (G - 1) / G of the unbiased one,
    and it uses normal tails where the spread is estimated from G - 1 degrees of freedom (the t reference the
    pair tests use). Exact for a mean of normal data in one stratum (it is then the t interval), it keeps the
    percentile interval's asymmetry, and fades into the plain interval as G grows (a factor 1.17 on the
    width at 12 samples, 1.03 at 100). Columns with G - H < 1 keep the plain 2.5%."""
    g = np.asarray(samples, dtype=float)
    h = np.asarray(strata, dtype=float)
    df = g - h
    out = np.full(g.shape, (1 - CONFIDENCE) / 2)
    ok = df >= 1
    if ok.any():
        z = np.sqrt(g[ok] / df[ok]) * t_quantile(1 - (1 - CONFIDENCE) / 2, df[ok])
        out[ok] = 0.5 * np.vectorize(math.erfc, otypes=[float])(z / math.sqrt(2.0))
    return out


def _quantile_ends(boot: np.ndarray, tail: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r = boot.shape[0]
    step = math.sqrt(tail * (1 - tail) / r)
    levels = [tail - step, tail, tail + step, 1 - tail - step, 1 - tail, 1 - tail + step]
    q = np.quantile(boot, np.clip(levels, 0.0, 1.0), axis=0)
    mc = np.maximum((q[2] - q[0]) / 2, (q[5] - q[3]) / 2)
    return q[1], q[4], mc


def bt_score_test(
    blocks: Sequence[np.ndarray],
    contrasts: Sequence[tuple[np.ndarray, np.ndarray]],
    weights: Sequence[float],
    strata: Sequence[np.ndarray],
    alpha: float,
) -> TestResult:
    """Cluster-robust score tests of Bradley-Terry contrasts sum_b w_b (theta_b[i_b] - theta_b[j_b]) = 0.

    ``blocks`` are per-sample win tensors (samples x M_b x M_b, ties half), one per independent fit (one per
    scenario for a composite, a single one for a ranking); ``contrasts[b]`` the model indices (i_b, j_b) of
    each tested pair in block b; ``weights`` the w_b; ``strata`` each sample's stratum. The penalised
    likelihood is maximised under the null (KKT Newton, all pairs at once) and the contrast's score there is
    studentised by its per-sample contributions (the generalised score test of Boos 1992), uncentred so a
    model that won every comparison cannot make the variance vanish. ``estimate`` holds the statistic T (not a
    difference of strengths); the CI fields are NaN.
    """
    sizes = [blk.shape[1] for blk in blocks]
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(int)
    n_pairs, k = len(contrasts[0][0]), int(offsets[-1])
    a = np.zeros((n_pairs, k))
    rows = np.arange(n_pairs)
    for b, ((ci, cj), w) in enumerate(zip(contrasts, weights, strict=True)):
        a[rows, offsets[b] + ci] += w
        a[rows, offsets[b] + cj] -= w
    totals = [blk.sum(axis=0) for blk in blocks]
    theta = np.zeros((n_pairs, k))
    for _ in range(200):
        grad, hess, _ = _bt_parts(totals, theta, offsets, alpha)
        kkt = np.zeros((n_pairs, k + 1, k + 1))
        kkt[:, :k, :k] = hess
        kkt[:, :k, k] = a
        kkt[:, k, :k] = a
        rhs = np.concatenate([grad, -(a * theta).sum(axis=1, keepdims=True)], axis=1)
        step = np.linalg.solve(kkt, rhs[..., None])[..., 0][:, :k]
        # Damping, as in fit_bradley_terry: a Newton step can overshoot when one model wins nearly always.
        scale = np.minimum(1.0, 2.0 / np.maximum(np.abs(step).max(axis=1, keepdims=True), 1e-300))
        theta = theta + scale * step
        if np.abs(step).max() < 1e-10:
            break
    grad, hess, probs = _bt_parts(totals, theta, offsets, alpha)
    h = np.linalg.solve(hess, a[..., None])[..., 0]  # (P x K): the efficient score direction
    stat = (h * grad).sum(axis=1)
    parts, active, labels = [], [], []
    for b, blk in enumerate(blocks):
        hb = h[:, offsets[b] : offsets[b + 1]]
        n_b = (blk + blk.transpose(0, 2, 1)).reshape(len(blk), -1)
        expected = n_b @ (probs[b] * hb[:, :, None]).reshape(n_pairs, -1).T  # (S x P)
        parts.append((blk.sum(axis=2) @ hb.T - expected).T)
        active.append(np.broadcast_to(n_b.sum(axis=1) > 0, (n_pairs, len(blk))))
        labels.append(np.char.add(f"{b}:", np.asarray(strata[b]).astype(str)))
    u, used = np.concatenate(parts, axis=1), np.concatenate(active, axis=1)
    var, _, n_active = _stratified_variance(u, used, np.concatenate(labels), centred=False)
    se = np.sqrt(var)
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(se > 0, stat / np.where(se > 0, se, 1.0), 0.0)
    p = sign_flip_p(u, used, z, n_active)
    nan = np.full(n_pairs, np.nan)
    return TestResult(stat, se, np.full(n_pairs, np.inf), p, nan, nan)


EXACT_FLIPS = 12  # up to this many samples the sign-flip test is enumerated exactly (2^12 = 4,096 flips)


def sign_flip_p(u: np.ndarray, active: np.ndarray, z: np.ndarray, n_active: np.ndarray) -> np.ndarray:
    """Two-sided p-value of the self-normalised sum z = sum_s u_s / sqrt(sum_s u_s^2) of per-sample
    contributions that are symmetric about 0 under the null: with up to ``EXACT_FLIPS`` samples, exactly,
    over every flip of the samples' signs (Fisher's randomisation test); beyond, by its normal
    approximation (a flip leaves the denominator unchanged, so z has variance 1), never below the
    smallest p-value the flips allow, 2 x 0.5^G."""
    normal = t_two_sided_p(z, np.full(z.shape, np.inf))
    p: np.ndarray = np.minimum(1.0, np.maximum(normal, 2.0 * 0.5 ** n_active.astype(float)))
    for k in np.flatnonzero(n_active <= EXACT_FLIPS):
        values = u[k, active[k]]
        g = len(values)
        if g == 0:
            p[k] = 1.0
            continue
        signs = 1 - 2 * ((np.arange(2**g)[:, None] >> np.arange(g)[None, :]) & 1)
        flipped = np.abs(signs @ values)
        observed = abs(values.sum())
        p[k] = float((flipped >= observed - 1e-9 * max(observed, 1e-300)).mean())
    return p


def _bt_parts(
    totals: Sequence[np.ndarray], theta: np.ndarray, offsets: np.ndarray, alpha: float
) -> tuple[np.ndarray, np.ndarray, list[np.ndarray]]:
    """Gradient (P x K) and negative Hessian (P x K x K) of the penalised log-likelihood summed over blocks,
    and each block's win probabilities (P x M_b x M_b)."""
    n_pairs, k = theta.shape
    grad = np.empty((n_pairs, k))
    hess = np.zeros((n_pairs, k, k))
    probs = []
    for b, w in enumerate(totals):
        lo, hi = offsets[b], offsets[b + 1]
        t = theta[:, lo:hi]
        n = w + w.T
        p = 1.0 / (1.0 + np.exp(-(t[:, :, None] - t[:, None, :])))
        grad[:, lo:hi] = (w - n * p).sum(axis=2) - 2 * alpha * t
        curv = n * p * (1 - p)
        hess[:, lo:hi, lo:hi] = -curv + np.eye(hi - lo) * (curv.sum(axis=2)[:, :, None] + 2 * alpha)
        probs.append(p)
    return grad, hess, probs
