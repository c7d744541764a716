"""A weighted composite over scenarios, and how much its order depends on the weights."""

from __future__ import annotations

import numpy as np

from reviewer_app.aggregation.prepare import sub_rng
from reviewer_app.aggregation.ranking import Estimate, describe, ranking_rows
from reviewer_app.domain.report import Composite, RankingRow, WeightSensitivity, WeightSensitivityRow


def scenario_weights(
    scenarios: list[str], rubric_weights: dict[str, float], override: dict[str, float] | None = None
) -> dict[str, float]:
    """Weights per scenario: the lead's override, else the rubric's, else 1.0."""
    override = override or {}
    return {s: float(override.get(s, rubric_weights.get(s, 1.0))) for s in scenarios}


def composite_estimate(
    per_scenario: dict[str, Estimate], weights: dict[str, float], models: list[str]
) -> tuple[Estimate, list[str]]:
    """Weighted mean over scenarios of each model's overall score, bootstrap replicate by replicate.

    Each scenario's replicates come from its own resampled samples, so the composite's CI is a stratified
    cluster bootstrap. A model missing from a scenario with positive weight gets no composite (a note says
    why) rather than a score over a different set of scenarios than the others.
    """
    used = [s for s in per_scenario if weights.get(s, 0.0) > 0]
    notes: list[str] = []
    rounds = next(iter(per_scenario.values())).boot.shape[0] if per_scenario else 0
    total_w = sum(weights[s] for s in used)
    point = np.zeros(len(models))
    boot = np.zeros((rounds, len(models)))
    n = np.zeros(len(models))
    for s in used:
        est = per_scenario[s]
        w = weights[s] / total_w
        pos = {m: i for i, m in enumerate(est.models)}
        for j, m in enumerate(models):
            if m not in pos or np.isnan(est.point[pos[m]]):
                point[j] = np.nan
                boot[:, j] = np.nan
                notes.append(f"{m} has no score in {s}, so it has no composite")
                continue
            point[j] += w * est.point[pos[m]]
            boot[:, j] += w * est.boot[:, pos[m]]
            n[j] += est.n[pos[m]]
    if not used:
        point[:] = np.nan
    return Estimate(models, point, boot, n), notes


def composite_section(
    per_scenario: dict[str, Estimate], weights: dict[str, float], models: list[str], *, seed: int, draws: int = 2000
) -> tuple[Composite, WeightSensitivity]:
    """The report's ``composite`` and ``weight_sensitivity`` blocks."""
    est, notes = composite_estimate(per_scenario, weights, models)
    keep = ~np.isnan(est.point)
    kept = Estimate(
        [m for m, k in zip(models, keep, strict=True) if k], est.point[keep], est.boot[:, keep], est.n[keep]
    )
    no_rows: tuple[list[RankingRow], np.ndarray] = ([], np.zeros((0, 0), bool))
    rows, better = ranking_rows(kept, "composite") if kept.models else no_rows
    composite = Composite(
        weights=weights,
        ranking=tuple(rows),
        summary=describe(rows, better, kept.models, "the composite") if rows else "No composite.",
        notes=tuple(sorted(set(notes))),
    )
    return composite, weight_sensitivity(per_scenario, kept.models, seed=seed, draws=draws)


def weight_sensitivity(
    per_scenario: dict[str, Estimate], models: list[str], *, seed: int, draws: int = 2000
) -> WeightSensitivity:
    """Over ``draws`` random weightings (uniform on the simplex, Dirichlet(1, ..., 1)), how often each
    model comes first and the range of ranks it takes, using the point scores per scenario."""
    scenarios = list(per_scenario)
    if not scenarios or not models:
        return WeightSensitivity(draws=0, models=())
    scores = np.full((len(scenarios), len(models)), np.nan)
    for i, s in enumerate(scenarios):
        pos = {m: k for k, m in enumerate(per_scenario[s].models)}
        for j, m in enumerate(models):
            if m in pos:
                scores[i, j] = per_scenario[s].point[pos[m]]
    rng = sub_rng(seed, "weight_sensitivity")
    w = rng.dirichlet(np.ones(len(scenarios)), size=draws)
    comp = w @ np.nan_to_num(scores, nan=-1e9)
    order = np.argsort(-comp, axis=1, kind="stable")
    ranks = np.empty_like(order)
    np.put_along_axis(ranks, order, np.arange(1, len(models) + 1)[None, :].repeat(draws, 0), axis=1)
    rows = []
    for j, m in enumerate(models):
        r = ranks[:, j]
        rows.append(
            WeightSensitivityRow(
                model=m,
                share_first=float((r == 1).mean()),
                rank_best=int(r.min()),
                rank_worst=int(r.max()),
                rank_median=float(np.median(r)),
            )
        )
    rows.sort(key=lambda row: (-row.share_first, row.rank_median))
    return WeightSensitivity(draws=draws, scenarios=tuple(scenarios), models=tuple(rows))
