"""The report's judge-assisted rankings: per scenario and dimension, the panel's ranking recomputed with an LLM
judge's ratings of every output by prediction-powered inference (:mod:`.judge_ppi`), beside the panel's.

The judge's ratings go through the report's own preparation (:class:`~reviewer_app.analysis.report_inputs.Inputs`:
gold items and anchors left out, scores and the 0-1 overall made as for the panel), each of the judge's
repeats as a rater of its own, so that a judge asked R times counts once per output with its mean. Rating
batches only: a pairwise batch's ranking is of Bradley-Terry strengths, not of means that a judge's error can
be measured on and subtracted from, so there the report card alone measures the judge (the section says so).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from reviewer_app.analysis.decisions import describe, ranking_rows
from reviewer_app.analysis.judge_ppi import JudgeAssisted, judge_assisted_estimate
from reviewer_app.analysis.prepare import OVERALL, finite_or_none, sub_rng
from reviewer_app.analysis.report_inputs import Inputs, ranked_dimensions
from reviewer_app.domain.enums import Mode
from reviewer_app.domain.report_assisted import AssistedModelRow, AssistedRanking
from reviewer_app.domain.rubric import Rubric

__all__ = ["PAIRWISE_NOTE", "assisted_rankings"]

PAIRWISE_NOTE = (
    "Judge-assisted rankings are made for rating batches; in a pairwise batch the report card measures the "
    "judge, and the panel's ranking stands alone."
)


def _scored(frame: pd.DataFrame, rubric: Rubric, dim: str, scenario: str, data: Inputs) -> pd.DataFrame:
    """One scenario's scores on ``dim`` (or the overall), as ``sample_id``, ``model_a``, ``reviewer``, ``score``."""
    if dim == OVERALL:
        part = data.overall[data.overall["scenario"] == scenario]
    else:
        part = frame[(frame["scenario"] == scenario) & (frame["dimension"] == dim)]
    return part.dropna(subset=["score"])[["sample_id", "model_a", "reviewer", "score"]]


def _as_raters(judge: pd.DataFrame) -> pd.DataFrame:
    """The judge's frame with each repeat a rater of its own (first showings all), so that the report's
    preparation keeps every repeat and the estimate takes each output's mean over them."""
    repeat = judge["occurrence"].astype(int)
    return judge.assign(reviewer=judge["reviewer"].astype(str) + "#" + repeat.astype(str), occurrence=0)


def assisted_rankings(
    panel: Inputs, judge: pd.DataFrame, rubric: Rubric, *, seed: int, rounds: int
) -> tuple[list[AssistedRanking], list[str]]:
    """Each scenario's judge-assisted rankings (every numeric dimension, then the overall) from the panel's
    prepared ratings and the judge's ratings frame (``results.frames.judge_frame``), and notes where one could
    not be made (why, in words for the report). Deterministic for ``seed``, whatever the order of scenarios."""
    if Mode(rubric.mode) is Mode.PAIRWISE:
        return [], [PAIRWISE_NOTE]
    if judge.empty:
        return [], ["The judge has no answered judgements in this batch yet."]
    mine = Inputs(_as_raters(judge), rubric, rounds, seed)
    out: list[AssistedRanking] = []
    notes: list[str] = []
    everything: list[str] = []  # scenarios where the panel rated all the judge did: nothing to add
    for scenario in sorted(panel.scored["scenario"].unique().tolist()):
        if not (mine.scored["scenario"] == scenario).any():
            notes.append(f"{scenario}: the judge rated none of its outputs, so it has no judge-assisted ranking.")
            continue
        for dim in ranked_dimensions(rubric, scenario):
            h = _scored(panel.scored, rubric, dim, scenario, panel)
            j = _scored(mine.scored, rubric, dim, scenario, mine)
            if h.empty or j.empty:
                continue
            models = sorted(set(h["model_a"]) | set(j["model_a"]))
            samples = sorted(set(h["sample_id"]) | set(j["sample_id"]))
            higher = True if dim == OVERALL else rubric.dimension(dim).higher_is_better
            try:
                fit = judge_assisted_estimate(
                    j, h, models, samples, sub_rng(seed, "judge-assisted", scenario, dim), rounds=rounds,
                    higher_is_better=higher,
                )  # fmt: skip
            except ValueError as exc:
                notes.append(f"{scenario} / {dim}: no judge-assisted ranking. {exc}")
                continue
            if not (fit.judged > fit.labelled).any():
                everything.append(scenario)
                break
            out.append(_ranking(scenario, dim, fit, h))
    if everything:
        notes.append(
            f"{', '.join(everything)}: the panel rated every sample the judge rated, so the judge has nothing to add "
            "to the panel's ranking there (a judge-assisted ranking is worth having when the judge rates every "
            "output and the panel a random part of them)."
        )
    return out, notes


def _panel_half_width(fit: JudgeAssisted, k: int) -> float:
    """Half the panel-alone 95% interval of model ``k``: Student's t at n - 1 degrees of freedom (n its rated
    samples), the reference a mean of so few samples needs (the judge-assisted interval uses t too)."""
    n = int(fit.labelled[k])
    return float(stats.t.ppf(0.975, n - 1) * fit.panel_se[k]) if n > 1 else float("nan")


def _ranking(scenario: str, dim: str, fit: JudgeAssisted, panel: pd.DataFrame) -> AssistedRanking:
    ranked = ranking_rows(fit.estimate, dim)
    counts = panel.groupby("model_a").size()
    half = [_panel_half_width(fit, k) for k in range(len(fit.models))]
    rows = []
    for k, model in enumerate(fit.models):
        point = fit.panel_point[k]
        rows.append(
            AssistedModelRow(
                model=model,
                dimension=dim,
                judge_weight=finite_or_none(float(fit.lam[k])) if fit.labelled[k] else None,
                judged_samples=int(fit.judged[k]),
                panel_samples=int(fit.labelled[k]),
                panel_score=finite_or_none(float(point)),
                panel_ci_low=finite_or_none(float(point - half[k])),
                panel_ci_high=finite_or_none(float(point + half[k])),
                panel_ratings=int(counts.get(model, 0)),
                effective_ratings=finite_or_none(float(fit.effective_ratings[k])),
            )
        )
    widths = [
        (r.ci_high - r.ci_low) / (2 * half[fit.models.index(r.model)])
        for r in ranked.rows
        if r.ci_high is not None and r.ci_low is not None and half[fit.models.index(r.model)] > 0
    ]
    label = scenario if dim == OVERALL else f"{scenario} ({dim})"
    summary = describe(ranked.rows, ranked.better, fit.models, label)
    return AssistedRanking(
        scenario=scenario,
        dimension=dim,
        ranking=tuple(ranked.rows),
        pairs=tuple(ranked.pairs),
        models=tuple(rows),
        width_ratio=finite_or_none(float(np.mean(widths))) if widths else None,
        summary=summary,
    )
