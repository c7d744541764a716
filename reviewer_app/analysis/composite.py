"""A weighted composite over scenarios, and how much its order depends on the weights."""

from __future__ import annotations

import numpy as np

from reviewer_app.analysis.decisions import describe, ranking_rows
from reviewer_app.analysis.prepare import sub_rng
from reviewer_app.analysis.ranking import Estimate
from reviewer_app.analysis.reviewer_effects import pooled_mask
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
    # a pair the design confounds with reviewer leniency in any scenario is confounded in the weighted sum too
    composite.confounded = pooled_mask([(per_scenario[s].models, per_scenario[s].confounded) for s in used], kept)
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
    p_best = {r.model: r.p_best for r in composite.ranking}
    return composite, weight_sensitivity(used, est.models, seed=seed, draws=draws, p_best=p_best)


def weight_sensitivity(
    per_scenario: dict[str, Estimate],
    models: list[str],
    *,
    seed: int,
    draws: int = 2000,
    p_best: dict[str, float | None] | None = None,
) -> WeightSensitivity:
    """How the composite's order depends on the weights, kept apart from how it depends on the panel's noise.

    A lead asks two different questions, and mixing them answers neither: a model can come first in some
    draws of "random weights with a random bootstrap replicate" through noise alone, at weights that never put
    it first. So, over ``draws`` random weightings (uniform on the simplex, Dirichlet(1, ..., 1)):

    * **weights alone**: each weighting applied to the scenarios' point scores: how often each model comes
      first and the range (best, worst, median) of its ranks: what choosing other weights could do;
    * **noise alone**: ``p_best``, at the chosen weights, the composite's P(best) over its bootstrap
      replicates (computed with the composite's ranking and passed in);
    * **both together**: each weighting paired with a random bootstrap replicate: how often each model comes
      first when neither the weights nor the panel is taken as given (labelled as such everywhere).

    Models tied for first share that draw equally; tied models share their rank (1 + the number strictly
    ahead). Left out, with a note, when there is one scenario or no composite."""
    scenarios = list(per_scenario)
    if not models:
        return WeightSensitivity(draws=0, models=(), note="No model has a composite, so there is nothing to weigh.")
    if len(scenarios) < 2:
        return WeightSensitivity(draws=0, models=(), note=ONE_SCENARIO)
    cols = {s: [per_scenario[s].models.index(m) for m in models] for s in scenarios}
    point = np.stack([per_scenario[s].point[cols[s]] for s in scenarios])  # (scenarios x models)
    boot = np.stack([per_scenario[s].boot[:, cols[s]] for s in scenarios])  # (scenarios x rounds x models)
    rounds = boot.shape[1]
    rng = sub_rng(seed, "weight_sensitivity")
    w = rng.dirichlet(np.ones(len(scenarios)), size=draws)
    replicate = rng.integers(0, rounds, size=draws)
    alone_share, alone_ranks = _firsts_and_ranks(w @ point)
    both_share, both_ranks = _firsts_and_ranks(np.einsum("ds,sdm->dm", w, boot[:, replicate, :]))
    p_best = p_best or {}
    rows = [
        WeightSensitivityRow(
            model=m,
            share_first=float(alone_share[j]),
            rank_best=int(alone_ranks[:, j].min()),
            rank_worst=int(alone_ranks[:, j].max()),
            rank_median=float(np.median(alone_ranks[:, j])),
            p_best=p_best.get(m),
            share_first_with_noise=float(both_share[j]),
            rank_best_with_noise=int(both_ranks[:, j].min()),
            rank_worst_with_noise=int(both_ranks[:, j].max()),
        )
        for j, m in enumerate(models)
    ]
    rows.sort(key=lambda row: (-row.share_first, row.rank_median, -row.share_first_with_noise, row.model))
    return WeightSensitivity(
        draws=draws, scenarios=tuple(scenarios), models=tuple(rows), summary=_sensitivity_lines(rows, draws), note=None
    )


def _firsts_and_ranks(comp: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per model, the share of rows (draws) of ``comp`` (draws x models, higher first) in which it is first
    (ties shared), and its rank in each row (1 + the number strictly ahead; no score ranks last)."""
    comp = np.where(np.isfinite(comp), comp, -np.inf)
    tol = 1e-12 * np.maximum(1.0, np.abs(np.where(np.isfinite(comp), comp, 0.0)).max())
    first = comp >= comp.max(axis=1, keepdims=True) - tol
    share = (first / first.sum(axis=1, keepdims=True)).mean(axis=0)
    ranks = 1 + (comp[:, None, :] > comp[:, :, None] + tol).sum(axis=2)
    return share, ranks


def _ranks_text(best: int, worst: int) -> str:
    return f"rank {best}" if best == worst else f"ranks {best}\u2013{worst}"


def _sensitivity_lines(rows: list[WeightSensitivityRow], draws: int) -> tuple[str, ...]:
    """The three readings in words a lead can act on, each saying which source of variation it is."""
    alone = "; ".join(
        f"{r.model} is first in {r.share_first:.0%} of weightings, {_ranks_text(r.rank_best, r.rank_worst)}"
        for r in rows
    )
    lines = [f"Under the weights alone (the point scores, {draws:,} random weightings of the scenarios): {alone}."]
    noise = [r for r in rows if r.p_best is not None]
    if noise:
        ordered = sorted(noise, key=lambda r: -(r.p_best or 0.0))
        lines.append(
            "From the panel's noise alone, at the chosen weights (bootstrap P(best)): "
            + ", ".join(f"{r.model} {r.p_best:.0%}" for r in ordered)
            + "."
        )
    both = sorted(rows, key=lambda r: -r.share_first_with_noise)
    lines.append(
        "With both the weights and the noise varying (each weighting with a bootstrap replicate): "
        + "; ".join(
            f"{r.model} first in {r.share_first_with_noise:.0%}, "
            f"{_ranks_text(r.rank_best_with_noise, r.rank_worst_with_noise)}"
            for r in both
        )
        + "."
    )
    return tuple(lines)
