"""How fragile a verdict is: the fewest samples, and reviewers, whose removal undoes it.

A lead's verdicts on a scenario's overall ranking are its separations (A above B: the pair's test, sign-flip
over samples, Holm across the scenario's pairs, :func:`.decisions.pair_decisions`) and, when one model is
separated above all the others, "A is first". For a separation A > B the samples are ordered by how much each
favours A over B (its contribution to the difference: the linearised mean in rating mode, A's net wins over B in
pairwise mode), and the most favourable are dropped, as many as it takes (found by false position on how far
the decision is from turning, :func:`_fewest`), with the report's own decision computed again on what is left,
until A is no longer separated above B. The same for reviewers, by how much each one's answers favour A. "A is
first" falls with its weakest separation.

Guarantee: the count is an upper bound on the true minimum (dropping exactly those undoes the verdict, which is
checked), not the minimum itself: a cleverer subset may need fewer. On small panels the tests compare it with
every subset (brute force). Deterministic: the decisions use no random draws, and ties in the order go by the
samples' order. The approximate-maximum-influence idea is Broderick, Giordano & Meager (2023).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from math import ceil

import numpy as np
import pandas as pd
from scipy.stats import norm

from reviewer_app.analysis.decisions import PairDecisions, pair_decisions
from reviewer_app.analysis.inference import ALPHA
from reviewer_app.analysis.ranking import Estimate, fit_bradley_terry
from reviewer_app.domain.report_fragility import FragilityRow

__all__ = ["SAMPLE_SHARE", "ReviewerParts", "fragile_limit", "fragility_rows", "reviewer_parts", "subset_estimate"]

SAMPLE_SHARE = 0.25  # search up to a quarter of the samples
REVIEWER_SHARE = 0.5


def fragile_limit(samples: int) -> int:
    """Dropping this many samples or fewer undoes a fragile verdict: 2, or 1% of the samples if more."""
    return max(2, ceil(0.01 * samples))


def subset_estimate(est: Estimate, keep: np.ndarray) -> Estimate:
    """``est`` on the samples ``keep`` (a boolean mask) only: what its pair tests read, recomputed (no bootstrap:
    the decisions do not use it)."""
    if est.kind == "bt":
        assert est.sample_wins is not None and est.strata is not None
        wins = est.sample_wins[keep]
        total = wins.sum(axis=0)
        point = fit_bradley_terry(total)
        return replace(est, point=point, boot=point[None], n=(total + total.T).sum(axis=1), wins=total,
                       sample_wins=wins, strata=est.strata[keep])  # fmt: skip
    assert est.sums is not None and est.counts is not None and est.strata is not None
    sums, counts = est.sums[keep], est.counts[keep]
    total, count = sums.sum(axis=0), counts.sum(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        point = np.where(count > 0, total / np.maximum(count, 1), np.nan)
    out = replace(est, point=point, boot=point[None], n=count, sums=sums, counts=counts, strata=est.strata[keep])
    if est.sup is not None and est.sup_valid is not None:
        sup, valid = est.sup[keep], est.sup_valid[keep]
        out = replace(out, sup=sup, sup_valid=valid, boot_sup_num=(sup * valid).sum(axis=0)[None],
                      boot_sup_den=valid.sum(axis=0)[None])  # fmt: skip
    return out


def _margin(decided: PairDecisions, a: int, b: int) -> tuple[bool, float]:
    """Whether ``decided`` (the report's decisions) puts A above B, and by how much: the normal quantile of the
    pair's Holm-adjusted p-value (signed by who is ahead) minus the one at alpha. The boolean is the decision;
    the number only guides the search (it crosses 0 about where the decision turns)."""
    held = bool(decided.better[a, b])
    where = {pair: n for n, pair in enumerate(decided.pairs)}
    n = where.get((a, b), where.get((b, a)))
    if n is None or decided.stats is None:
        return held, 1.0 if held else -_CRITICAL
    ahead = float(decided.stats.direction[n]) * (1.0 if (a, b) in where else -1.0)
    p = min(1.0, max(float(decided.p_adjusted[n]), 1e-300))
    margin = float(norm.isf(p / 2)) * (1.0 if ahead > 0 else -1.0) - _CRITICAL
    return held, (max(margin, 1e-9) if held else min(margin, -1e-9))


_CRITICAL = float(norm.isf(ALPHA / 2))


def _favour(est: Estimate, a: int, b: int) -> np.ndarray:
    """Each sample's contribution to A over B (higher: more favourable to A)."""
    if est.kind == "bt":
        assert est.sample_wins is not None
        net: np.ndarray = est.sample_wins[:, a, b] - est.sample_wins[:, b, a]
        return net
    assert est.sums is not None and est.counts is not None
    count = est.counts.sum(axis=0)
    infl = (est.sums - np.nan_to_num(est.point) * est.counts) / np.where(count > 0, count, 1.0)
    orient = 1.0 if est.higher_is_better else -1.0
    out: np.ndarray = orient * (infl[:, a] - infl[:, b])
    return out


def _fewest(
    order: np.ndarray,
    favour: np.ndarray,
    budget: int,
    start: float,
    margin: Callable[[np.ndarray], tuple[bool, float]],
) -> int | None:
    """The smallest k <= budget found such that dropping ``order[:k]`` undoes the verdict (``margin``: the
    decision on what is left and how far it is from turning, :func:`_margin`; ``start`` that distance with
    nothing dropped); None when even the whole ``budget`` does not (checked first: a clear verdict costs one
    decision). Otherwise the bracket [last k that held, first k that undid it] is narrowed to within 2% of k
    (exact below 100) by false position: the margin is about linear in the favour dropped (``favour``,
    cumulated in ``order``), so the next k is where the line through the bracket's ends crosses 0 (with the
    Illinois halving, so that a curved margin does not hold one end still); when the margin found is within
    what one tolerance's step would change, the k a tolerance beside it closes the bracket. Three steps that
    do not halve the bracket are followed by a bisection, so the search is never much slower than bisection.
    On the benchmark's panel: about 5 decisions a verdict instead of doubling and bisection's 12-16."""
    if budget < 1:
        return None
    held, f_high = margin(order[:budget])
    if held:
        return None
    x = np.concatenate(([0.0], np.cumsum(np.maximum(favour[order[:budget]], 0.0))))
    low, high, f_low = 0, budget, start
    moved, steps, width = 0, 0, budget  # which end moved last (+1 low, -1 high); steps since width was taken
    closing: int | None = None
    while high - low > _tolerance(high):
        if closing is not None:
            k, closing = closing, None
        elif steps < 3 and x[high] > x[low] and f_low > 0 > f_high:
            k = int(np.searchsorted(x, x[low] + (x[high] - x[low]) * f_low / (f_low - f_high)))
        else:
            k, steps, width = (low + high) // 2, 0, high - low
        k = min(max(k, low + 1), high - 1)
        slope = (f_low - f_high) / max(x[high] - x[low], 1e-300)  # margin per unit of favour, before the step
        held, f = margin(order[:k])
        if held:
            f_high = f_high / 2 if moved > 0 else f_high
            low, f_low, moved = k, f, 1
        else:
            f_low = f_low / 2 if moved < 0 else f_low
            high, f_high, moved = k, f, -1
        beside = min(max(k + _tolerance(k) if held else k - _tolerance(k), low + 1), high - 1)
        if abs(f) <= 2 * slope * abs(x[beside] - x[k]):  # near the turn: try to close from the other side
            closing = beside
        steps += 1
        if steps >= 3 and high - low > width // 2:
            steps = 3  # the next step bisects
        elif high - low <= width // 2:
            steps, width = 0, high - low
    return high


def _tolerance(k: int) -> int:
    """How close the bracket is closed: to one sample below 100, to 2% above ("the 141 samples" needs no more:
    it is a bound either way)."""
    return max(1, k // 50)


def fragility_rows(
    est: Estimate,
    samples: Sequence[str],
    *,
    scenario: str,
    dimension: str,
    by_reviewer: ReviewerParts | None = None,
) -> list[FragilityRow]:
    """The verdicts of ``est`` (one scenario's ranking on ``dimension``; ``samples`` its sample ids in order) and
    what undoes each; ``by_reviewer`` (:func:`reviewer_parts`) adds the reviewers that undo it."""
    decided = pair_decisions(est)
    claims = [(a, b) for a in decided.ok for b in decided.ok if decided.better[a, b]]
    n = len(samples)
    budget = max(1, int(SAMPLE_SHARE * n))
    n_reviewers = 0 if by_reviewer is None else len(by_reviewer.names)
    rows = []
    by_pair: dict[tuple[int, int], FragilityRow] = {}
    for a, b in claims:
        favour = _favour(est, a, b)
        order = np.lexsort((np.arange(n), -favour))  # most favourable first; ties by sample order

        def without(drop: np.ndarray, a: int = a, b: int = b) -> tuple[bool, float]:
            keep = np.ones(n, dtype=bool)
            keep[drop] = False
            return _margin(pair_decisions(subset_estimate(est, keep)), a, b)

        k = _fewest(order, favour, budget, _margin(decided, a, b)[1], without)
        dropped = tuple(samples[s] for s in order[:k]) if k else ()
        r_count, r_dropped = (None, ()) if by_reviewer is None else _reviewers(est, decided, by_reviewer, a, b)
        row = _row(est, scenario, dimension, "separation", a, b, n, k, dropped, n_reviewers, r_count, r_dropped)
        by_pair[(a, b)] = row
        rows.append(row)
    top = [a for a in decided.ok if all(decided.better[a, b] for b in decided.ok if b != a)]
    if len(top) == 1 and len(decided.ok) > 1:
        a = top[0]
        mine = [by_pair[(a, b)] for b in decided.ok if b != a]
        weakest = min(mine, key=lambda r: (n + 1 if r.samples_to_undo is None else r.samples_to_undo, r.worse or ""))
        worse = est.models.index(weakest.worse) if weakest.worse else None
        reviewed = [r for r in mine if r.reviewers_to_undo is not None]
        r_best = min(reviewed, key=lambda r: (r.reviewers_to_undo or 0, r.worse or "")) if reviewed else None
        r_count = None if r_best is None else r_best.reviewers_to_undo
        r_names = () if r_best is None else r_best.dropped_reviewers
        first = _row(est, scenario, dimension, "top", a, worse, n, weakest.samples_to_undo, weakest.dropped_samples,
                     n_reviewers, r_count, r_names)  # fmt: skip
        rows.insert(0, first)
    return rows


@dataclass(frozen=True)
class ReviewerParts:
    """Each reviewer's share of an estimate's per-sample data (rating: score totals and counts; pairwise: wins),
    so that the estimate without some reviewers is a subtraction, not a rebuild from the ratings."""

    names: list[str]
    sums: np.ndarray | None  # (R, S, M) rating
    counts: np.ndarray | None
    wins: np.ndarray | None  # (R, S, M, M) pairwise
    favour: np.ndarray  # (R, M, M): how much each reviewer's answers favour i over j


def reviewer_parts(frame: pd.DataFrame, est: Estimate, samples: Sequence[str], *, pairwise: bool) -> ReviewerParts:
    """Split ``est``'s per-sample data by reviewer, from the ``frame`` it was built from (rating: ``sample_id,
    model_a, reviewer, score``; pairwise: ``sample_id, model_a, model_b, reviewer, outcome``)."""
    names = sorted(frame["reviewer"].dropna().unique().tolist())
    r_idx = pd.Index(names).get_indexer(pd.Index(frame["reviewer"]))
    s_idx = pd.Index(list(samples)).get_indexer(pd.Index(frame["sample_id"]))
    pos = {m: k for k, m in enumerate(est.models)}
    a = frame["model_a"].map(pos).to_numpy()
    r, s_, m = len(names), len(samples), len(est.models)
    if pairwise:
        b = frame["model_b"].map(pos).to_numpy()
        outcome = frame["outcome"].to_numpy()
        ok = (r_idx >= 0) & (s_idx >= 0) & ~pd.isna(a) & ~pd.isna(b)
        ai, bi = a[ok].astype(int), b[ok].astype(int)
        score = np.select([outcome[ok] == "a", outcome[ok] == "b"], [1.0, 0.0], default=0.5)
        wins = np.zeros((r, s_, m, m))
        np.add.at(wins, (r_idx[ok], s_idx[ok], ai, bi), score)
        np.add.at(wins, (r_idx[ok], s_idx[ok], bi, ai), 1.0 - score)
        net = wins.sum(axis=1)
        return ReviewerParts(names, None, None, wins, net - net.transpose(0, 2, 1))
    ok = (r_idx >= 0) & (s_idx >= 0) & ~pd.isna(a) & frame["score"].notna().to_numpy()
    ai = a[ok].astype(int)
    flat = (r_idx[ok] * s_ * m) + s_idx[ok] * m + ai
    size = r * s_ * m
    sums = np.bincount(flat, weights=frame["score"].to_numpy(dtype=float)[ok], minlength=size).reshape(r, s_, m)
    counts = np.bincount(flat, minlength=size).reshape(r, s_, m).astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = sums.sum(axis=1) / counts.sum(axis=1)  # (R, M): each reviewer's mean of each model
    gap = np.nan_to_num(mean[:, :, None] - mean[:, None, :])
    orient = 1.0 if est.higher_is_better else -1.0
    return ReviewerParts(names, sums, counts, None, orient * gap)


def _without(est: Estimate, parts: ReviewerParts, drop: Sequence[int]) -> Estimate:
    keep = np.ones(len(est.strata if est.strata is not None else []), dtype=bool)
    if parts.wins is not None:
        assert est.sample_wins is not None
        return subset_estimate(replace(est, sample_wins=est.sample_wins - parts.wins[list(drop)].sum(axis=0)), keep)
    assert est.sums is not None and est.counts is not None and parts.sums is not None and parts.counts is not None
    trimmed = replace(est, sums=est.sums - parts.sums[list(drop)].sum(axis=0),
                      counts=est.counts - parts.counts[list(drop)].sum(axis=0), sup=None, sup_valid=None)  # fmt: skip
    return subset_estimate(trimmed, keep)


def _reviewers(
    est: Estimate, decided: PairDecisions, parts: ReviewerParts, a: int, b: int
) -> tuple[int | None, tuple[str, ...]]:
    if len(parts.names) < 2:
        return None, ()
    favour = parts.favour[:, a, b]
    order = np.lexsort((np.arange(len(parts.names)), -favour))
    budget = max(1, int(REVIEWER_SHARE * len(parts.names)))
    start = _margin(decided, a, b)[1]
    k = _fewest(
        order, favour, budget, start, lambda drop: _margin(pair_decisions(_without(est, parts, drop.tolist())), a, b)
    )
    return k, tuple(parts.names[i] for i in order[:k]) if k else ()


def _row(
    est: Estimate,
    scenario: str,
    dimension: str,
    claim: str,
    a: int,
    b: int | None,
    n: int,
    k: int | None,
    dropped: tuple[str, ...],
    n_reviewers: int,
    r: int | None,
    r_dropped: tuple[str, ...],
) -> FragilityRow:
    better, worse = est.models[a], None if b is None else est.models[b]
    fragile = (k is not None and k <= fragile_limit(n)) or r == 1
    verdict = f"{better} is first" if claim == "top" else f"the verdict {better} > {worse}"
    if k is None:
        by_samples = f"holds even without the {max(1, int(SAMPLE_SHARE * n))} samples most favourable to {better}"
    else:
        plural = "sample" if k == 1 else "samples"
        by_samples = f"holds unless the {k} {plural} most favourable to {better} are dropped (of {n})"
    by_reviewers = ""
    if r is not None:
        who = "reviewer" if r == 1 else "reviewers"
        by_reviewers = f"; dropping {r} {who} of {n_reviewers} ({', '.join(r_dropped)}) undoes it"
    elif n_reviewers >= 2:
        by_reviewers = "; no single reviewer, nor half of them, undoes it"
    where = scenario if dimension == "overall" else f"{scenario} ({dimension})"
    flag = "Fragile: " if fragile else ""
    return FragilityRow(
        scenario=scenario, dimension=dimension, claim=claim, better=better, worse=worse,  # type: ignore[arg-type]
        samples=n, samples_to_undo=k, dropped_samples=dropped, reviewers=n_reviewers, reviewers_to_undo=r,
        dropped_reviewers=r_dropped, fragile=fragile, sentence=f"{where}: {flag}{verdict} {by_samples}{by_reviewers}.",
    )  # fmt: skip
