"""Style-controlled rankings: is it just the longer, more formatted answers winning?

Per scenario and dimension, each model's score with the outputs' style held fixed, beside its score as rated.
Style is five features counted at load (``domain.style``): length in words and Markdown headers, list items,
bold spans and code blocks.

* **Rating mode: a regression adjustment.** Each output's mean score y (over its ratings, weighted by their
  number) is regressed on model indicators and the features, *within samples* (every variable centred on its
  sample's mean), so the style effects are learnt from answers to the same prompt and a hard prompt's long
  answers do not pass for a length effect. A model's controlled score is its mean as rated minus
  gamma . (its mean style - the average output's style): what it would score at the average style. The
  coefficients are in the dimension's own points per unit of each feature (per 100 words for length).
* **Pairwise mode: contextual Bradley-Terry** (Chatbot Arena's style control, FastChat PR #3495: Li,
  Angelopoulos & Chiang 2024). Each comparison's covariates are, per feature, (first - second) / (first +
  second) (0 when both are 0), z-scored over comparisons; the fit is the report's Bradley-Terry (the same
  penalty on strengths) with these covariates' coefficients free. Comparisons of one pair on one sample share
  their covariates, so the fit runs on (sample, pair) cells with binomial counts.

Intervals come from the report's own cluster bootstrap over samples (its resampling counts): in rating mode the
weighted least squares is solved exactly for every replicate, from per-sample cross products; in pairwise mode
each replicate takes one Newton step from the full-data fit, with the per-sample gradients and Hessians (a
linearised bootstrap, whose coverage ``scripts/validate_style.py`` checks by simulation). A feature with no
variation to learn from (every output of the scenario has no code block) is left out and named.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from reviewer_app.analysis.ranking import BT_ALPHA, Estimate, sample_index
from reviewer_app.domain.report_style import StyleCoefficient, StyleRanking, StyleRow

__all__ = ["FEATURES", "style_features", "style_ranking"]

# (feature, the outputs frame's column, rating mode's unit divisor, its words)
FEATURES: tuple[tuple[str, str, float, str], ...] = (
    ("length", "output_words", 100.0, "100 words"),
    ("headers", "output_headers", 1.0, "header"),
    ("list_items", "output_list_items", 1.0, "list item"),
    ("bold", "output_bold", 1.0, "bold span"),
    ("code_blocks", "output_code_blocks", 1.0, "code block"),
)
_RIDGE = 1e-9  # keeps a solve finite when the design is singular in a replicate (a model absent from it)


def style_features(outputs: pd.DataFrame, samples: Sequence[Any], models: Sequence[str]) -> np.ndarray | None:
    """Each (sample, model)'s style, averaged over its repeats and without excluded outputs: an array
    (samples x models x features) in rating units (length per 100 words), NaN where the model has no output
    there; None when the outputs frame has no style counts (a database from before they were counted)."""
    columns = [c for _f, c, _d, _w in FEATURES]
    if outputs.empty or any(c not in outputs for c in columns):
        return None
    frame = outputs[~outputs["excluded"].astype(bool)] if "excluded" in outputs else outputs
    s_idx = sample_index(frame, list(samples))
    m_idx = pd.Index(list(models)).get_indexer(pd.Index(frame["model"]))
    keep = (s_idx >= 0) & (m_idx >= 0)
    flat = s_idx[keep] * len(models) + m_idx[keep]
    size = len(samples) * len(models)
    n = np.bincount(flat, minlength=size).astype(float)
    out = np.full((size, len(FEATURES)), np.nan)
    for k, (_f, column, divisor, _w) in enumerate(FEATURES):
        values = frame[column].to_numpy(dtype=float)[keep] / divisor
        total = np.bincount(flat, weights=values, minlength=size)
        with np.errstate(invalid="ignore", divide="ignore"):
            out[:, k] = np.where(n > 0, total / np.maximum(n, 1), np.nan)
    return out.reshape(len(samples), len(models), len(FEATURES))


def style_ranking(
    est: Estimate,
    features: np.ndarray,
    weights: np.ndarray,
    *,
    scenario: str,
    dimension: str,
    unit: str,
) -> StyleRanking | None:
    """The style-controlled ranking of ``est`` (one scenario's rating or Bradley-Terry estimate) given each
    (sample, model)'s ``features`` (:func:`style_features`, same samples and models) and the report's bootstrap
    ``weights`` (rounds x samples); None when there is nothing to control for (no feature varies) or too
    little data."""
    if est.kind == "mean" and est.sums is not None and est.counts is not None:
        return _rating(est, features, weights, scenario, dimension, unit)
    if est.kind == "bt" and est.sample_wins is not None:
        return _pairwise(est, features, weights, scenario, dimension)
    return None


# -- rating mode ------------------------------------------------------------------------------------------------


def _rating(
    est: Estimate, x: np.ndarray, w: np.ndarray, scenario: str, dimension: str, unit: str
) -> StyleRanking | None:
    assert est.sums is not None and est.counts is not None
    counts = np.where(np.isfinite(x).all(axis=2), est.counts, 0.0)  # (S, M): an output's ratings, if it has style
    s, m = counts.shape
    if m < 2 or counts.sum() == 0:
        return None
    y = np.where(counts > 0, est.sums / np.maximum(est.counts, 1), 0.0)
    xz = np.where(counts[:, :, None] > 0, np.nan_to_num(x), 0.0)
    weight_s = counts.sum(axis=1, keepdims=True)

    def centred(v: np.ndarray) -> np.ndarray:  # within-sample, ratings-weighted (v: S x M [x K])
        c = counts if v.ndim == 2 else counts[:, :, None]
        mean = (c * v).sum(axis=1, keepdims=True) / np.maximum(weight_s if v.ndim == 2 else weight_s[:, :, None], 1)
        return np.where(c > 0, v - mean, 0.0)

    kept = [k for k in range(len(FEATURES)) if np.ptp(centred(xz[:, :, k])[counts > 0]) > 1e-12]
    if not kept:
        return None
    dummies = np.broadcast_to(np.eye(m)[None, :, 1:], (s, m, m - 1))  # model 0 the reference
    design = np.concatenate([centred(dummies.copy()), centred(xz[:, :, kept])], axis=2)  # (S, M, P)
    target = centred(y)
    cd = design * counts[:, :, None]
    per_a = np.einsum("smp,smq->spq", cd, design)  # per-sample X'CX
    per_b = np.einsum("smp,sm->sp", cd, target)
    p = design.shape[2]
    ridge = _RIDGE * np.eye(p)
    gamma = np.linalg.lstsq(per_a.sum(axis=0) + ridge, per_b.sum(axis=0), rcond=None)[0][m - 1 :]
    wf = w.astype(np.float64)
    boot_a = (wf @ per_a.reshape(s, p * p)).reshape(-1, p, p) + ridge  # a BLAS product: einsum is 10x slower
    boot_b = wf @ per_b
    boot_gamma = np.linalg.solve(boot_a, boot_b[..., None])[..., 0][:, m - 1 :]  # (R, F')
    # Mean style of each model's rated outputs and of all of them (ratings-weighted), full data and replicates.
    cx = counts[:, :, None] * xz[:, :, kept]  # (S, M, F')
    model_x = cx.sum(axis=0) / np.maximum(counts.sum(axis=0), 1)[:, None]
    all_x = cx.sum(axis=(0, 1)) / counts.sum()
    boot_cx = (wf @ cx.reshape(s, -1)).reshape(-1, m, len(kept))
    boot_c = wf @ counts  # (R, M)
    boot_model_x = boot_cx / np.maximum(boot_c, 1e-300)[:, :, None]
    boot_all_x = boot_cx.sum(axis=1) / np.maximum(boot_c.sum(axis=1), 1e-300)[:, None]
    controlled = est.point - (model_x - all_x) @ gamma
    boot_controlled = est.boot - np.einsum("rmf,rf->rm", boot_model_x - boot_all_x[:, None, :], boot_gamma)
    rated = counts.sum(axis=0) > 0
    coefficients = [
        _coefficient(FEATURES[k], gamma[j], boot_gamma[:, j], unit, pairwise=False) for j, k in enumerate(kept)
    ]
    left_out = tuple(FEATURES[k][0] for k in range(len(FEATURES)) if k not in kept)
    return _ranking(est, controlled, boot_controlled, rated, scenario, dimension, unit, int((counts > 0).sum()),
                    coefficients, left_out)  # fmt: skip


# -- pairwise mode: contextual Bradley-Terry -------------------------------------------------------------------


def _pairwise(est: Estimate, x: np.ndarray, w: np.ndarray, scenario: str, dimension: str) -> StyleRanking | None:
    assert est.sample_wins is not None
    wins = est.sample_wins
    s, m, _ = wins.shape
    first, second = np.triu_indices(m, 1)
    n = wins[:, first, second] + wins[:, second, first]  # (S, pairs)
    y = wins[:, first, second]
    raw = np.stack([x[:, :, k] * (FEATURES[k][2] if k == 0 else 1.0) for k in range(len(FEATURES))], axis=2)
    a, b = raw[:, first, :], raw[:, second, :]  # (S, pairs, F)
    total = a + b
    with np.errstate(invalid="ignore", divide="ignore"):
        diff = np.where(total > 0, (a - b) / np.where(total > 0, total, 1.0), 0.0)
    usable = (n > 0) & np.isfinite(diff).all(axis=2)
    if m < 2 or not usable.any():
        return None
    n = np.where(usable, n, 0.0)
    y = np.where(usable, y, 0.0)
    diff = np.where(usable[:, :, None], np.nan_to_num(diff), 0.0)
    weight = n.sum()
    mean = (n[:, :, None] * diff).sum(axis=(0, 1)) / weight
    sd = np.sqrt((n[:, :, None] * (diff - mean) ** 2).sum(axis=(0, 1)) / weight)
    kept = [k for k in range(len(FEATURES)) if sd[k] > 1e-9]
    if not kept:
        return None
    z = np.where(usable[:, :, None], (diff[:, :, kept] - mean[kept]) / sd[kept], 0.0)  # (S, pairs, F')
    design = np.zeros((s, len(first), m + len(kept)))
    design[:, np.arange(len(first)), first] = 1.0
    design[:, np.arange(len(first)), second] = -1.0
    design[:, :, m:] = z
    p = design.shape[2]
    penalty = np.diag([2 * BT_ALPHA] * m + [_RIDGE] * len(kept))
    theta = np.zeros(p)
    for _ in range(100):
        grad_s, hess_s = _cells(design, n, y, theta)
        grad = grad_s.sum(axis=0) + penalty @ theta
        hess = hess_s.sum(axis=0) + penalty
        step = np.linalg.solve(hess, grad)
        theta = theta - step * min(1.0, 2.0 / max(float(np.abs(step).max()), 1e-300))
        if np.abs(grad).max() < 1e-10:
            break
    grad_s, hess_s = _cells(design, n, y, theta)
    wf = w.astype(np.float64)
    boot_grad = wf @ grad_s + theta @ penalty
    boot_hess = (wf @ hess_s.reshape(s, p * p)).reshape(-1, p, p) + penalty
    boot = theta - np.linalg.solve(boot_hess, boot_grad[..., None])[..., 0]  # one Newton step per replicate
    rated = est.n > 0
    coefficients = [
        _coefficient(FEATURES[k], theta[m + j], boot[:, m + j], "log-odds", pairwise=True, sd=float(sd[k]))
        for j, k in enumerate(kept)
    ]
    left_out = tuple(FEATURES[k][0] for k in range(len(FEATURES)) if k not in kept)
    return _ranking(est, theta[:m], boot[:, :m], rated, scenario, dimension, "Bradley-Terry log-odds",
                    int(usable.sum()), coefficients, left_out)  # fmt: skip


def _cells(design: np.ndarray, n: np.ndarray, y: np.ndarray, theta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per sample: the negative log-likelihood's gradient and Hessian over its (pair) cells."""
    eta = design @ theta
    prob = 1.0 / (1.0 + np.exp(-eta))
    grad = np.einsum("sc,scp->sp", n * prob - y, design)
    hess = np.einsum("sc,scp,scq->spq", n * prob * (1 - prob), design, design, optimize=True)
    return grad, hess


# -- shared -----------------------------------------------------------------------------------------------------


def _interval(values: np.ndarray) -> tuple[float | None, float | None]:
    finite = values[np.isfinite(values)]
    if len(finite) < 2:
        return None, None
    low, high = np.percentile(finite, [2.5, 97.5])
    return float(low), float(high)


def _coefficient(
    feature: tuple[str, str, float, str], value: float, boot: np.ndarray, unit: str, *, pairwise: bool, sd: float = 1.0
) -> StyleCoefficient:
    name, _column, _divisor, words = feature
    low, high = _interval(boot)
    ci = "" if low is None or high is None else f" ({low:+.2f} to {high:+.2f})"
    if pairwise:
        what = "length" if name == "length" else words + "s"
        per = f"SD of the relative difference in {what} ({sd:.2f})"
        sentence = (f"an answer ahead of the other by one SD of the relative difference in {what} ({sd:.2f}): "
                    f"{value:+.2f} log-odds of winning{ci}")  # fmt: skip
    else:
        per = words
        each = "each 100 extra words" if name == "length" else f"each extra {words}"
        sentence = f"{each}: {value:+.2f} {unit}{ci}"
    return StyleCoefficient(feature=name, per=per, estimate=float(value), ci_low=low, ci_high=high, sentence=sentence)


def _ranks(values: np.ndarray, higher_is_better: bool, present: np.ndarray) -> np.ndarray:
    """1 for the best; tied scores share the better rank; models without data rank last."""
    key = np.where(present, values if higher_is_better else -values, -np.inf)
    return np.array([1 + int(np.sum(key > v)) for v in key])


def _ranking(
    est: Estimate,
    controlled: np.ndarray,
    boot: np.ndarray,
    rated: np.ndarray,
    scenario: str,
    dimension: str,
    unit: str,
    outputs: int,
    coefficients: list[StyleCoefficient],
    left_out: tuple[str, ...],
) -> StyleRanking:
    present = rated & np.isfinite(est.point) & np.isfinite(controlled)
    raw_rank = _ranks(est.point, est.higher_is_better, present)
    new_rank = _ranks(controlled, est.higher_is_better, present)
    rows = []
    for k, model in enumerate(est.models):
        if not present[k]:
            continue
        low, high = _interval(boot[:, k])
        rows.append(
            StyleRow(
                model=model,
                score=float(est.point[k]),
                rank=int(raw_rank[k]),
                controlled=float(controlled[k]),
                ci_low=low,
                ci_high=high,
                controlled_rank=int(new_rank[k]),
                rank_change=int(raw_rank[k] - new_rank[k]),
            )
        )
    rows.sort(key=lambda r: (r.controlled_rank, r.model))
    return StyleRanking(
        scenario=scenario,
        dimension=dimension,
        unit=unit,
        outputs=outputs,
        rows=tuple(rows),
        coefficients=tuple(coefficients),
        left_out=left_out,
        sentence=_sentence(rows, coefficients, scenario, dimension),
    )


def _sentence(rows: list[StyleRow], coefficients: list[StyleCoefficient], scenario: str, dimension: str) -> str:
    """One sentence for the lead: what style control changes, and whether any style effect is clear enough for
    that change to mean something (a rank that moves while every style interval straddles zero is noise)."""
    where = scenario if dimension == "overall" else f"{scenario} ({dimension})"
    moved = [r for r in rows if r.rank_change]
    top_raw = min(rows, key=lambda r: (r.rank, r.model)).model if rows else None
    top_new = rows[0].model if rows else None
    clear = [
        c for c in coefficients if c.ci_low is not None and c.ci_high is not None and (c.ci_low > 0 or c.ci_high < 0)
    ]
    if not clear:
        which = f"the top {top_raw} -> {top_new}" if top_raw != top_new else f"{len(moved)} model(s)"
        change = "no rank changes" if not moved else f"ranks move ({which}) only within the noise"
        return f"{where}: no style effect is clearly different from zero; {change}."
    effects = "; ".join(c.sentence for c in clear)
    if not moved:
        return f"{where}: style matters ({effects}), yet holding it fixed changes no rank."
    lead = (
        f"the top model changes from {top_raw} to {top_new}"
        if top_raw != top_new
        else f"{len(moved)} model(s) change rank, the top stays {top_new}"
    )
    return f"{where}: style matters ({effects}); held fixed, {lead}."
