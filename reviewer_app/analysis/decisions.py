"""Decisions on an :class:`~reviewer_app.analysis.ranking.Estimate`: which pairs are separated, ranks,
tiers and letters, the intervals shown, and the plain-language line.

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
won (or lost) every comparison: its strength is only bounded on one side (see :func:`boundary_bounds`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from reviewer_app.analysis.inference import ALPHA, bt_score_test, cluster_test, holm, percentile_ci
from reviewer_app.analysis.letters import letters_and_tiers, ranks_from
from reviewer_app.analysis.prepare import finite_or_none
from reviewer_app.analysis.ranking import BT_ALPHA, Estimate, average_strength, log_odds_scale, win_vs_average
from reviewer_app.domain.report_rankings import PairRow, RankingRow
from reviewer_app.domain.words import join_names

TEST_MEAN = "difference of means, sign-flip test over samples"
TEST_RANK = "rank-based: probability of superiority, sign-flip test over samples"
TEST_BT = "Bradley-Terry score, sign-flip test over samples"
UNDEFEATED = "won every comparison; its strength is a lower bound"
WINLESS = "lost every comparison; its strength is an upper bound"


@dataclass(frozen=True)
class PairStats:
    """Per tested pair (i, j): the difference i - j with its 95% CI, p-value, and who is ahead (+1: i)."""

    diff: np.ndarray
    ci_low: np.ndarray
    ci_high: np.ndarray
    p: np.ndarray
    direction: np.ndarray
    test: str
    se: np.ndarray | None = None  # analytic standard error of the difference (rating mode)
    win_prob: np.ndarray | None = None
    win_low: np.ndarray | None = None
    win_high: np.ndarray | None = None


@dataclass(frozen=True)
class Ranking:
    """A ranking's rows (best first), its pairs, and ``better[i, j]``: model i significantly above j."""

    rows: list[RankingRow]
    pairs: list[PairRow]
    better: np.ndarray
    models: list[str]
    pair_se: np.ndarray | None = None  # analytic standard errors of the pairs' differences, where there are


def _influence(est: Estimate) -> np.ndarray:
    """Rating mode: each sample's contribution to each model's mean (linearisation of sum / count)."""
    assert est.sums is not None and est.counts is not None
    count = est.counts.sum(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        out: np.ndarray = (est.sums - np.nan_to_num(est.point) * est.counts) / np.where(count > 0, count, 1.0)
    return out


def _null_contributions(est: Estimate, i: np.ndarray, j: np.ndarray) -> np.ndarray:
    """Per pair and sample, the sample's contribution to mean_i - mean_j with both means set to their
    common value (the null): (sums_i - m counts_i) / count_i - (sums_j - m counts_j) / count_j."""
    assert est.sums is not None and est.counts is not None
    total, count = est.sums.sum(axis=0), est.counts.sum(axis=0)
    common = (total[i] + total[j]) / np.maximum(count[i] + count[j], 1e-300)
    a = (est.sums[:, i] - common * est.counts[:, i]) / np.maximum(count[i], 1e-300)
    b = (est.sums[:, j] - common * est.counts[:, j]) / np.maximum(count[j], 1e-300)
    out: np.ndarray = (a - b).T
    return out


def _mean_test(est: Estimate, i: np.ndarray, j: np.ndarray) -> PairStats:
    assert est.counts is not None and est.strata is not None
    infl = _influence(est)
    diff = est.point[i] - est.point[j]
    active = (est.counts[:, i] + est.counts[:, j]).T > 0
    res = cluster_test(diff, (infl[:, i] - infl[:, j]).T, _null_contributions(est, i, j), active, est.strata)
    orient = 1.0 if est.higher_is_better else -1.0
    return PairStats(diff, res.ci_low, res.ci_high, res.p, np.sign(orient * diff), TEST_MEAN, res.se)


def _rank_test(est: Estimate, i: np.ndarray, j: np.ndarray, means: PairStats) -> PairStats:
    assert est.sup is not None and est.sup_valid is not None and est.strata is not None
    assert est.boot_sup_num is not None and est.boot_sup_den is not None
    sup, valid = est.sup[:, i, j], est.sup_valid[:, i, j] > 0
    g = valid.sum(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        prob = np.where(g > 0, (sup * valid).sum(axis=0) / np.maximum(g, 1), np.nan)
        u = np.where(valid, sup / np.maximum(g, 1), 0.0).T
        boot = est.boot_sup_num[:, i, j] / est.boot_sup_den[:, i, j]
    null_u = np.where(valid, (sup - 0.5) / np.maximum(g, 1), 0.0).T
    res = cluster_test(np.nan_to_num(prob, nan=0.5), u, null_u, valid.T, est.strata)
    lo, hi, _ = percentile_ci(boot)
    return PairStats(
        diff=means.diff,
        ci_low=means.ci_low,
        ci_high=means.ci_high,
        p=res.p,
        direction=np.sign(np.nan_to_num(prob, nan=0.5) - 0.5),
        test=TEST_RANK,
        se=means.se,
        win_prob=prob,
        win_low=lo,
        win_high=hi,
    )


def _bt_test(est: Estimate, i: np.ndarray, j: np.ndarray) -> PairStats:
    assert est.sample_wins is not None and est.strata is not None
    res = bt_score_test([est.sample_wins], [(i, j)], [1.0], [est.strata], BT_ALPHA)
    diff = est.point[i] - est.point[j]
    lo, hi = _difference_ci(est, i, j)
    return PairStats(diff, lo, hi, res.p, np.sign(diff), TEST_BT)


def _difference_ci(est: Estimate, i: np.ndarray, j: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Pairwise mode: the bootstrap percentile CI of theta_i - theta_j. Where a strength is bounded on one
    side only, the bootstrap knows nothing: the difference then runs from the lower end of one model's
    interval minus the upper end of the other's (open where either is open)."""
    lo, hi, _ = percentile_ci(est.boot[:, i] - est.boot[:, j])
    m_lo, m_hi, _, notes = intervals(est)
    odd = np.array([notes[a] is not None or notes[b] is not None for a, b in zip(i, j, strict=True)], dtype=bool)
    if odd.any():
        lo = np.where(odd, m_lo[i] - m_hi[j], lo)
        hi = np.where(odd, m_hi[i] - m_lo[j], hi)
    return lo, hi


def _composite_test(est: Estimate, i: np.ndarray, j: np.ndarray) -> PairStats:
    names = est.models
    diff = est.point[i] - est.point[j]
    idx = [
        (np.array([p.models.index(names[a]) for a in i]), np.array([p.models.index(names[b]) for b in j]))
        for p in est.parts
    ]
    if est.parts[0].kind == "bt":
        blocks, strata = [], []
        for part in est.parts:
            assert part.sample_wins is not None and part.strata is not None
            blocks.append(part.sample_wins)
            strata.append(part.strata)
        res = bt_score_test(blocks, idx, est.part_weights, strata, BT_ALPHA)
        lo, hi = _difference_ci(est, i, j)
        return PairStats(diff, lo, hi, res.p, np.sign(diff), TEST_BT)
    u, null_u, active, strata_all = [], [], [], []
    for k, (part, w, (pi, pj)) in enumerate(zip(est.parts, est.part_weights, idx, strict=True)):
        assert part.counts is not None
        infl = _influence(part)
        u.append(w * (infl[:, pi] - infl[:, pj]).T)
        null_u.append(w * _null_contributions(part, pi, pj))
        active.append((part.counts[:, pi] + part.counts[:, pj]).T > 0)
        strata_all.append(np.full(len(part.counts), k))
    res = cluster_test(
        diff,
        np.concatenate(u, axis=1),
        np.concatenate(null_u, axis=1),
        np.concatenate(active, axis=1),
        np.concatenate(strata_all),
    )
    return PairStats(diff, res.ci_low, res.ci_high, res.p, np.sign(diff), TEST_MEAN, res.se)


def pair_stats(est: Estimate, i: np.ndarray, j: np.ndarray) -> PairStats:
    """Test every pair (i[k], j[k]) of ``est``'s models (see the module docstring for the tests)."""
    if est.kind == "bt":
        return _bt_test(est, i, j)
    if est.kind == "composite":
        return _composite_test(est, i, j)
    means = _mean_test(est, i, j)
    return _rank_test(est, i, j, means) if est.ordinal else means


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
    """Each model's 95% interval (NaN: no bound), the Monte Carlo error of its bootstrap ends, and a note."""
    lo, hi, mc = percentile_ci(est.boot)
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


def ranking_rows(est: Estimate, dimension: str) -> Ranking:
    """Test every pair, adjust (Holm), and build the ranking rows (best first) and pair rows."""
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
        p_adj = holm(np.nan_to_num(stats.p, nan=1.0))
        sep = p_adj < ALPHA
        separated[i[sep], j[sep]] = separated[j[sep], i[sep]] = True
        ahead = sep & (stats.direction > 0)
        behind = sep & (stats.direction < 0)
        better[i[ahead], j[ahead]] = True
        better[j[behind], i[behind]] = True
    rank = ranks_from(better)
    final = sorted(ok, key=lambda k: (rank[k], -orient * est.point[k], est.models[k]))
    local = {k: n for n, k in enumerate(ok)}
    letters, tiers = letters_and_tiers([local[k] for k in final], separated[np.ix_(ok, ok)])
    lo, hi, mc, notes = intervals(est)
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
            n=int(round(est.n[k])),
            note=notes[k],
            **{name: finite_or_none(values[k]) for name, values in chance.items()},
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
    scores, the order shown is mostly noise.
    """
    ok = ~np.isnan(est.point)
    if ok.sum() < 2:
        return None
    if n_samples < 2:  # no spread to measure at all: the order shown is one sample's
        return f"{dimension}: only {n_samples} sample, so the order shown is not evidence of any difference."
    if pair_se is not None and np.isfinite(pair_se).any():
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
    need = int(np.ceil(n_samples * (mdd / spread) ** 2))
    return (
        f"{dimension}: {n_samples} samples can separate differences of about {mdd:.2g} {unit} or more, "
        f"but the models here differ by at most {spread:.2g}; treat the order as unsettled "
        f"(roughly {need} samples would be needed)."
    )
