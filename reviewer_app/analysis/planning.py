"""Plan a study before it runs (issue 30, section 1): the samples per scenario that separate a gap with the
report's own decision, at each number of reviewers per output, and the power curve behind the answer.

Every power here is :func:`~reviewer_app.analysis.power.simulated_power`: panels simulated from variance components
(a sample's effect, an output's own quality, a reviewer's leniency, a rating's noise) and decided by the
report's sign-flip test with Holm's correction over every pair, as a ranking is; the samples needed are its
:func:`~reviewer_app.analysis.power.samples_needed`. The components come from a pilot batch (measured per
scenario by :func:`~reviewer_app.analysis.power.variance_components` on one dimension's ratings) or are stated.

What k buys: more reviewers per output shrink only the rating noise in a paired difference (leniency and
residual, divided by k), never the outputs' own variation (the sample x model term), so past a point more
samples are the cheaper way to power; the table says what each k costs in judgements.
"""

from __future__ import annotations

import math

import pandas as pd

from reviewer_app.analysis.power import (
    ADVICE_SEED,
    MAX_SAMPLES,
    Components,
    samples_needed,
    simulated_power,
    variance_components,
)
from reviewer_app.analysis.prepare import OVERALL, add_scores, overall_rows, split_ratings
from reviewer_app.domain.plans import CurvePoint, Plan, PlanRow
from reviewer_app.domain.rubric import Rubric

__all__ = ["CURVE_SIMS", "pilot_components", "plan_study"]

CURVE_SIMS = 1_000  # panels per point of the curve (Monte Carlo error about 1.3 points at 80%)


def pilot_components(ratings: pd.DataFrame, rubric: Rubric, dimension: str) -> dict[str, Components]:
    """Each scenario's variance components measured on a pilot batch's ratings of ``dimension`` (a numeric
    question, or "overall": the 0-1 mean of the numeric questions, as the report ranks it); scenarios with
    too few ratings to measure anything are left out. Raises ValueError for a dimension the rubric cannot score."""
    main = split_ratings(ratings).main
    scored = add_scores(main, rubric)
    if dimension == OVERALL:
        frame = overall_rows(scored)
    else:
        if not any(d.name == dimension and d.numeric() for d in rubric.dimensions):
            known = ", ".join([d.name for d in rubric.dimensions if d.numeric()] + [OVERALL])
            raise ValueError(f"{dimension!r} is not a numeric question of the pilot's rubric (it has {known})")
        frame = scored[scored["dimension"] == dimension]
    out = {}
    for scenario, part in frame.dropna(subset=["score"]).groupby("scenario", sort=True):
        if part["sample_id"].nunique() >= 3 and part["model_a"].nunique() >= 2:
            out[str(scenario)] = variance_components(part[["sample_id", "model_a", "reviewer", "score"]])
    return out


def _curve_points(samples: int | None, limit: int) -> list[int]:
    """Where to draw the curve: around the answer (or up to the limit when none)."""
    top = min(limit, 2 * samples) if samples else limit
    step = max(10, math.ceil(top / 8 / 10) * 10)
    return list(range(step, top + 1, step))


def plan_study(
    components: dict[str, Components],
    *,
    models: int,
    gap: float,
    ks: list[int],
    target: float = 0.8,
    source: str = "stated assumptions",
    limit: int = MAX_SAMPLES,
    curve_sims: int = CURVE_SIMS,
) -> Plan:
    """The plan for ``models`` models whose best and worst differ by ``gap`` (score units) in each scenario
    of ``components``, at each ``k`` of ``ks``: samples for ``target`` power, and the curve at the first
    k. Deterministic (the simulations' seed is fixed: a plan a lead acts on must not move with a seed)."""
    if models < 2:
        raise ValueError("a plan needs at least 2 models")
    if not ks or min(ks) < 1:
        raise ValueError("reviewers per output (k) must be 1 or more")
    if not 0 < target < 1:
        raise ValueError("the power must be between 0 and 1 (e.g. 0.8)")
    rows: list[PlanRow] = []
    curve: list[CurvePoint] = []
    sentences: list[str] = []
    for scenario, comp in components.items():
        found: dict[int, int | None] = {}
        for k in ks:
            need = samples_needed(comp, models, k, gap, target, limit=limit)
            found[k] = need
            rows.append(
                PlanRow(
                    scenario=scenario,
                    k=k,
                    samples=need,
                    judgements=None if need is None else need * models * k,
                    difference_sd=math.sqrt(comp.difference_variance(k)),
                )
            )
        first = ks[0]
        for n in _curve_points(found[first], limit):
            est = simulated_power(comp, models, n, first, gap, sims=curve_sims, seed=ADVICE_SEED)
            curve.append(CurvePoint(scenario=scenario, k=first, samples=n, power=est.power, mc_se=est.mc_se))
        sentences.append(_sentence(scenario, found, models, gap, target, limit))
    return Plan(
        models=models,
        gap=gap,
        power=target,
        source=source,
        components={s: vars(c).copy() for s, c in components.items()},
        rows=tuple(rows),
        curve=tuple(curve),
        sentences=tuple(sentences),
    )


def _sentence(scenario: str, found: dict[int, int | None], models: int, gap: float, target: float, limit: int) -> str:
    said = []
    for k, need in found.items():
        if need is None:
            said.append(f"more than {limit:,} samples with {k} reviewer(s) per output")
        else:
            said.append(f"{need:,} samples with {k} reviewer(s) per output ({need * models * k:,} judgements)")
    cheapest = min((n * models * k, k) for k, n in found.items() if n is not None) if any(found.values()) else None
    tail = "" if cheapest is None or len(found) < 2 else f"; the fewest judgements at k = {cheapest[1]}"
    return (
        f"{scenario}: to separate the best of {models} models from the worst when they differ by {gap:g} with "
        f"{target:.0%} power: " + "; ".join(said) + tail + "."
    )
