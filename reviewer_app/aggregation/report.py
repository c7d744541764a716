"""Build the report: a :class:`~reviewer_app.domain.report.Report` (its JSON form is ``reporting/schema.json``).

This module only computes; ``reviewer_app.reporting`` renders the report as JSON, CSV, Markdown and HTML.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import numpy as np
import pandas as pd

from reviewer_app.aggregation import secondary_measures
from reviewer_app.aggregation.agreement import agreement_rows
from reviewer_app.aggregation.composite import composite_section, scenario_weights
from reviewer_app.aggregation.diagnostics import reviewer_diagnostics
from reviewer_app.aggregation.prepare import (
    OVERALL,
    RatingParts,
    add_scores,
    bootstrap_weights,
    canonical_outcome,
    overall_rows,
    split_ratings,
    sub_rng,
)
from reviewer_app.aggregation.ranking import (
    Estimate,
    describe,
    pairwise_estimate,
    pool_pairwise,
    pool_rating,
    ranking_rows,
    rating_estimate,
    separation_warning,
    win_rates,
)
from reviewer_app.aggregation.secondary_measures import Strata
from reviewer_app.domain.enums import Mode
from reviewer_app.domain.report import (
    SCHEMA_VERSION,
    Beside,
    Counts,
    MethodDimension,
    Methods,
    OverallReport,
    RankingRow,
    Report,
    ScenarioReport,
    WinRateRow,
)
from reviewer_app.domain.rubric import Rubric

__all__ = ["DEFAULT_ROUNDS", "METHODS_TEXT", "SCHEMA_VERSION", "build_report"]

DEFAULT_ROUNDS = 1000


def _dims(rubric: Rubric, scenario: str | None) -> list[str]:
    """Dimension names that get a ranking (numeric ones in rating mode), then "overall"."""
    dims = rubric.dimensions if scenario is None else rubric.dimensions_for(scenario)
    names = [d.name for d in dims if rubric.mode == Mode.PAIRWISE or d.numeric()]
    return names + ([OVERALL] if OVERALL not in names else [])


def _unit(rubric: Rubric, dimension: str) -> str:
    if rubric.mode == Mode.PAIRWISE:
        return "Bradley-Terry log-odds"
    if dimension == OVERALL:
        return "of the 0-1 overall score"
    return "points"


def build_report(
    ratings: pd.DataFrame,
    outputs: pd.DataFrame,
    rubric: Rubric,
    *,
    batch: str,
    seed: int,
    rounds: int = DEFAULT_ROUNDS,
    weights: dict[str, float] | None = None,
    sensitivity_draws: int = 2000,
    generated_at: datetime | None = None,
    diagnostics: bool = True,
) -> Report:
    """Compute the whole report for one batch from the storage frames.

    ``ratings``/``outputs`` are ``ratings_frame``/``outputs_frame``; ``weights`` overrides the rubric's
    scenario weights for the composite; ``diagnostics=False`` leaves the reviewer table empty. The result is
    deterministic for a given ``seed`` and ``rounds``. Raises ValueError when ``rounds`` is below 1.
    """
    if rounds < 1:
        raise ValueError("rounds must be at least 1")
    parts = split_ratings(ratings)
    main = parts.main
    pairwise = rubric.mode == Mode.PAIRWISE
    if pairwise:
        main = main.assign(outcome=canonical_outcome(main))
        scored, overall = main, main.iloc[0:0]
    else:
        scored = add_scores(main, rubric)
        overall = overall_rows(scored)
    scenarios = sorted(main["scenario"].unique().tolist())

    per_dim: dict[str, dict[str, Estimate]] = {}  # dimension -> scenario -> estimate
    strata: Strata = {}  # scenario -> (samples, bootstrap weights)
    scenario_blocks = []
    for scen in scenarios:
        frame = scored[scored["scenario"] == scen]
        samples = sorted(frame["sample_id"].unique().tolist())
        w = bootstrap_weights(len(samples), rounds, sub_rng(seed, "samples", scen))
        strata[scen] = (samples, w)
        ranking: list[RankingRow] = []
        summary: dict[str, str] = {}
        warnings: list[str] = []
        scenario_win_rates: list[WinRateRow] | None = None
        for dim in _dims(rubric, scen):
            est = _estimate(rubric, frame, overall, scen, dim, samples, w)
            if est is None:
                continue
            per_dim.setdefault(dim, {})[scen] = est
            rows, better = ranking_rows(est, dim)
            ranking += rows
            summary[dim] = describe(rows, better, est.models, f"{scen} ({dim})" if dim != OVERALL else scen)
            warning = separation_warning(est, len(samples), f"{scen} / {dim}", _unit(rubric, dim))
            if warning:
                warnings.append(warning)
            if pairwise and dim == OVERALL:
                scenario_win_rates = win_rates(est)
        scenario_blocks.append(
            ScenarioReport(
                scenario=scen,
                n_samples=len(samples),
                n_ratings=int(frame["item_id"].count()),
                agreement=tuple(agreement_rows(main, rubric, scenario=scen, rounds=rounds, seed=seed, overall=overall)),
                ranking=tuple(ranking),
                summary=summary,
                warnings=tuple(warnings),
                win_rates=None if scenario_win_rates is None else tuple(scenario_win_rates),
            )
        )

    models = sorted(set(main["model_a"].dropna()) | (set(main["model_b"].dropna()) if pairwise else set()))
    overall_ranking: list[RankingRow] = []
    overall_summary: dict[str, str] = {}
    overall_win_rates: list[WinRateRow] | None = None
    for dim, by_scen in per_dim.items():
        est = pool_pairwise(list(by_scen.values()), models) if pairwise else pool_rating(list(by_scen.values()), models)
        rows, better = ranking_rows(est, dim)
        rows = [r for r in rows if r.n > 0]
        overall_ranking += rows
        overall_summary[dim] = describe(rows, better, est.models, f"all scenarios ({dim})")
        if pairwise and dim == OVERALL:
            overall_win_rates = win_rates(est)
    used_weights = scenario_weights(scenarios, rubric.scenario_weights, weights)
    composite, sensitivity = composite_section(
        per_dim.get(OVERALL, {}), used_weights, models, seed=seed, draws=sensitivity_draws
    )
    overall_block = OverallReport(
        agreement=tuple(agreement_rows(main, rubric, scenario=None, rounds=rounds, seed=seed, overall=overall)),
        ranking=tuple(overall_ranking),
        summary=overall_summary,
        warnings=(),
        win_rates=None if overall_win_rates is None else tuple(overall_win_rates),
        composite=composite,
        weight_sensitivity=sensitivity,
    )
    return Report(
        schema_version=SCHEMA_VERSION,
        batch=batch,
        generated_at=(generated_at or datetime.now(UTC)).isoformat(timespec="seconds"),
        mode=Mode(rubric.mode),
        models=tuple(models),
        scenarios=tuple(scenario_blocks),
        overall=overall_block,
        reviewers=tuple(reviewer_diagnostics(parts, rubric, None if pairwise else scored) if diagnostics else ()),
        beside=_beside(rubric, main, overall, outputs, strata=strata),
        methods=_methods(rubric, parts, seed=seed, rounds=rounds, draws=sensitivity_draws),
    )


def _estimate(
    rubric: Rubric, frame: pd.DataFrame, overall: pd.DataFrame, scen: str, dim: str, samples: list[Any], w: np.ndarray
) -> Estimate | None:
    if rubric.mode == Mode.PAIRWISE:
        part = frame if dim == OVERALL else frame[frame["dimension"] == dim]
        if dim == OVERALL and any(d.name == OVERALL for d in rubric.dimensions_for(scen)):
            part = frame[frame["dimension"] == OVERALL]
        models = sorted(set(part["model_a"]) | set(part["model_b"]))
        return pairwise_estimate(part, models, samples, w) if len(part) else None
    part = overall[overall["scenario"] == scen] if dim == OVERALL else frame[frame["dimension"] == dim]
    part = part.dropna(subset=["score"])
    models = sorted(set(part["model_a"]))
    return rating_estimate(part, models, samples, w) if len(part) else None


def _beside(
    rubric: Rubric, main: pd.DataFrame, overall: pd.DataFrame, outputs: pd.DataFrame, *, strata: Strata
) -> Beside:
    if rubric.mode == Mode.PAIRWISE:
        points = secondary_measures.pairwise_points(main)
        bias = secondary_measures.left_win_rate(main, strata=strata)
        effect = None
    else:
        points = overall.rename(columns={"model_a": "model", "repeat_a": "repeat"})
        bias = None
        effect = secondary_measures.position_effect(overall, strata=strata)
    return Beside(
        outputs=tuple(secondary_measures.output_stats(outputs)),
        position_bias=bias,
        position_effect=effect,
        stability=tuple(secondary_measures.stability(points)) if not points.empty else (),
    )


def _methods(rubric: Rubric, parts: RatingParts, *, seed: int, rounds: int, draws: int) -> Methods:
    return Methods(
        seed=seed,
        bootstrap_rounds=rounds,
        weight_draws=draws,
        confidence=0.95,
        counts=Counts(
            ratings=len(parts.main),
            gold_ratings=len(parts.gold),
            repeat_ratings=len(parts.repeats),
            reviewers=int(parts.main["reviewer"].nunique()),
            items=int(parts.main["item_id"].nunique()),
        ),
        dimensions=tuple(
            MethodDimension(name=d.name, scale=d.scale, level=d.level, min=d.min, max=d.max) for d in rubric.dimensions
        ),
        definitions=tuple(METHODS_TEXT[rubric.mode] + METHODS_TEXT["common"]),
    )


METHODS_TEXT: dict[str, list[str]] = {
    "rating": [
        "Score: the mean of all ratings a model's outputs received on a dimension (first showings of "
        "ordinary items; gold items and silent repeats are left out).",
        "Overall (rating mode): each rating's numeric dimensions are rescaled to 0-1 "
        "((value - min) / (max - min)) and averaged, so a binary and a 1-5 dimension weigh the same; "
        "the overall score is the mean of those per-rating values (0 = lowest, 1 = highest possible). "
        "Categorical dimensions get agreement only, no score.",
        "Overall agreement (rating mode) is Krippendorff's alpha of those per-rating 0-1 values at interval level.",
    ],
    "pairwise": [
        "Answers are first mapped back to the canonical model order (undoing the blind left/right swap).",
        "Score: Bradley-Terry log-strength, fitted by penalised maximum likelihood (penalty 0.01 x sum of "
        "squared strengths, as choix.opt_pairwise), so strengths sum to 0 and an undefeated model stays "
        "finite. A tie or 'both bad' counts half a win to each side.",
        "Overall (pairwise, several dimensions): all dimensions' comparisons pooled in one fit.",
        "Agreement: Krippendorff's alpha at nominal level over the canonical answers (a, b, tie, both bad).",
    ],
    "common": [
        "Agreement: Krippendorff's alpha (krippendorff package) at the dimension's level of measurement; "
        "95% CI by bootstrap over items (units) rated at least twice. Alpha is null with a reason when "
        "undefined: one reviewer, no item rated twice, or no variation at all.",
        "CIs: cluster bootstrap over samples (all of a sample's ratings resampled together), percentile 95% "
        "intervals; scenarios are resampled separately (stratified) when pooled.",
        "Rank = 1 + the number of models significantly better (the 95% paired bootstrap CI of the difference "
        "excludes 0). Tiers: walking down the scores, a new tier starts at the first model significantly "
        "worse than the current tier's leader.",
        "Separation warning: the smallest difference separable with 80% power at the 5% level is about "
        "2.8 bootstrap standard errors of a paired difference; a warning appears when that exceeds the "
        "spread between the best and the worst model.",
        "Composite: weighted mean over scenarios of each model's overall score (weights from the rubric or "
        "the lead, missing = 1), with the same stratified bootstrap. Weight sensitivity: random weightings "
        "drawn uniformly from the simplex (Dirichlet(1, ..., 1)); how often each model comes first and its "
        "range of ranks.",
        "Reviewer flags: leniency of at least 0.10 of the scale versus the other reviewers of the same items "
        "(10+ shared ratings), alpha rising by 0.05+ without the reviewer, gold accuracy under 70% (3+ gold "
        "answers), or self-consistency under 60% (3+ repeats).",
        "Position: pairwise mode reports the share of decisive answers that picked the left side (0.5 = no "
        "bias); rating mode reports the slope of score versus queue position.",
    ],
}
