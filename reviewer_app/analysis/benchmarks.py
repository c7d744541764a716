"""Public benchmark scores beside one blind ranking: the two orders, Spearman's rho with a bootstrap CI, and
the pairs worth a sentence.

Spearman's rho is the Pearson correlation of the two sets of ranks (ties get their average rank). Its 95% CI
holds the benchmark scores fixed (published numbers, not a sample) and takes rho against each bootstrap
replicate of the blind scores (the report's resampling of samples, so it depends on the report's seed only),
then the percentiles of those; a round where any of the models has no score is left out. A lower-is-better
benchmark is turned round first, so a positive rho always means the two orders agree.

The words tied / agrees / reversed come from the report's own pair decisions (Holm-adjusted sign-flip tests,
no random draws), never from the bootstrap: they do not change with the seed. A pair is worth a sentence
when the benchmark separates it by ``margin`` points or less, or when the panel separates it the other way.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence

import numpy as np
import pandas as pd

from reviewer_app.analysis.inference import percentile_ci
from reviewer_app.analysis.prepare import OVERALL
from reviewer_app.analysis.ranking import Estimate
from reviewer_app.domain.benchmarks import (
    MIN_MODELS,
    BenchmarkModel,
    BenchmarkPair,
    BenchmarkScores,
    BenchmarkSection,
    Verdict,
)
from reviewer_app.domain.report_rankings import PairRow, RankingRow
from reviewer_app.domain.words import join_names

TOLERANCE = 1e-9  # a gap of exactly the margin (1.2 read as 1.19999...) still counts as within it
_ORDER: dict[Verdict, int] = {"reversed": 0, "tied": 1, "separated": 2, "agrees": 3}


def average_ranks(values: np.ndarray) -> np.ndarray:
    """Ranks (1 = lowest) along the last axis, ties sharing their average rank; NaN stays NaN."""
    frame = pd.DataFrame(np.atleast_2d(np.asarray(values, dtype=float)))
    ranks: np.ndarray = frame.rank(axis=1, method="average").to_numpy()
    return ranks.reshape(np.shape(values))


def spearman(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Spearman's rho between ``x`` (K,) and each row of ``y`` (K,) or (R x K); NaN for a row with a missing
    value or with every value the same (no order to correlate)."""
    y2 = np.atleast_2d(np.asarray(y, dtype=float))
    rx = average_ranks(np.asarray(x, dtype=float))
    ry = average_ranks(y2)
    dx = rx - rx.mean()
    dy = ry - ry.mean(axis=1, keepdims=True)
    den = np.sqrt((dx**2).sum() * (dy**2).sum(axis=1))
    with np.errstate(divide="ignore", invalid="ignore"):
        rho = np.where(den > 0, (dy * dx).sum(axis=1) / np.where(den > 0, den, 1.0), np.nan)
    rho = np.where(np.isfinite(y2).all(axis=1), rho, np.nan)
    out: np.ndarray = rho if np.ndim(y) > 1 else rho[:1]
    return out


def competition_ranks(scores: dict[str, float], higher_is_better: bool) -> dict[str, int]:
    """1 + the number of models with a better score (equal scores share a rank: 1, 2, 2, 4)."""
    sign = 1.0 if higher_is_better else -1.0
    return {m: 1 + sum(sign * v > sign * s for v in scores.values()) for m, s in scores.items()}


def _finite(value: float) -> float | None:
    return float(value) if math.isfinite(value) else None


def _points(x: float) -> str:
    text = f"{abs(x):.3g}"
    return f"{text} point" if text == "1" else f"{text} points"


def _where(scope: str | None) -> str:
    return "across all scenarios" if scope is None else f"on {scope}"


def _sentence(pair: BenchmarkPair, scope: str | None, higher: bool) -> str:
    a, b, where = pair.model_a, pair.model_b, _where(scope)
    if pair.benchmark_diff == 0:
        head = f"The benchmark scores {a} and {b} the same"
        if pair.verdict == "tied":
            return f"{head}; {where} your reviewers do not separate them either: tied."
        return f"{head}; {where} your reviewers rank {a} above {b} (significant): separated."
    ahead = "above" if higher else "ahead of"  # "C 10 points above B" would read as C scoring higher
    head = f"The benchmark puts {a} {_points(pair.benchmark_diff)} {ahead} {b}" + (
        "" if higher else " (lower is better)"
    )
    if pair.verdict == "reversed":
        return f"{head}; {where} your reviewers rank {b} above {a}: reversed (significant)."
    if pair.verdict == "agrees":
        return f"{head}; {where} your reviewers also rank {a} above {b}: agrees (significant)."
    return f"{head}; {where} your reviewers do not separate them: tied."


def _pairs(
    bench: dict[str, float], higher: bool, pairs: Sequence[PairRow], margin: float, ranked: Collection[str]
) -> list[BenchmarkPair]:
    """The pairs worth a sentence, among models with both scores: within ``margin`` or reversed."""
    out = []
    sign = 1.0 if higher else -1.0
    for p in pairs:
        if p.model_a not in bench or p.model_b not in bench or p.model_a not in ranked or p.model_b not in ranked:
            continue
        gap = sign * (bench[p.model_a] - bench[p.model_b])  # > 0: the benchmark agrees with the panel's order
        a, b = (p.model_a, p.model_b) if gap >= 0 else (p.model_b, p.model_a)
        diff = None if p.diff is None else (p.diff if a == p.model_a else -p.diff)
        if gap == 0:
            verdict: Verdict = "separated" if p.separated else "tied"
        elif not p.separated:
            verdict = "tied"
        else:
            verdict = "agrees" if gap > 0 else "reversed"
        if abs(gap) <= margin + TOLERANCE or verdict == "reversed":
            out.append(
                BenchmarkPair(
                    model_a=a, model_b=b, benchmark_diff=abs(gap), blind_diff=diff, p_adjusted=p.p_adjusted,
                    verdict=verdict,
                )
            )  # fmt: skip
    out.sort(key=lambda q: (_ORDER[q.verdict], -q.benchmark_diff if q.verdict == "reversed" else q.benchmark_diff))
    return out


def benchmark_sections(
    scores: BenchmarkScores,
    est: Estimate | None,
    ranking: Sequence[RankingRow],
    pairs: Sequence[PairRow],
    *,
    scope: str | None,
    batch_models: Collection[str],
) -> tuple[BenchmarkSection, ...]:
    """Each benchmark of ``scores`` beside the "overall" ranking of ``scope`` (a scenario; None: across
    scenarios), whose estimate is ``est`` (None when nothing is ranked there) and whose rows and pairs are
    ``ranking`` and ``pairs`` (other dimensions' rows are skipped). ``batch_models``: every model of the
    batch; the file's other models are named in a note and otherwise ignored."""
    rows = [r for r in ranking if r.dimension == OVERALL]
    overall_pairs = [p for p in pairs if p.dimension == OVERALL]
    blind = {r.model: r for r in rows if r.score is not None}
    position = {m: k for k, m in enumerate(est.models)} if est is not None else {}
    out = []
    for name, given in scores.scores.items():
        higher = scores.better_high(name)
        bench = {m: float(v) for m, v in given.items() if m in batch_models}
        notes = []
        outside = [m for m in given if m not in batch_models]
        if outside:
            notes.append(f"Not in this batch, so left out: {join_names(outside)}.")
        both = [r.model for r in rows if r.model in bench and r.model in blind and r.model in position]
        rho = lo = hi = None
        if len(both) < MIN_MODELS:
            notes.append(
                f"Only {len(both)} model(s) have both a {name} score and a blind score {_where(scope)}; "
                f"Spearman's rho needs at least {MIN_MODELS}."
            )
        else:
            assert est is not None
            x = np.array([bench[m] for m in both]) * (1.0 if higher else -1.0)
            cols = [position[m] for m in both]
            rho = _finite(float(spearman(x, est.point[cols])[0]))
            lo_a, hi_a, _ = percentile_ci(spearman(x, est.boot[:, cols])[:, None])
            lo, hi = _finite(float(lo_a[0])), _finite(float(hi_a[0]))
        bench_rank = competition_ranks(bench, higher)
        listed = [r.model for r in rows] + sorted(
            (m for m in bench if m not in {r.model for r in rows}), key=lambda m: bench_rank[m]
        )
        models = tuple(
            BenchmarkModel(
                model=m,
                benchmark_score=bench.get(m),
                benchmark_rank=bench_rank.get(m),
                blind_score=blind[m].score if m in blind else None,
                blind_ci_low=blind[m].ci_low if m in blind else None,
                blind_ci_high=blind[m].ci_high if m in blind else None,
                blind_rank=blind[m].rank if m in blind else None,
                tier=blind[m].tier if m in blind else None,
            )
            for m in listed
        )
        no_score = [r.model for r in rows if r.model not in bench]
        if no_score:
            notes.append(f"No {name} score in the file for {join_names(no_score)}.")
        found = _pairs(bench, higher, overall_pairs, scores.margin, set(both))
        out.append(
            BenchmarkSection(
                benchmark=name,
                higher_is_better=higher,
                margin=scores.margin,
                n_models=len(both),
                spearman=rho,
                ci_low=lo,
                ci_high=hi,
                models=models,
                pairs=tuple(found),
                disagreements=tuple(_sentence(p, scope, higher) for p in found),
                notes=tuple(notes),
            )
        )
    return tuple(out)
