"""Beside quality: output length, latency, position bias and stability across repeated generations."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from reviewer_app.analysis.inference import CONFIDENCE, t_quantile
from reviewer_app.analysis.prepare import finite_or_none, recorded
from reviewer_app.domain.report_panel import (
    MetricStats,
    OutputStats,
    PositionBias,
    PositionBin,
    PositionEffect,
    StabilityRow,
)

NOT_RECORDED = (
    "not recorded: none of these answers was given in the app, so the side and queue position each was shown at "
    "are unknown (imported answers are left out)"
)
METRICS = ("output_chars", "output_words", "output_tokens", "latency_ms", "ttft_ms")
LENGTHS = ("output_chars", "output_words", "output_tokens")  # these also get quartiles and range


def output_stats(outputs: pd.DataFrame) -> list[OutputStats]:
    """Per model: count, and median / p95 (length also p25 / p75 / min / max) of each metadata metric present."""
    if outputs.empty:
        return []
    frame = outputs[~outputs["excluded"].astype(bool)] if "excluded" in outputs else outputs
    rows = []
    for model, part in frame.groupby("model", sort=True):
        stats: dict[str, MetricStats] = {}
        for metric in METRICS:
            if metric not in part:
                continue
            values = pd.to_numeric(part[metric], errors="coerce").dropna()
            if not values.empty:
                stats[metric] = _metric_stats(values, lengths=metric in LENGTHS)
        rows.append(OutputStats(model=str(model), n_outputs=len(part), **stats))
    return rows


def _metric_stats(values: pd.Series, *, lengths: bool) -> MetricStats:
    common = MetricStats(n=len(values), median=float(values.median()), p95=float(values.quantile(0.95)))
    if not lengths:
        return common
    return MetricStats(
        n=common.n,
        median=common.median,
        p95=common.p95,
        p25=float(values.quantile(0.25)),
        p75=float(values.quantile(0.75)),
        min=float(values.min()),
        max=float(values.max()),
    )


Strata = dict[str, tuple[list[Any], np.ndarray]]  # scenario -> (its samples in order, rounds x samples counts)


def stratified_totals(frame: pd.DataFrame, values: np.ndarray, strata: Strata) -> tuple[np.ndarray, np.ndarray]:
    """Totals of the columns of ``values`` (rows aligned with ``frame``) and their bootstrap replicates,
    resampling samples within each scenario with the report's own weights (so all CIs share the draws)."""
    rounds = next(iter(strata.values()))[1].shape[0]
    point, boot = values.sum(axis=0), np.zeros((rounds, values.shape[1]))
    scen = frame["scenario"].to_numpy()
    sample_ids = frame["sample_id"].to_numpy()
    for name, (samples, w) in strata.items():
        sel = scen == name
        if not sel.any():
            continue
        idx = sample_ids[sel]
        pos = pd.Index(samples).get_indexer(idx)
        per_sample = np.stack([np.bincount(pos, weights=v, minlength=len(samples)) for v in values[sel].T], axis=1)
        boot += w.astype(np.float64, copy=False) @ per_sample  # compact counts (compact_counts) as floats
    return point, boot


def left_win_rate(main: pd.DataFrame, *, strata: Strata) -> PositionBias:
    """Pairwise position bias: among decisive answers ("left"/"right" as displayed), the share picking the
    left side, with a 95% cluster-bootstrap CI over samples. 0.5 means no position bias. Only answers given
    in the app count: an imported answer's side is not known (see ``prepare.recorded``)."""
    decisive_all = main[main["value"].isin(["left", "right"])]
    shown = recorded(decisive_all)
    decisive = decisive_all[shown]
    skipped = int((~shown).sum())
    if decisive.empty:
        note = NOT_RECORDED if skipped else None
        return PositionBias(left_win_rate=None, ci_low=None, ci_high=None, n=0, n_not_recorded=skipped, note=note)
    left = (decisive["value"] == "left").to_numpy(dtype=float)
    point, boot = stratified_totals(decisive, np.stack([left, np.ones_like(left)], axis=1), strata)
    with np.errstate(divide="ignore", invalid="ignore"):
        rates = boot[:, 0] / boot[:, 1]
    rates = rates[np.isfinite(rates)]
    lo, hi = np.percentile(rates, [2.5, 97.5]) if len(rates) else (np.nan, np.nan)
    return PositionBias(
        left_win_rate=finite_or_none(point[0] / point[1]),
        ci_low=finite_or_none(lo),
        ci_high=finite_or_none(hi),
        n=len(left),
        n_not_recorded=skipped,
        note=None,
    )


def position_effect(overall: pd.DataFrame, *, strata: Strata | None = None, bins: int = 5) -> PositionEffect:
    """Rating mode: score versus display position in the reviewer's queue.

    The score is each rating's overall 0-1 score minus its model's mean in that scenario (so the mix of
    models at each position does not matter). Reports the mean by position bin and the least-squares slope
    per 100 positions with a 95% CI; a slope near 0 means no drift. Only ratings given in the app count: an
    imported rating's queue position is not known.

    The CI is clustered two ways, by reviewer and by sample (:func:`two_way_slope_se`; Cameron, Gelbach &
    Miller 2011): a queue belongs to a reviewer, so how one reviewer drifts is shared by all of their ratings,
    and reviewers differ in it; clustering by sample alone treats one reviewer's ratings as independent and
    under-covers (56% where it should hold 95%, on panels whose reviewers drift differently). Analytic, so
    it takes no bootstrap draws (``strata`` is not used; it is accepted so every measure here is called
    alike)."""
    del strata
    shown = recorded(overall)
    skipped = int((~shown).sum())
    overall = overall[shown]
    if overall.empty or overall["position"].nunique() < 2:
        note = NOT_RECORDED if overall.empty and skipped else None
        return PositionEffect(
            slope_per_100=None, ci_low=None, ci_high=None, bins=(), n=len(overall), n_not_recorded=skipped, note=note
        )
    f = overall[["scenario", "sample_id", "reviewer", "model_a", "position", "norm"]].dropna()
    resid = f["norm"] - f.groupby(["scenario", "model_a"])["norm"].transform("mean")
    x = f["position"].to_numpy(dtype=float)
    y = resid.to_numpy()
    sample = pd.factorize(pd.MultiIndex.from_frame(f[["scenario", "sample_id"]]))[0]
    reviewer = pd.factorize(f["reviewer"])[0]
    slope, se, df = two_way_slope_se(x, y, sample, reviewer)
    half = float(t_quantile(1 - (1 - CONFIDENCE) / 2, np.array([df]))[0]) * se if np.isfinite(se) else np.nan
    edges = np.unique(np.quantile(x, np.linspace(0, 1, bins + 1)))
    which = np.clip(np.searchsorted(edges, x, side="right") - 1, 0, len(edges) - 2)
    table = []
    for b in range(len(edges) - 1):
        sel = which == b
        if sel.any():
            table.append(
                PositionBin(
                    position_from=int(edges[b]),
                    position_to=int(edges[b + 1]),
                    mean_score_vs_model=float(y[sel].mean()),
                    n=int(sel.sum()),
                )
            )
    return PositionEffect(
        slope_per_100=finite_or_none(100.0 * slope),
        ci_low=finite_or_none(100.0 * (slope - half)),
        ci_high=finite_or_none(100.0 * (slope + half)),
        bins=tuple(table),
        n=len(x),
        n_not_recorded=skipped,
        note=None,
    )


def two_way_slope_se(x: np.ndarray, y: np.ndarray, first: np.ndarray, second: np.ndarray) -> tuple[float, float, float]:
    """The least-squares slope of ``y`` on ``x`` (with an intercept), its standard error clustered two ways
    by the integer codes ``first`` and ``second`` (samples and reviewers), and the degrees of freedom of its t
    reference.

    Cameron, Gelbach & Miller (2011): V = V_first + V_second - V_both, each the one-way cluster-robust (CR1,
    G / (G - 1)) variance of the slope for clustering by the first codes, the second, and their intersection;
    where that is not positive, the larger one-way variance. The reference is Student t with min(G) - 1
    degrees of freedom, over the two ways (few reviewers: a wide interval, as it should
    be), G taken as the effective number of clusters: (sum a^2)^2 / sum a^4 for a cluster's share a of the
    spread in ``x`` (Satterthwaite 1946), which is G for equal clusters and smaller for unequal ones, whose
    variance estimate is the less stable. NaN standard error with fewer than two clusters either way."""
    xc = x - x.mean()
    sxx = float((xc * xc).sum())
    if sxx <= 0:
        return float("nan"), float("nan"), 1.0
    slope = float((xc * (y - y.mean())).sum() / sxx)
    psi = xc * (y - y.mean() - slope * xc) / sxx  # each rating's influence on the slope

    def one_way(codes: np.ndarray) -> tuple[float, int, float]:
        totals = np.bincount(codes, weights=psi)
        g = int((np.bincount(codes) > 0).sum())
        share = np.bincount(codes, weights=xc * xc) / sxx  # each cluster's share of the spread in x
        df = float(share @ share) ** 2 / float((share**2) @ (share**2)) - 1.0
        return (g / (g - 1.0) * float((totals**2).sum()) if g > 1 else float("nan")), g, df

    v1, g1, df1 = one_way(first)
    v2, g2, df2 = one_way(second)
    v12, _, _ = one_way(pd.factorize(pd.MultiIndex.from_arrays([first, second]))[0])
    if min(g1, g2) < 2:
        return slope, float("nan"), 1.0
    v = v1 + v2 - v12
    if not v > 0:
        v = max(v1, v2)
    return slope, float(np.sqrt(v)), max(1.0, min(df1, df2))


def stability(points: pd.DataFrame) -> list[StabilityRow]:
    """Spread of scores across repeated generations of the same sample, per model.

    ``points`` has one row per judgement: ``scenario, sample_id, model, repeat, score`` (rating mode the
    0-1 overall score; pairwise 1 / 0.5 / 0 for win / tie / loss). Scores are averaged per output, then the
    standard deviation across an output's repeats is averaged over samples. Empty when no batch output
    has repeats.
    """
    if points.empty or points["repeat"].nunique() < 2:
        return []
    per_output = points.groupby(["scenario", "sample_id", "model", "repeat"])["score"].mean().reset_index()
    spread = per_output.groupby(["scenario", "sample_id", "model"])["score"].agg(["std", "count"])
    spread = spread[spread["count"] >= 2]
    rows = []
    for model, part in spread.groupby(level="model"):
        rows.append(
            StabilityRow(
                model=str(model),
                n_samples=len(part),
                mean_sd_across_repeats=float(part["std"].mean()),
                max_sd_across_repeats=float(part["std"].max()),
            )
        )
    return rows


def pairwise_points(main: pd.DataFrame) -> pd.DataFrame:
    """Pairwise comparisons as per-model points (win 1, tie or both bad 0.5, loss 0) with each output's repeat."""
    a_score = np.select([main["outcome"] == "a", main["outcome"] == "b"], [1.0, 0.0], default=0.5)
    base = main[["scenario", "sample_id"]]
    a = base.assign(model=main["model_a"].to_numpy(), repeat=main["repeat_a"].to_numpy(), score=a_score)
    b = base.assign(model=main["model_b"].to_numpy(), repeat=main["repeat_b"].to_numpy(), score=1 - a_score)
    return pd.concat([a, b], ignore_index=True)
