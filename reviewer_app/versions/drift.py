"""Behaviour drift without reviewers: how a new version's outputs differ from its baseline's, per scenario.

Available the moment outputs are loaded, before anyone reviews. Input frames hold one row per output with
the columns of ``storage.repositories.frames.outputs_frame``: ``scenario``, ``sample_id``, ``model``,
``repeat``, optionally ``excluded`` (left out when True), ``output_words``, and the metadata columns
``latency_ms``, ``ttft_ms`` and ``finish_reason``, plus ``text`` (the output itself), which refusals and the
identical share need. A metric whose column is missing is left out; a missing value leaves that output out of
that metric only. Rows flagged as anchors (``is_anchor``, see ``compare``) are not outputs of any model and are
left out. Models pair as in ``compare`` (:class:`~reviewer_app.versions.compare.ModelPair`).

Metrics (``baseline`` and ``candidate`` are the values for the baseline model and the new one; ``change`` is
candidate - baseline, in the metric's units):

=====================  ==========================================  ============================================
metric                 value                                       flag when (:class:`DriftThresholds`)
=====================  ==========================================  ============================================
length_words_median    median words (``output_words``, or          changed by >= 10% and Mann-Whitney p < 0.01
                       whitespace-separated words of ``text``)
length_words_p95       95th percentile of words                    changed by >= 25%, >= 20 outputs each side
latency_ms_median      median latency                              changed by >= 25% and Mann-Whitney p < 0.01
latency_ms_p95         95th percentile of latency                  changed by >= 50%, >= 20 outputs each side
ttft_ms_median/_p95    time to first token, as latency             as latency
refusal_rate           share of outputs that refuse (see below)    changed by >= 2 points and Fisher p < 0.01
truncation_rate        share with ``finish_reason`` == "length"    changed by >= 2 points and Fisher p < 0.01
identical_share        candidate: share of its outputs equal to    dropped by >= 10 points below the baseline's
                       the baseline's for the same sample and      own reproducibility (never without repeats)
                       repeat; baseline: share of pairs of the
                       baseline's repeats of a sample that are
                       equal (None without repeats)
check_pass_rate:NAME   share of outputs passing the automatic      changed by >= 2 points and Fisher p < 0.01
                       check NAME (``all``: every check), where
                       both batches ran it (``checks_frame``)
=====================  ==========================================  ============================================

Tests count samples, not outputs: repeats of one sample are not independent. Length, latency and time to
first token are compared by a two-sided Mann-Whitney test over per-sample means; rates by Fisher's exact test
over one output per sample (its lowest repeat with a value). Percentiles are numpy's default (linear
interpolation). The flags are a screen, not decisions: many metrics are looked at and the p-values are not
adjusted for that; the verdicts on quality are in ``compare``.

Refusals are ``refusals``'s: an output refuses when one of its phrases (English, and the rubric's
``refusal_phrases``) appears near its start.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from reviewer_app.analysis.prepare import ANCHOR, as_python_strings, finite_or_none
from reviewer_app.analysis.two_sample import fisher_exact, mann_whitney
from reviewer_app.domain.versions import DriftRow, ModelPair
from reviewer_app.versions.refusals import refusals

METRICS = (
    "length_words_median",
    "length_words_p95",
    "latency_ms_median",
    "latency_ms_p95",
    "ttft_ms_median",
    "ttft_ms_p95",
    "refusal_rate",
    "truncation_rate",
    "identical_share",
)


@dataclass(frozen=True)
class DriftThresholds:
    """When a change is flagged (see the module docstring's table)."""

    length_median: float = 0.10  # relative change of the median
    length_p95: float = 0.25
    timing_median: float = 0.25  # latency and time to first token
    timing_p95: float = 0.50
    rate_points: float = 0.02  # refusal and truncation rates, absolute
    identical_drop: float = 0.10  # identical share below the baseline's own reproducibility
    alpha: float = 0.01  # p-value below which a change counts as more than chance
    min_outputs_p95: int = 20  # a 95th percentile of fewer outputs is not flagged


def drift_rows(
    baseline: pd.DataFrame,
    candidate: pd.DataFrame,
    pairs: Sequence[ModelPair],
    *,
    refusal_phrases: Iterable[str] = (),
    thresholds: DriftThresholds | None = None,
    checks: tuple[pd.DataFrame, pd.DataFrame] | None = None,
) -> list[DriftRow]:
    """Every metric of every pair in every scenario where both models have outputs, in the order of
    :data:`METRICS` (see the module docstring). ``refusal_phrases`` extend the default list; ``thresholds``
    default to :class:`DriftThresholds`'s; ``checks`` are the two batches' ``checks_frame``s (the pass rates
    of the automatic checks both ran come last in each pair's rows)."""
    thresholds = thresholds or DriftThresholds()
    extra = tuple(refusal_phrases)
    base, cand = _usable(baseline, extra), _usable(candidate, extra)
    b_parts = {(str(s), str(m)): part for (s, m), part in base.groupby(["scenario", "model"], sort=False)}
    c_parts = {(str(s), str(m)): part for (s, m), part in cand.groupby(["scenario", "model"], sort=False)}
    rows: list[DriftRow] = []
    # A check's pass rate needs results on both sides: without, skip the per-pair filtering of empty frames.
    checked = checks is not None and len(checks[0]) > 0 and len(checks[1]) > 0
    for scen in sorted({s for s, _ in b_parts} & {s for s, _ in c_parts}):
        for pair in pairs:
            b, c = b_parts.get((scen, pair.baseline)), c_parts.get((scen, pair.candidate))
            if b is not None and c is not None:
                rows += _pair_rows(scen, pair, b, c, thresholds)
                if checked and checks is not None:
                    rows += _check_rows(scen, pair, checks, thresholds)
    return rows


def _check_rows(
    scen: str, pair: ModelPair, checks: tuple[pd.DataFrame, pd.DataFrame], th: DriftThresholds
) -> list[DriftRow]:
    """The pass rate of each automatic check both sides ran (and of passing all of them), tested like the
    refusal rate: Fisher's exact test over one output per sample."""
    sides = []
    for frame, model in ((checks[0], pair.baseline), (checks[1], pair.candidate)):
        part = frame[(frame["scenario"] == scen) & (frame["model"] == model) & ~frame["excluded"].astype(bool)]
        every = part.groupby("output_id", sort=False).agg(
            sample_id=("sample_id", "first"), repeat=("repeat", "first"), passed=("passed", "all")
        )
        named = {str(k): v for k, v in part.groupby("check", sort=True)}
        sides.append({"all": every, **named} if len(part) else {})
    rows = []
    for name in [n for n in sides[0] if n in sides[1]]:
        b, c = sides[0][name], sides[1][name]
        flags_b, flags_c = b["passed"].to_numpy(dtype=bool), c["passed"].to_numpy(dtype=bool)
        got_b, got_c = (flags_b, _first_per_sample(b, flags_b)), (flags_c, _first_per_sample(c, flags_c))
        rows.append(_rate_row(scen, pair, f"check_pass_rate:{name}", got_b, got_c, th))
    return rows


def _rate_row(
    scen: str,
    pair: ModelPair,
    metric: str,
    got_b: tuple[np.ndarray, np.ndarray],
    got_c: tuple[np.ndarray, np.ndarray],
    th: DriftThresholds,
) -> DriftRow:
    """A rate's row (refusals, truncations, a check's passes) from each side's flags, all of them and one per
    sample: the rate over all outputs, Fisher's exact test over one output per sample."""
    (all_b, first_b), (all_c, first_c) = got_b, got_c
    rate_b, rate_c = float(all_b.mean()), float(all_c.mean())
    test = fisher_exact(int(first_c.sum()), int((~first_c).sum()), int(first_b.sum()), int((~first_b).sum()))
    p = finite_or_none(test.p_value)
    return DriftRow(
        scen,
        pair.candidate,
        pair.baseline,
        metric,
        rate_b,
        rate_c,
        rate_c - rate_b,
        p_value=p,
        n_baseline=len(all_b),
        n_candidate=len(all_c),
        flag=abs(rate_c - rate_b) >= th.rate_points - 1e-12 and p is not None and p < th.alpha,
        test="Fisher's exact test, one output per sample",
        rule=f"changed by >= {th.rate_points * 100:g} points and p < {th.alpha:g}",
    )


def _usable(frame: pd.DataFrame, extra: tuple[str, ...]) -> pd.DataFrame:
    """The outputs that count (not excluded, not anchors), with words counted from ``text`` when not counted
    at load, and the per-output flags ``refused`` and ``truncated`` (1, 0, or NaN where unknown) where the
    frame has the columns they come from."""
    keep = np.ones(len(frame), dtype=bool)
    for col in ("excluded", ANCHOR):
        if col in frame:
            keep &= ~frame[col].fillna(False).astype(bool).to_numpy()
    out = as_python_strings(frame[keep])
    if "output_words" not in out and "text" in out:
        out = out.assign(output_words=out["text"].map(lambda t: len(t.split()) if isinstance(t, str) else np.nan))
    if "text" in out:
        known = out["text"].notna().to_numpy()
        out = out.assign(refused=np.where(known, refusals(out["text"], extra), np.nan))
    if "finish_reason" in out:
        known = out["finish_reason"].notna().to_numpy()
        out = out.assign(truncated=np.where(known, out["finish_reason"].to_numpy(dtype=object) == "length", np.nan))
    return out


def _pair_rows(scen: str, pair: ModelPair, b: pd.DataFrame, c: pd.DataFrame, th: DriftThresholds) -> list[DriftRow]:
    def row(metric: str, base: float | None, cand: float | None, **rest: Any) -> DriftRow:
        change = None if base is None or cand is None else cand - base
        return DriftRow(scen, pair.candidate, pair.baseline, metric, base, cand, change, **rest)

    rows = []
    for column, prefix, median_rel, p95_rel in (
        ("output_words", "length_words", th.length_median, th.length_p95),
        ("latency_ms", "latency_ms", th.timing_median, th.timing_p95),
        ("ttft_ms", "ttft_ms", th.timing_median, th.timing_p95),
    ):
        x, y = _numbers(b, column), _numbers(c, column)
        if not len(x) or not len(y):
            continue
        p = finite_or_none(mann_whitney(_sample_means(b, column), _sample_means(c, column)).p_value)
        med_b, med_c = float(np.quantile(x, 0.5)), float(np.quantile(y, 0.5))
        rel = _relative(med_b, med_c)
        rows.append(
            row(
                f"{prefix}_median",
                med_b,
                med_c,
                p_value=p,
                n_baseline=len(x),
                n_candidate=len(y),
                flag=rel is not None and abs(rel) >= median_rel and p is not None and p < th.alpha,
                test="Mann-Whitney over per-sample means",
                rule=f"changed by >= {median_rel:.0%} and p < {th.alpha:g}",
            )
        )
        p95_b, p95_c = float(np.quantile(x, 0.95)), float(np.quantile(y, 0.95))
        rel = _relative(p95_b, p95_c)
        rows.append(
            row(
                f"{prefix}_p95",
                p95_b,
                p95_c,
                p_value=None,
                n_baseline=len(x),
                n_candidate=len(y),
                flag=min(len(x), len(y)) >= th.min_outputs_p95 and rel is not None and abs(rel) >= p95_rel,
                test=None,
                rule=f"changed by >= {p95_rel:.0%}, at least {th.min_outputs_p95} outputs each side",
            )
        )
    for metric, column in (("refusal_rate", "refused"), ("truncation_rate", "truncated")):
        got_b, got_c = _flags(b, column), _flags(c, column)
        if got_b is not None and got_c is not None:
            rows.append(_rate_row(scen, pair, metric, got_b, got_c, th))
    if "text" in b and "text" in c:
        paired, equal = _identical(b, c)
        own = _reproducibility(b)
        same = equal / paired if paired else None
        rows.append(
            row(
                "identical_share",
                own,
                same,
                p_value=None,
                n_baseline=len(b),
                n_candidate=paired,
                flag=own is not None and same is not None and same <= own - th.identical_drop + 1e-12,
                test=None,
                rule=f"{th.identical_drop * 100:g} points or more below the baseline's own reproducibility "
                "(needs repeats in the baseline)",
            )
        )
    return rows


def _numbers(frame: pd.DataFrame, column: str) -> np.ndarray:
    """The finite values of ``column`` (none when the frame lacks it)."""
    if column not in frame:
        return np.zeros(0)
    values = pd.to_numeric(frame[column], errors="coerce").to_numpy(dtype=float)
    out: np.ndarray = values[np.isfinite(values)]
    return out


def _sample_means(frame: pd.DataFrame, column: str) -> np.ndarray:
    """One value per sample: the mean over its repeats (the units of the tests); samples without a value
    are left out."""
    if column not in frame:
        return np.zeros(0)
    values = pd.to_numeric(frame[column], errors="coerce").to_numpy(dtype=float)
    known = np.isfinite(values)
    sample, ids = pd.factorize(frame["sample_id"].to_numpy()[known])
    counts = np.bincount(sample, minlength=len(ids))
    out: np.ndarray = np.bincount(sample, weights=values[known], minlength=len(ids)) / np.maximum(counts, 1)
    return out


def _relative(base: float | None, cand: float | None) -> float | None:
    """(cand - base) / |base|; None when either is missing or the baseline is 0 (no scale to compare to)."""
    if base is None or cand is None or base == 0:
        return None
    return (cand - base) / abs(base)


def _first_per_sample(frame: pd.DataFrame, flags: np.ndarray) -> np.ndarray:
    """``flags`` of one output per sample, its lowest repeat (rows where the flag is known)."""
    sample = pd.factorize(frame["sample_id"])[0]
    order = np.lexsort((frame["repeat"].to_numpy(), sample))
    ids = sample[order]
    first = np.r_[True, ids[1:] != ids[:-1]] if len(ids) else np.zeros(0, dtype=bool)
    out: np.ndarray = flags[order][first]
    return out


def _flags(frame: pd.DataFrame, column: str) -> tuple[np.ndarray, np.ndarray] | None:
    """The known 0/1 flags of ``column`` as booleans, all of them and one per sample; None when unknown."""
    if column not in frame:
        return None
    values = frame[column].to_numpy(dtype=float)
    known = ~np.isnan(values)
    if not known.any():
        return None
    flags = values[known] > 0
    return flags, _first_per_sample(frame[known], flags)


def _reproducibility(frame: pd.DataFrame) -> float | None:
    """Share of pairs of one sample's repeats (of one model) with equal text; None without repeats."""
    texts = frame[frame["text"].notna().to_numpy()]
    per_sample = texts.groupby("sample_id", sort=False).size().to_numpy(dtype=float)
    pairs = float((per_sample * (per_sample - 1) / 2).sum())
    if pairs == 0:
        return None
    same = texts.groupby(["sample_id", "text"], sort=False).size().to_numpy(dtype=float)
    return float((same * (same - 1) / 2).sum()) / pairs


def _identical(b: pd.DataFrame, c: pd.DataFrame) -> tuple[int, int]:
    """(outputs paired by sample and repeat, pairs whose two texts are equal): each side's first output with
    a text per (sample, repeat). Keys coded as integers over both sides together and matched with sorted
    arrays, the texts then compared element by element in C: 0.12 s for 20 pairs of 5,000 outputs, where a
    dict per side took 0.14-0.26 s (and a pandas merge 0.6 s)."""
    known_b, known_c = b["text"].notna().to_numpy(), c["text"].notna().to_numpy()
    n_b = int(known_b.sum())
    sample = pd.factorize(_both(b, c, "sample_id", known_b, known_c), use_na_sentinel=False)[0]
    repeat, repeats = pd.factorize(_both(b, c, "repeat", known_b, known_c), use_na_sentinel=False)
    key = sample.astype(np.int64) * max(len(repeats), 1) + repeat
    keys_b, first_b = np.unique(key[:n_b], return_index=True)  # first_*: the first row of each key
    keys_c, first_c = np.unique(key[n_b:], return_index=True)
    _, at_b, at_c = np.intersect1d(keys_b, keys_c, assume_unique=True, return_indices=True)
    texts_b = b["text"].to_numpy(dtype=object)[known_b][first_b[at_b]]
    texts_c = c["text"].to_numpy(dtype=object)[known_c][first_c[at_c]]
    equal = np.equal(texts_b, texts_c, dtype=bool)  # each pair's ``==``, in C
    return len(at_b), int(equal.sum())


def _both(b: pd.DataFrame, c: pd.DataFrame, column: str, rows_b: np.ndarray, rows_c: np.ndarray) -> np.ndarray:
    """``column`` of ``b``'s rows ``rows_b`` then of ``c``'s rows ``rows_c``, as one object array."""
    return np.concatenate([b[column].to_numpy(dtype=object)[rows_b], c[column].to_numpy(dtype=object)[rows_c]])
