"""Decisions on an :class:`~reviewer_app.analysis.ranking.Estimate`: which pairs are separated, ranks,
tiers and letters, the intervals shown, and the plain-language line. The pair tests are in ``pair_tests``,
each model's interval in ``model_intervals``; this module decides on them.

Every pair of models in a ranking is tested without random draws (``inference``: a sign-flip test over
samples), so no decision depends on the bootstrap seed, and the p-values are Holm-adjusted over all pairs of
the ranking (one scenario and dimension), which keeps the chance of separating any two equal models at 5% or
less. A pair is separated when its adjusted p-value is below 0.05. What is tested:

* rating mode: the difference of the two mean scores;
* ordinal dimensions: the probability that one model's rating beats the other's on the same sample (ties
  half), against 1/2; the means are still shown as scores;
* pairwise mode: the Bradley-Terry strengths (score test at the fit constrained to equal strengths);
* the composite: the weighted sum of the scenarios' differences (each scenario a stratum).

Intervals stay percentile cluster-bootstrap intervals, each with its Monte Carlo error, except for a model that
won (or lost) every comparison: its strength is only bounded on one side (see
:func:`~reviewer_app.analysis.model_intervals.boundary_bounds`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from reviewer_app.analysis.inference import ALPHA, holm
from reviewer_app.analysis.letters import letters_and_tiers, ranks_from
from reviewer_app.analysis.model_intervals import best_shares, intervals
from reviewer_app.analysis.pair_tests import PairStats, holm_interval, pair_stats
from reviewer_app.analysis.power import Components, normal_guess, samples_needed
from reviewer_app.analysis.prepare import finite_or_none
from reviewer_app.analysis.ranking import Estimate, average_strength, log_odds_scale, win_vs_average
from reviewer_app.analysis.reviewer_effects import panel_interval
from reviewer_app.domain.report_rankings import PairRow, RankingRow
from reviewer_app.domain.words import join_names


@dataclass(frozen=True)
class Ranking:
    """A ranking's rows (best first), its pairs, and ``better[i, j]``: model i significantly above j."""

    rows: list[RankingRow]
    pairs: list[PairRow]
    better: np.ndarray
    models: list[str]
    pair_se: np.ndarray | None = None  # analytic standard errors of the pairs' differences, where there are


@dataclass(frozen=True)
class PairDecisions:
    """Every pair of ``est``'s ranked models tested and Holm-adjusted: ``better[i, j]`` when i is separated
    above j (``separated`` either way round), the models ranked (``ok``), the pairs in score order."""

    ok: list[int]
    pairs: list[tuple[int, int]]
    stats: PairStats | None
    p_adjusted: np.ndarray
    better: np.ndarray
    separated: np.ndarray


def pair_decisions(est: Estimate) -> PairDecisions:
    """The report's separations for ``est`` alone (no intervals): what :func:`ranking_rows` ranks by, and what
    the fragility of a verdict is computed against (``analysis.fragility``)."""
    m = len(est.models)
    orient = 1.0 if est.higher_is_better else -1.0
    ok = [k for k in range(m) if np.isfinite(est.point[k]) and est.n[k] > 0]
    by_score = sorted(ok, key=lambda k: (-orient * est.point[k], est.models[k]))
    pairs = [(by_score[a], by_score[b]) for a in range(len(by_score)) for b in range(a + 1, len(by_score))]
    better = np.zeros((m, m), dtype=bool)
    separated = np.zeros((m, m), dtype=bool)
    stats: PairStats | None = None
    p_adj = np.zeros(0)
    if pairs:
        i, j = (np.array(x, dtype=int) for x in zip(*pairs, strict=True))
        stats = pair_stats(est, i, j)
        if est.confounded is not None:  # a difference the design cannot tell from reviewer leniency: no evidence
            stats = replace(stats, p=np.where(est.confounded[i, j], 1.0, stats.p))
        p_adj = holm(np.nan_to_num(stats.p, nan=1.0))
        sep = p_adj < ALPHA
        separated[i[sep], j[sep]] = separated[j[sep], i[sep]] = True
        ahead = sep & (stats.direction > 0)
        behind = sep & (stats.direction < 0)
        better[i[ahead], j[ahead]] = True
        better[j[behind], i[behind]] = True
    return PairDecisions(ok, pairs, stats, p_adj, better, separated)


def ranking_rows(est: Estimate, dimension: str) -> Ranking:
    """Test every pair, adjust (Holm), and build the ranking rows (best first) and pair rows."""
    orient = 1.0 if est.higher_is_better else -1.0
    decided = pair_decisions(est)
    ok, pairs, stats, p_adj = decided.ok, decided.pairs, decided.stats, decided.p_adjusted
    better, separated = decided.better, decided.separated
    rank = ranks_from(better)
    final = sorted(ok, key=lambda k: (rank[k], -orient * est.point[k], est.models[k]))
    local = {k: n for n, k in enumerate(ok)}
    letters, tiers = letters_and_tiers([local[k] for k in final], separated[np.ix_(ok, ok)])
    lo, hi, mc, notes = intervals(est)
    panel: dict[str, np.ndarray] = {}
    if est.panel_var is not None:  # the score a new panel of reviewers would give (analysis.reviewer_effects)
        samples = len(est.sums) if est.sums is not None else 0
        bounds = panel_interval(est.point, lo, hi, est.panel_var, est.panel_reviewers, samples)
        panel["panel_ci_low"], panel["panel_ci_high"] = bounds
    p_best = best_shares(est, ok)
    if est.confounded is not None and est.confounded.any():
        # Scores linked only through reviewer leniency are one solution among many: no "best" among them, and
        # each such model says which others it cannot be compared with.
        p_best = np.full(len(est.models), np.nan)
        for k in np.flatnonzero(est.confounded.any(axis=1)):
            if notes[k] is None:
                others = [est.models[j] for j in np.flatnonzero(est.confounded[k])]
                notes[k] = f"no reviewer links it with {join_names(others)}: not compared with them"
    chance: dict[str, np.ndarray] = {}
    if log_odds_scale(est):  # the strengths in words: the chance to beat a model of average strength
        average = average_strength(est)
        ends = {"win_vs_average": est.point, "win_vs_average_ci_low": lo, "win_vs_average_ci_high": hi}
        chance = {name: win_vs_average(values, average) for name, values in ends.items()}
    rows = [
        RankingRow(
            model=est.models[k],
            dimension=dimension,
            score=finite_or_none(est.point[k]),
            ci_low=finite_or_none(lo[k]),
            ci_high=finite_or_none(hi[k]),
            ci_mc_se=finite_or_none(mc[k]),
            rank=int(rank[k]),
            tier=int(tiers[local[k]]),
            letters=letters[local[k]],
            p_best=finite_or_none(p_best[k]),
            n=int(round(est.n[k])),
            note=notes[k],
            **{name: finite_or_none(values[k]) for name, values in chance.items()},
            **{name: finite_or_none(values[k]) for name, values in panel.items()},
        )
        for k in final
    ]
    pair_rows = _pair_rows(est, dimension, pairs, stats, p_adj, final) if stats is not None else []
    return Ranking(rows, pair_rows, better, est.models, None if stats is None else stats.se)


def _pair_rows(
    est: Estimate,
    dimension: str,
    pairs: Sequence[tuple[int, int]],
    stats: PairStats,
    p_adj: np.ndarray,
    final: list[int],
) -> list[PairRow]:
    """The pairs in the order of the ranking (model_a placed above model_b)."""
    where = {pair: n for n, pair in enumerate(pairs)}
    place = {k: n for n, k in enumerate(final)}
    out = []
    for a, b in sorted(pairs, key=lambda ab: sorted((place[ab[0]], place[ab[1]]))):
        n = where[(a, b)]
        flip = place[a] > place[b]
        first, second = (b, a) if flip else (a, b)
        sign = -1.0 if flip else 1.0
        lo, hi = stats.ci_low[n], stats.ci_high[n]
        holm_lo, holm_hi = holm_interval(sign * float(stats.diff[n]), float(stats.p[n]), float(p_adj[n]), ALPHA)
        extra = {}
        if stats.win_prob is not None and stats.win_low is not None and stats.win_high is not None:
            wp, wl, wh = stats.win_prob[n], stats.win_low[n], stats.win_high[n]
            wp, wl, wh = (1 - wp, 1 - wh, 1 - wl) if flip else (wp, wl, wh)
            extra = {
                "win_prob": finite_or_none(wp),
                "win_prob_ci_low": finite_or_none(wl),
                "win_prob_ci_high": finite_or_none(wh),
            }
        out.append(
            PairRow(
                dimension=dimension,
                model_a=est.models[first],
                model_b=est.models[second],
                diff=finite_or_none(sign * stats.diff[n]),
                ci_low=finite_or_none(-hi if flip else lo),
                ci_high=finite_or_none(-lo if flip else hi),
                holm_ci_low=finite_or_none(holm_lo),
                holm_ci_high=finite_or_none(holm_hi),
                p_value=finite_or_none(stats.p[n]),
                p_adjusted=finite_or_none(p_adj[n]),
                separated=bool(p_adj[n] < ALPHA),
                test=stats.test,
                **extra,
            )
        )
    return out


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
                parts.append(f"{join_names(names)} are {'tied' if len(names) == 2 else 'all tied'} on {dimension}")
            elif len(names) > 1:
                parts.append(f"{join_names(names)} are tied on {dimension}")
            else:
                parts.append(f"{names[0]} leads on {dimension}")
        else:
            beaten_by = [a for a in above if all(better[idx[a], idx[n]] for n in names)]
            verb = "is" if len(names) == 1 else "are"
            if len(beaten_by) == len(above):
                target = "both" if len(above) == 2 else ("all of them" if len(above) > 2 else above[0])
            elif beaten_by:
                target = (
                    join_names(beaten_by)
                    + f" (not clearly behind {join_names([a for a in above if a not in beaten_by])})"
                )
            else:
                target = "no one clearly (letters overlap: see the table)"
            parts.append(f"{join_names(names)} {verb} behind {target}")
        above += names
    return "; ".join(parts) + "."


def separation_warning(
    est: Estimate, n_samples: int, dimension: str, unit: str, pair_se: np.ndarray | None = None
) -> str | None:
    """Warn when the samples are too few to separate differences as large as the observed spread.

    The smallest difference a paired comparison separates with 80% power at the 5% level is about
    2.8 standard errors of the difference (the analytic ones in ``pair_se`` where given, as in rating mode,
    so the warning does not depend on the seed; else bootstrap ones); if that exceeds max - min of the
    scores, the order shown is mostly noise. How many samples would settle it is not 2.8 standard errors,
    though: the report's decision is Holm-corrected over every pair, which that rule ignores (it undercounts
    by 1.5-2.2x, issue 28). In rating mode the number is simulated through the report's own test
    (:func:`~reviewer_app.analysis.power.samples_needed`), from the variance of a sample's paired difference
    measured here, for a gap as large as the observed spread; elsewhere (pairwise mode) it stays the
    normal-approximation figure and says so.
    """
    ok = ~np.isnan(est.point)
    if ok.sum() < 2:
        return None
    if n_samples < 2:  # no spread to measure at all: the order shown is one sample's
        return f"{dimension}: only {n_samples} sample, so the order shown is not evidence of any difference."
    analytic = pair_se is not None and np.isfinite(pair_se).any()
    if analytic:
        assert pair_se is not None
        se = pair_se
    else:
        boot = est.boot[:, ok]
        diffs = boot[:, :, None] - boot[:, None, :]
        iu = np.triu_indices(boot.shape[1], 1)
        with np.errstate(invalid="ignore"):
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
    head = (
        f"{dimension}: {n_samples} samples can separate differences of about {mdd:.2g} {unit} or more, "
        f"but the models here differ by at most {spread:.2g}; treat the order as unsettled"
    )
    if not (analytic and est.kind == "mean"):
        need = int(np.ceil(n_samples * (mdd / spread) ** 2))
        return f"{head} (roughly {need} samples would be needed, by a normal approximation that ignores Holm)."
    advice = advice_samples(n_samples * float(np.nanmedian(se)) ** 2, int(ok.sum()), spread)
    amount = f"more than {REPORT_LIMIT:,}" if advice is None else f"roughly {advice:,}"
    return (
        f"{head} ({amount} samples would be needed for 80% power to separate a gap as large as the largest "
        f"observed one, with the report's Holm-corrected test)."
    )


REPORT_LIMIT = 2_000  # the report simulates its advice up to this many samples; beyond it says "more than"
REPORT_SIMS = 500  # panels per simulated step in the report: the advice moves by about 3% at most with them


def advice_samples(difference_variance: float, models: int, gap: float) -> int | None:
    """The samples the report advises (None: more than ``REPORT_LIMIT``): simulated through the report's own
    Holm-corrected test for ``models`` models spanning ``gap``, a sample's paired difference having the
    variance measured at the batch's own reviewers per output (so k = 1 with all of it in one component).
    Only a guess far beyond the limit skips the simulation. Fewer panels per step than a plan uses, to keep
    the report fast; the seed is fixed, so the advice does not move with the report's seed."""
    components = Components(sample=0.0, output=difference_variance / 2, reviewer=0.0, residual=0.0)
    if normal_guess(components, models, 1, gap) * 0.8 > REPORT_LIMIT:
        return None
    return samples_needed(components, models, 1, gap, sims=REPORT_SIMS, limit=REPORT_LIMIT)
