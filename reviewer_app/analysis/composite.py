"""A weighted composite over scenarios, and how much its order depends on the weights."""

from __future__ import annotations

import numpy as np

from reviewer_app.analysis.decisions import describe, ranking_rows
from reviewer_app.analysis.prepare import sub_rng
from reviewer_app.analysis.ranking import Estimate
from reviewer_app.domain.report_rankings import Composite, WeightSensitivity, WeightSensitivityRow

ONE_SCENARIO = "Only one scenario, so there are no weights to vary."


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
    cluster bootstrap. Only models with a score in every scenario of positive weight get a composite (a note
    names the others and where they are missing), so every composite compares models over the same scenarios.
    """
    used = [s for s in per_scenario if weights.get(s, 0.0) > 0]
    notes: list[str] = []
    kept = []
    for m in models:
        missing = [s for s in used if not _scored(per_scenario[s], m)]
        if missing:
            notes.append(f"{m} has no score in {', '.join(missing)}, so it has no composite")
        else:
            kept.append(m)
    if not used:
        kept = []
    rounds = next(iter(per_scenario.values())).boot.shape[0] if per_scenario else 0
    total_w = sum(weights[s] for s in used)
    point, boot, n = np.zeros(len(kept)), np.zeros((rounds, len(kept))), np.zeros(len(kept))
    part_weights = []
    for s in used:
        est = per_scenario[s]
        w = weights[s] / total_w
        part_weights.append(w)
        pos = [est.models.index(m) for m in kept]
        point += w * est.point[pos]
        boot += w * est.boot[:, pos]
        n += est.n[pos]
    composite = Estimate(
        kept, point, boot, n, kind="composite", parts=[per_scenario[s] for s in used], part_weights=part_weights
    )
    return composite, notes


def _scored(est: Estimate, model: str) -> bool:
    return model in est.models and bool(np.isfinite(est.point[est.models.index(model)]))


def composite_section(
    per_scenario: dict[str, Estimate], weights: dict[str, float], models: list[str], *, seed: int, draws: int = 2000
) -> tuple[Composite, WeightSensitivity]:
    """The report's ``composite`` and ``weight_sensitivity`` blocks."""
    est, notes = composite_estimate(per_scenario, weights, models)
    ranking = ranking_rows(est, "composite") if est.models else None
    composite = Composite(
        weights=weights,
        ranking=tuple(ranking.rows) if ranking else (),
        pairs=tuple(ranking.pairs) if ranking else (),
        summary=describe(ranking.rows, ranking.better, est.models, "the composite") if ranking else "No composite.",
        notes=tuple(sorted(set(notes))),
    )
    used = {s: e for s, e in per_scenario.items() if weights.get(s, 0.0) > 0}
    return composite, weight_sensitivity(used, est.models, seed=seed, draws=draws)


def weight_sensitivity(
    per_scenario: dict[str, Estimate], models: list[str], *, seed: int, draws: int = 2000
) -> WeightSensitivity:
    """Over ``draws`` random weightings (uniform on the simplex, Dirichlet(1, ..., 1)), each paired with a
    randomly drawn bootstrap replicate of the scenarios' scores, how often each model comes first and the
    range of ranks it takes. Models tied for first share that draw equally; tied models share their rank
    (1 + the number strictly ahead). Left out, with a note, when there is one scenario or no composite."""
    scenarios = list(per_scenario)
    if not models:
        return WeightSensitivity(draws=0, models=(), note="No model has a composite, so there is nothing to weigh.")
    if len(scenarios) < 2:
        return WeightSensitivity(draws=0, models=(), note=ONE_SCENARIO)
    rounds = per_scenario[scenarios[0]].boot.shape[0]
    boot = np.stack(
        [per_scenario[s].boot[:, [per_scenario[s].models.index(m) for m in models]] for s in scenarios]
    )  # (scenarios x rounds x models)
    rng = sub_rng(seed, "weight_sensitivity")
    w = rng.dirichlet(np.ones(len(scenarios)), size=draws)
    replicate = rng.integers(0, rounds, size=draws)
    comp = np.einsum("ds,sdm->dm", w, boot[:, replicate, :])
    comp = np.where(np.isfinite(comp), comp, -np.inf)
    tol = 1e-12 * np.maximum(1.0, np.abs(np.where(np.isfinite(comp), comp, 0.0)).max())
    first = comp >= comp.max(axis=1, keepdims=True) - tol
    share = first / first.sum(axis=1, keepdims=True)
    ranks = 1 + (comp[:, None, :] > comp[:, :, None] + tol).sum(axis=2)
    rows = [
        WeightSensitivityRow(
            model=m,
            share_first=float(share[:, j].mean()),
            rank_best=int(ranks[:, j].min()),
            rank_worst=int(ranks[:, j].max()),
            rank_median=float(np.median(ranks[:, j])),
        )
        for j, m in enumerate(models)
    ]
    rows.sort(key=lambda row: (-row.share_first, row.rank_median, row.model))
    return WeightSensitivity(draws=draws, scenarios=tuple(scenarios), models=tuple(rows), note=None)
