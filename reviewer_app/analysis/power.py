"""Power of the report's own decision, by simulation, and the samples it needs (issue 28, point 5).

A ranking separates two models when the seed-free sign-flip test of their difference of means, Holm-adjusted
over every pair of the ranking (:mod:`.decisions`), is below 5%. How many samples that takes depends on how
many models share the Holm correction and on how noisy a sample's paired difference is, and a textbook
formula (2.8 standard errors, one pair, no correction) undercounts it by 1.5-2.2x. So the power here is
simulated through the report's own code: panels drawn from variance components, tested by
:func:`~reviewer_app.analysis.pair_tests.pair_stats` and adjusted by :func:`~reviewer_app.analysis.inference.holm`
exactly as a ranking is (the approach of Arnold et al. 2011, "Simulation methods to estimate design power",
BMC Med Res Methodol 11:94).

The model of a rating (score units): ``y = mu_model + sample + output + leniency + residual``, each term normal
and independent: a sample's effect common to every model (it cancels in a paired difference), the output's own
quality beyond its model and sample (sample x model), the reviewer's leniency and one rating's noise. Each
output is rated by ``k`` reviewers drawn afresh (so leniency does not cancel between two models' outputs of a
sample: conservative where the same reviewers rate a whole sample). A paired difference then has variance
``2 (output + (reviewer + residual) / k)``: more reviewers per output shrink only the second term.

The design simulated: ``models`` models whose true means are evenly spaced over ``gap`` (best minus worst),
every model's output of every sample rated; power is the chance that the best and worst are separated, in the
right direction, by the report's Holm-corrected test of all pairs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.stats import norm

from reviewer_app.analysis.inference import ALPHA, holm
from reviewer_app.analysis.pair_tests import pair_stats
from reviewer_app.analysis.ranking import Estimate

GRID = 10  # advice is rounded up to a multiple of this many samples
MAX_SAMPLES = 5_000  # beyond this the advice is "more than MAX_SAMPLES" (simulating it would be slow)
ADVICE_SIMS = 2_000  # panels per simulated power in the advice: Monte Carlo error about 0.9 points at 80%
ADVICE_SEED = 20_240_528  # fixed: the advice a lead acts on must not move with the report's seed
_CHUNK_CELLS = 2_000_000  # contrasts x samples per call of the test (memory bound)


@dataclass(frozen=True)
class Components:
    """Variance components of one dimension's ratings, in squared score units (see the module docstring)."""

    sample: float  # a sample's effect common to every model's output (cancels in paired differences)
    output: float  # an output's quality beyond its model's mean and its sample's effect (sample x model)
    reviewer: float  # a reviewer's leniency
    residual: float  # one rating's own noise

    def difference_variance(self, k: float) -> float:
        """Variance of one sample's difference between two models' mean ratings, with ``k`` reviewers each."""
        return 2.0 * (self.output + (self.reviewer + self.residual) / k)


@dataclass(frozen=True)
class PowerEstimate:
    """A simulated power and its Monte Carlo standard error (binomial, over ``sims`` panels)."""

    power: float
    mc_se: float
    sims: int


def variance_components(frame: pd.DataFrame) -> Components:
    """Estimate the components from a pilot's ratings of one dimension (columns ``sample_id``, ``model_a``,
    ``reviewer``, ``score``), by the method of moments, so a lead can plan from a batch already rated.

    * leniency and residual: reviewer effects and output (cell) means fitted together by alternating means
      (the additive model), the residual variance from the fit's residual sum of squares, leniency from the
      spread of the reviewer effects less their estimation noise;
    * output: half the variance over samples of two models' paired differences of cell means, less the
      rating noise in those means, averaged over pairs (works on incomplete designs);
    * sample: the variance of the samples' mean over models, less the output and rating noise in it.

    Negative estimates (noise larger than the component) are set to 0.
    """
    data = frame.dropna(subset=["score"])
    y = data["score"].to_numpy(dtype=float)
    cell_codes, _ = pd.factorize(pd.MultiIndex.from_arrays([data["sample_id"], data["model_a"]]))
    rev_codes, _ = pd.factorize(data["reviewer"])
    n_cells, n_rev = int(cell_codes.max()) + 1, int(rev_codes.max()) + 1
    cell_n = np.bincount(cell_codes, minlength=n_cells).astype(float)
    rev_n = np.bincount(rev_codes, minlength=n_rev).astype(float)
    lenient = np.zeros(n_rev)
    cell = np.bincount(cell_codes, weights=y, minlength=n_cells) / cell_n
    for _ in range(50):  # alternating means: converges to the least-squares additive fit
        cell = np.bincount(cell_codes, weights=y - lenient[rev_codes], minlength=n_cells) / cell_n
        new = np.bincount(rev_codes, weights=y - cell[cell_codes], minlength=n_rev) / rev_n
        new -= new.mean()
        done = np.abs(new - lenient).max() < 1e-10
        lenient = new
        if done:
            break
    rss = float(((y - cell[cell_codes] - lenient[rev_codes]) ** 2).sum())
    dof = len(y) - n_cells - n_rev + 1
    residual = rss / dof if dof > 0 else 0.0
    reviewer = max(0.0, float(lenient.var(ddof=1)) - residual * float(np.mean(1.0 / rev_n))) if n_rev > 1 else 0.0
    noise = reviewer + residual  # of one rating, leniency included (reviewers are drawn afresh per output)

    raw = pd.DataFrame({"s": data["sample_id"].to_numpy(), "m": data["model_a"].to_numpy(), "y": y})
    means = raw.groupby(["s", "m"])["y"].agg(["mean", "count"]).unstack("m")
    cm: np.ndarray = means["mean"].to_numpy(dtype=float)
    cn: np.ndarray = means["count"].to_numpy(dtype=float)
    n_models = int(cm.shape[1])
    halves = []
    for i in range(n_models):
        for j in range(i + 1, n_models):
            both = np.isfinite(cm[:, i]) & np.isfinite(cm[:, j])
            if both.sum() < 3:
                continue
            d = cm[both, i] - cm[both, j]
            halves.append((float(d.var(ddof=1)) - noise * float(np.mean(1 / cn[both, i] + 1 / cn[both, j]))) / 2)
    output = max(0.0, float(np.mean(halves))) if halves else 0.0
    centred = cm - np.nanmean(cm, axis=0)
    per_sample = np.nanmean(centred, axis=1)
    rated = np.isfinite(cm).sum(axis=1)
    within = (output + noise / np.nanmean(np.where(np.isfinite(cm), cn, np.nan), axis=1)) / rated
    sample = max(0.0, float(np.var(per_sample, ddof=1) - np.mean(within))) if len(per_sample) > 1 else 0.0
    return Components(sample=sample, output=output, reviewer=reviewer, residual=residual)


def _panels_separated(
    components: Components, means: np.ndarray, samples: int, k: int, panels: int, rng: np.random.Generator
) -> np.ndarray:
    """Simulate ``panels`` panels at once and return, per panel, whether the report's decision separates the
    first model (the best) from the last (the worst) in the right direction.

    The panels are laid side by side as one :class:`Estimate` of ``panels x M`` models over the same ``samples``
    rows (a model's per-sample totals are its own, so each pair's test sees only its panel), and every
    within-panel pair is tested in one call of the report's :func:`pair_stats`; Holm then runs per panel.
    The k ratings of an output enter only through their total, so it is drawn directly: k times the output's
    mean rating, whose noise has variance (leniency + residual) / k."""
    m = len(means)
    cell_sd = math.sqrt((components.reviewer + components.residual) / k)
    sample_effect = rng.normal(0.0, math.sqrt(components.sample), (samples, panels, 1))
    output = rng.normal(0.0, math.sqrt(components.output), (samples, panels, m))
    noise = rng.normal(0.0, cell_sd, (samples, panels, m))
    cell_mean = (means[None, None, :] + sample_effect + output + noise).reshape(samples, panels * m)
    counts = np.full(cell_mean.shape, float(k))
    sums = cell_mean * counts
    total = sums.sum(axis=0)
    n = counts.sum(axis=0)
    est = Estimate(
        models=[f"{p}:{i}" for p in range(panels) for i in range(m)],
        point=total / n,
        boot=np.zeros((0, panels * m)),
        n=n,
        strata=np.zeros(samples, dtype=int),
        sums=sums,
        counts=counts,
    )
    a, b = np.triu_indices(m, 1)
    offsets = (np.arange(panels) * m)[:, None]
    i, j = (offsets + a[None, :]).ravel(), (offsets + b[None, :]).ravel()
    stats = pair_stats(est, i, j)
    p = np.nan_to_num(stats.p, nan=1.0).reshape(panels, len(a))
    extreme = int(np.flatnonzero((a == 0) & (b == m - 1))[0])
    right_way = stats.direction.reshape(panels, len(a))[:, extreme] > 0
    adjusted = np.array([holm(row)[extreme] for row in p])
    separated: np.ndarray = (adjusted < ALPHA) & right_way
    return separated


def simulated_power(
    components: Components, models: int, samples: int, k: int, gap: float, *, sims: int = ADVICE_SIMS, seed: int = 0
) -> PowerEstimate:
    """The chance that the report separates the best from the worst of ``models`` models whose true means
    span ``gap`` (evenly spaced), with ``samples`` samples and ``k`` reviewers per output: simulated over
    ``sims`` panels through the report's own test and Holm correction (see the module docstring). Deterministic
    for a given ``seed``."""
    if models < 2 or samples < 1 or k < 1 or sims < 1:
        raise ValueError("need at least 2 models, 1 sample, 1 reviewer per output and 1 simulation")
    rng = np.random.default_rng(seed)
    means = np.linspace(gap, 0.0, models)
    per_call = max(1, _CHUNK_CELLS // (samples * models * (models - 1) // 2 or 1))
    hits, done = 0, 0
    while done < sims:
        step = min(per_call, sims - done)
        hits += int(_panels_separated(components, means, samples, k, step, rng).sum())
        done += step
    share = hits / sims
    return PowerEstimate(share, math.sqrt(max(share * (1 - share), 0.25 / sims) / sims), sims)


_power = simulated_power  # samples_needed's ``power`` argument is the target; the function stays reachable


def normal_guess(components: Components, models: int, k: int, gap: float, power: float = 0.8) -> float:
    """The samples a normal approximation with Bonferroni over all pairs asks for: only a starting point for
    the simulated search (Holm gains a little on it, the sign-flip test's self-normalisation loses a little)."""
    pairs = models * (models - 1) // 2
    z = float(norm.isf(ALPHA / (2 * pairs))) + float(norm.ppf(power))
    return components.difference_variance(k) * (z / gap) ** 2


def samples_needed(
    components: Components,
    models: int,
    k: int,
    gap: float,
    power: float = 0.8,
    *,
    sims: int = ADVICE_SIMS,
    seed: int = ADVICE_SEED,
    limit: int = MAX_SAMPLES,
) -> int | None:
    """The fewest samples (a multiple of ``GRID``) at which :func:`simulated_power` reaches ``power`` (0.8: 80%),
    or None beyond ``limit``. The search brackets the answer from :func:`normal_guess` (stepping by 25% until one end
    falls short and the other reaches the target), then bisects on the grid; every step is simulated with the
    same fixed ``seed``, so the answer does not depend on the report's seed. With 2,000 panels per step the
    Monte Carlo error of a power near 80% is about 0.9 points, which moves the answer by about 2%."""
    if gap <= 0 or not math.isfinite(gap):
        raise ValueError("the gap must be a positive number")
    cache: dict[int, bool] = {}

    def reaches(g: int) -> bool:
        if g not in cache:
            cache[g] = _power(components, models, g, k, gap, sims=sims, seed=seed).power >= power
        return cache[g]

    def on_grid(g: float) -> int:
        return max(GRID, math.ceil(g / GRID) * GRID)

    guess = on_grid(normal_guess(components, models, k, gap, power))
    if guess > limit and not reaches(on_grid(limit)):
        return None
    hi = min(guess, on_grid(limit))
    lo = 0  # largest grid value known to fall short (0: none yet)
    while not reaches(hi):
        if hi >= limit:
            return None
        lo, hi = hi, min(on_grid(hi * 1.25), on_grid(limit))
    if lo == 0:
        lo = hi
        while lo > GRID and reaches(lo):
            hi, lo = lo, (on_grid(lo * 0.8) if on_grid(lo * 0.8) < lo else lo - GRID)
        if reaches(lo):
            return lo
    while hi - lo > GRID:
        mid = (lo + hi) // 2 // GRID * GRID
        if reaches(mid):
            hi = mid
        else:
            lo = mid
    return hi
