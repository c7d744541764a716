"""Build the report: a :class:`~reviewer_app.domain.report.Report` (its JSON form is ``reporting/schema.json``).

This module only computes; ``reviewer_app.reporting`` renders the report as JSON, CSV, Markdown and HTML. It
assembles the sections in order (per scenario, across scenarios, reviewers, beside quality, methods,
comments), each from its module of ``analysis``; the prepared inputs and a ranking table being built are
``report_inputs``'s, the warnings and cautions it adds ``report_cautions``'.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

import numpy as np
import pandas as pd

from reviewer_app.analysis import secondary_measures
from reviewer_app.analysis.agreement import agreement_rows
from reviewer_app.analysis.agreement_windows import agreement_trends
from reviewer_app.analysis.anytime import anytime_pairwise_scenario, anytime_scenario
from reviewer_app.analysis.benchmarks import benchmark_sections
from reviewer_app.analysis.checks import check_panel_rows, check_rows
from reviewer_app.analysis.comments import comment_groups
from reviewer_app.analysis.composite import composite_section, scenario_weights
from reviewer_app.analysis.decisions import separation_warning
from reviewer_app.analysis.diagnostics import reviewer_diagnostics
from reviewer_app.analysis.disputes import adjudication_section
from reviewer_app.analysis.fragility import fragility_rows, reviewer_parts
from reviewer_app.analysis.judge_section import judge_section
from reviewer_app.analysis.methods import METHODS_TEXT, methods_block
from reviewer_app.analysis.prepare import (
    OVERALL,
    OVERALL_AGREED,
    anchor_mask,
    bootstrap_weights,
    compact_counts,
    sub_rng,
)
from reviewer_app.analysis.ranking import Estimate, pool_pairwise, pool_rating
from reviewer_app.analysis.report_cautions import (
    add_cautions,
    agreed_variant,
    dimension_caution,
    dominance_warning,
    low_dimensions,
    low_warning,
    unblinded_raters_warning,
)
from reviewer_app.analysis.report_inputs import Block, Inputs, ranked_dimensions, score_unit
from reviewer_app.analysis.reviewer_effects import (
    design_row,
    design_warning,
    panel_variance,
    pooled_mask,
    reviewer_design,
)
from reviewer_app.analysis.secondary_measures import Strata
from reviewer_app.analysis.style_control import style_features, style_ranking
from reviewer_app.domain.benchmarks import BenchmarkScores, BenchmarkSection
from reviewer_app.domain.enums import Mode
from reviewer_app.domain.report import SCHEMA_VERSION, Report
from reviewer_app.domain.report_anytime import AnytimeScenario
from reviewer_app.domain.report_assisted import JudgeRun
from reviewer_app.domain.report_fragility import FragilityRow
from reviewer_app.domain.report_panel import Beside
from reviewer_app.domain.report_rankings import LeftOutRow, OverallReport, ReviewerDesignRow, ScenarioReport
from reviewer_app.domain.report_style import StyleRanking
from reviewer_app.domain.report_windows import AgreementTrend
from reviewer_app.domain.rubric import Rubric
from reviewer_app.domain.words import join_names

__all__ = ["DEFAULT_ROUNDS", "METHODS_TEXT", "SCHEMA_VERSION", "anytime_verdicts", "build_report"]

DEFAULT_ROUNDS = 1000


def _output_models(outputs: pd.DataFrame) -> dict[str, set[str]]:
    """Scenario -> the models with (not excluded) outputs there."""
    if outputs.empty or "scenario" not in outputs:
        return {}
    frame = outputs[~outputs["excluded"].astype(bool)] if "excluded" in outputs else outputs
    pairs = frame[["scenario", "model"]].drop_duplicates()
    out: dict[str, set[str]] = {}
    for scen, model in zip(pairs["scenario"].tolist(), pairs["model"].tolist(), strict=True):
        out.setdefault(str(scen), set()).add(str(model))
    return out


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
    comments: pd.DataFrame | None = None,
    answer_counts: pd.DataFrame | None = None,
    benchmarks: BenchmarkScores | None = None,
    checks: pd.DataFrame | None = None,
    judge: pd.DataFrame | None = None,
    judge_run: JudgeRun | None = None,
    completions: list[str] | None = None,
    rulings: pd.DataFrame | None = None,
    use_rulings: bool = False,
) -> Report:
    """Compute the whole report for one batch from the storage frames.

    ``ratings``/``outputs`` are ``ratings_frame``/``outputs_frame``; ``weights`` overrides the rubric's
    scenario weights for the composite; ``diagnostics=False`` leaves the reviewer table empty;
    ``comments``/``answer_counts`` (``comments_frame``/``answer_counts_frame``) give the reviewers' comments
    and can't-judge reasons (none without them); ``benchmarks`` puts public benchmark scores beside each
    scenario's and the overall ranking (see ``aggregation.benchmarks``; no section without them); ``checks``
    (``checks_frame``) gives each scenario the automatic checks' pass rates (``aggregation.checks``); ``judge``
    (``judge_frame``) with its ``judge_run`` adds the "Judge vs panel" section (:mod:`.judge_section`), which
    no other section reads; ``completions`` (the complete samples in the order they were completed:
    ``results.completions``) adds the anytime-valid verdicts (rating mode). ``rulings`` (``rulings_frame``)
    adds the adjudication section, and with ``use_rulings`` the rankings read each ruled item's answers as
    its ruling (:mod:`.disputes`; agreement and the reviewer table stay the panel's). The result is
    deterministic for a given ``seed`` and ``rounds``, and its ranks, tiers and letters do not depend on
    either. Raises ValueError when ``rounds`` is below 1.
    """
    if rounds < 1:
        raise ValueError("rounds must be at least 1")
    # A follow-up batch's anchor items (the baseline's own outputs shown again) measure the panel's shift
    # between rounds (``compare``); they are no model's answers here, so no ranking, agreement figure or
    # reviewer diagnostic of this report counts them, and the report says how many it left out.
    anchor_note = None
    is_anchor = anchor_mask(ratings)
    if is_anchor.any():
        anchor_note = _anchor_note(int(ratings.loc[is_anchor, "item_id"].nunique()), int(is_anchor.sum()))
        ratings = ratings[~is_anchor].reset_index(drop=True)
    data = Inputs(ratings, rubric, rounds, seed, rulings if use_rulings else None)
    main, scored, pairwise = data.main, data.scored, data.pairwise
    scenarios = sorted(main["scenario"].unique().tolist())

    with_outputs = _output_models(outputs)
    batch_models = _batch_models(main, outputs) if benchmarks is not None else set()
    per_dim: dict[str, dict[str, Estimate]] = {}  # dimension -> scenario -> estimate
    strata: Strata = {}  # scenario -> (samples, bootstrap weights)
    scenario_blocks = []
    style: list[StyleRanking] = []
    fragility: list[FragilityRow] = []
    for scen in scenarios:
        frame = scored[scored["scenario"] == scen]
        samples = sorted(frame["sample_id"].unique().tolist())
        w = bootstrap_weights(len(samples), rounds, sub_rng(seed, "samples", scen))
        strata[scen] = (samples, compact_counts(w))  # float64 again where used (_overall, _beside)
        agreement = agreement_rows(
            data.panel_main, rubric, scenario=scen, rounds=rounds, seed=seed, overall=data.panel_overall
        )
        dims = data.scored_dims(scen)
        low = low_dimensions(agreement)
        without = agreed_variant(low, dims)
        block = Block()
        for dim in ranked_dimensions(rubric, scen) + ([OVERALL_AGREED] if without else []):
            est = data.estimate(frame, scen, dim, samples, w, without or frozenset())
            if est is None:
                continue
            if dim != OVERALL_AGREED:
                per_dim.setdefault(dim, {})[scen] = est
            label = scen if dim == OVERALL else f"{scen} ({dim})"
            if dim == OVERALL_AGREED:
                label = f"{scen} (overall without {join_names(sorted(without or ()))})"
            ranking = block.add(est, dim, label, pairwise)
            design = data.designs.get((scen, dim))
            if design is not None:
                block.designs.append(design_row(dim, design))
                block.warnings.append(design_warning(label, design))
                if design.confounded:  # "tied" in the sentence above means "not compared" for these pairs
                    pairs = join_names([f"{a} and {b}" for a, b in design.confounded])
                    block.summary[dim] += f" Not compared, as no reviewer links them: {pairs}."
            warning = separation_warning(est, len(samples), f"{scen} / {dim}", score_unit(rubric, dim), ranking.pair_se)
            if warning:
                block.warnings.append(warning)
        style += _style(block, outputs, scen, samples, w, rubric)
        fragility += _fragility(data, block, frame, scen, samples)
        if low:
            block.warnings.insert(0, low_warning(agreement, dims, scen, block.reliability))
        add_cautions(block.summary, agreement, block.reliability)
        for extra in (dominance_warning(frame, scen), unblinded_raters_warning(frame, scen)):
            if extra:
                block.warnings.append(extra)
        rated = set(frame["model_a"].dropna()) | (set(frame["model_b"].dropna()) if pairwise else set())
        no_ratings = tuple(sorted(with_outputs.get(scen, set()) - rated))
        if no_ratings:
            block.warnings.append(f"{scen}: no ratings yet for {join_names(no_ratings)}, so not ranked here.")
        scenario_blocks.append(
            ScenarioReport(
                scenario=scen,
                n_samples=len(samples),
                n_ratings=int(frame["item_id"].count()),
                agreement=tuple(agreement),
                ranking=tuple(block.ranking),
                pairs=tuple(block.pairs),
                summary=block.summary,
                warnings=tuple(block.warnings),
                low_agreement=low,
                reliability=tuple(block.reliability),
                no_ratings=no_ratings,
                win_rates=None if block.win_rates is None else tuple(block.win_rates),
                benchmarks=_benchmarks(benchmarks, block, scen, batch_models),
                reviewer_design=tuple(block.designs) or None,
                ties=None if block.ties is None else tuple(block.ties),
                tie_model=None if block.tie_model is None else tuple(block.tie_model),
                **_checks(checks, data, scen),
            )
        )

    models = sorted(set(main["model_a"].dropna()) | (set(main["model_b"].dropna()) if pairwise else set()))
    overall_block = _overall(data, per_dim, strata, scenarios, models, set(with_outputs), weights, sensitivity_draws,
                             (benchmarks, batch_models))  # fmt: skip
    if anchor_note is not None:
        overall_block = replace(overall_block, warnings=(*overall_block.warnings, anchor_note))
    adjudication = None if rulings is None else adjudication_section(ratings, rulings, rubric, used=use_rulings)
    if adjudication is not None and adjudication.used and adjudication.ruled:
        note = (f"These rankings use {adjudication.ruled} ruling{'s' if adjudication.ruled != 1 else ''} on "
                "disputed items in place of the panel's answers there (see Adjudication); the default report "
                "ranks the panel as it answered.")  # fmt: skip
        overall_block = replace(overall_block, warnings=(note, *overall_block.warnings))
    report_blocks = (*scenario_blocks,)
    return Report(
        schema_version=SCHEMA_VERSION,
        batch=batch,
        generated_at=(generated_at or datetime.now(UTC)).isoformat(timespec="seconds"),
        mode=Mode(rubric.mode),
        models=tuple(models),
        scenarios=report_blocks,
        overall=overall_block,
        reviewers=tuple(
            reviewer_diagnostics(data.parts, rubric, None if pairwise else data.panel_scored) if diagnostics else ()
        ),
        beside=_beside(rubric, main, data.overall, outputs, strata=strata),
        methods=methods_block(rubric, data.parts, seed=seed, rounds=rounds, draws=sensitivity_draws,
                              blocks=[*report_blocks, overall_block]),
        comments=() if comments is None or answer_counts is None else comment_groups(comments, answer_counts),
        judge=None if judge is None or judge_run is None else judge_section(data, ratings, judge, outputs, judge_run,
                                                                            seed=seed),
        anytime=None if completions is None else _anytime(data, completions, rubric.allocation.tolerance),
        style=tuple(style) or None,
        fragility=tuple(fragility) or None,
        agreement_trends=None if completions is None else _trends(data, completions),
        adjudication=adjudication,
    )  # fmt: skip


def _style(
    block: Block, outputs: pd.DataFrame, scen: str, samples: list[Any], w: np.ndarray, rubric: Rubric
) -> list[StyleRanking]:
    """The scenario's rankings with style held fixed (:mod:`.style_control`), one per ranked dimension."""
    out = []
    mine = outputs[outputs["scenario"] == scen] if "scenario" in outputs else outputs
    for dim, est in block.estimates.items():
        if dim == OVERALL_AGREED:
            continue  # the ranking without low-agreement dimensions: a variant, not a dimension of its own
        features = style_features(mine, samples, est.models)
        if features is None:
            return []
        ranked = style_ranking(est, features, w, scenario=scen, dimension=dim, unit=score_unit(rubric, dim))
        if ranked is not None:
            out.append(ranked)
    return out


def _fragility(data: Inputs, block: Block, frame: pd.DataFrame, scen: str, samples: list[Any]) -> list[FragilityRow]:
    """How fragile the scenario's overall verdicts are (:mod:`.fragility`): by samples, and by reviewers unless
    the scores were adjusted for reviewers (then a reviewer's share is not theirs alone)."""
    est = block.estimates.get(OVERALL)
    if est is None:
        return []
    if (scen, OVERALL) in data.designs:
        return fragility_rows(est, samples, scenario=scen, dimension=OVERALL)
    if data.pairwise:
        asked = frame["dimension"] == OVERALL
        part = frame[asked] if asked.any() else frame
    else:
        part = data.overall[data.overall["scenario"] == scen]
    parts = reviewer_parts(part, est, samples, pairwise=data.pairwise)
    return fragility_rows(est, samples, scenario=scen, dimension=OVERALL, by_reviewer=parts)


def _trends(data: Inputs, completions: list[str]) -> tuple[AgreementTrend, ...] | None:
    """Agreement over time (:mod:`.agreement_windows`) on the overall score, or the pairwise overall question."""
    pairwise = None
    if data.pairwise:
        asked = data.panel_main["dimension"] == OVERALL
        pairwise = data.panel_main[asked] if asked.any() else data.panel_main
    return agreement_trends(data.panel_overall, pairwise, completions, rounds=data.rounds, seed=data.seed)


def anytime_verdicts(ratings: pd.DataFrame, rubric: Rubric, completions: list[str]) -> tuple[AnytimeScenario, ...]:
    """The report's anytime-valid verdicts alone (its ``anytime`` section, the same computation), for the
    pool's adaptive allocation, which needs them after every few samples and not the seconds of bootstrap the
    whole report costs. Empty before any sample is complete."""
    ratings = ratings[~anchor_mask(ratings)].reset_index(drop=True)
    if ratings.empty:
        return ()
    return _anytime(Inputs(ratings, rubric, 1, 0), completions, rubric.allocation.tolerance) or ()


def _anytime(data: Inputs, completions: list[str], tolerance: float | None) -> tuple[AnytimeScenario, ...] | None:
    """Each scenario's anytime-valid verdicts (see :mod:`.anytime`): on its overall score in rating mode, head to
    head on the overall question (or every question, as the pairwise ranking pools them) in pairwise mode.
    Equivalence within the rubric's ``tolerance`` (None: 5% of the range; pairwise: a win-share margin, win
    shares within 55:45 at 0.05); None when none can be made (no scenario with a complete sample yet)."""
    out = []
    for scen in sorted(data.main["scenario"].unique().tolist()):
        planned = int(data.main.loc[data.main["scenario"] == scen, "sample_id"].nunique())
        if data.pairwise:
            part = data.main[data.main["scenario"] == scen]
            if any(d.name == OVERALL for d in data.rubric.dimensions_for(scen)):
                part = part[part["dimension"] == OVERALL]
            margin = None if tolerance is None else 2 * tolerance  # win share 0.5 + t: a difference of 2t
            verdict = anytime_pairwise_scenario(part, scen, OVERALL, completions, planned, tolerance=margin)
        else:
            part = data.overall[data.overall["scenario"] == scen]
            verdict = anytime_scenario(part, scen, OVERALL, completions, (0.0, 1.0), planned, tolerance=tolerance)
        if verdict is not None:
            out.append(verdict)
    return tuple(out) or None


def _benchmarks(
    scores: BenchmarkScores | None, block: Block, scope: str | None, batch_models: set[str]
) -> tuple[BenchmarkSection, ...] | None:
    """The benchmark sections beside ``block``'s "overall" ranking (None without benchmark scores)."""
    if scores is None:
        return None
    est = block.estimates.get(OVERALL)
    return benchmark_sections(scores, est, block.ranking, block.pairs, scope=scope, batch_models=batch_models)


def _checks(checks: pd.DataFrame | None, data: Inputs, scen: str) -> dict[str, Any]:
    """The scenario's ``checks`` and ``checks_vs_panel`` fields (left out where it has no checks; the
    correlation needs rating mode's per-output overall score)."""
    rows = () if checks is None else check_rows(checks, scen, rounds=data.rounds, seed=data.seed)
    if not rows:
        return {}
    assert checks is not None
    panel = None if data.pairwise else check_panel_rows(checks, data.overall, scen, rounds=data.rounds, seed=data.seed)
    return {"checks": rows, "checks_vs_panel": panel}


def _batch_models(main: pd.DataFrame, outputs: pd.DataFrame) -> set[str]:
    """Every model of the batch: rated (either side of a pair) or with outputs."""
    names = set(main["model_a"].dropna())
    if "model_b" in main:
        names |= set(main["model_b"].dropna())
    if "model" in outputs:
        names |= set(outputs["model"].dropna())
    return {str(m) for m in names}


def _anchor_note(items: int, ratings: int) -> str:
    return (
        f"This is a follow-up batch: {items} anchor item(s) ({ratings} rating(s)), the baseline batch's own "
        "outputs shown again to measure how the panel moved between rounds, are left out of every ranking, "
        "agreement figure and reviewer diagnostic here; `blind-review compare` uses them."
    )


def _overall(
    data: Inputs,
    per_dim: dict[str, dict[str, Estimate]],
    strata: Strata,
    scenarios: list[str],
    models: list[str],
    output_scenarios: set[str],
    weights: dict[str, float] | None,
    draws: int,
    benchmarks: tuple[BenchmarkScores | None, set[str]] = (None, set()),
) -> OverallReport:
    """Across scenarios: each dimension pooled over the models rated in every scenario it was ranked in (and
    ``benchmarks``, the scores and the batch's models, beside the pooled "overall")."""
    rubric, pairwise = data.rubric, data.pairwise
    agreement = agreement_rows(data.main, rubric, scenario=None, rounds=data.rounds, seed=data.seed,
                               overall=data.overall)  # fmt: skip
    dims = data.scored_dims(None)
    low = low_dimensions(agreement)
    without = agreed_variant(low, dims)
    block = Block()
    left_out: list[LeftOutRow] = []
    pooled = dict(per_dim)
    if without:
        agreed: dict[str, Estimate] = {}
        for scen in scenarios:
            samples, counts = strata[scen]
            w = counts.astype(np.float64)
            frame = data.scored[data.scored["scenario"] == scen]
            est = data.estimate(frame, scen, OVERALL_AGREED, samples, w, without)
            if est is not None:
                agreed[scen] = est
        pooled[OVERALL_AGREED] = agreed
    for dim, by_scen in pooled.items():
        present = {m for est in by_scen.values() for m, n in zip(est.models, est.n, strict=True) if n > 0}
        kept = []
        for m in sorted(present):
            missing = tuple(s for s, est in by_scen.items() if m not in est.models or est.n[est.models.index(m)] == 0)
            if missing:
                left_out.append(LeftOutRow(model=m, dimension=dim, missing_in=missing))
            else:
                kept.append(m)
        if not kept:
            continue
        estimates = list(by_scen.values())
        est = pool_pairwise(estimates, kept) if pairwise else pool_rating(estimates, kept)
        label = f"all scenarios ({dim})"
        if dim == OVERALL_AGREED:
            label = f"all scenarios (overall without {join_names(sorted(without or ()))})"
        est.confounded = pooled_mask([(e.models, e.confounded) for e in estimates], kept)
        if not pairwise and dim != OVERALL_AGREED:  # the same reviewers across scenarios: one variance component
            pooled_frame = data.overall if dim == OVERALL else data.scored[data.scored["dimension"] == dim]
            spread = panel_variance(pooled_frame, kept)
            if spread is not None:
                est.panel_var, est.panel_reviewers = spread[1], spread[2]
        block.add(est, dim, label, pairwise)
        adjusted = [s for s in by_scen if (s, dim) in data.designs]
        if adjusted:
            block.designs.append(_pooled_design(data, dim, adjusted, est))
            block.warnings.append(
                f"{label}: uses the reviewer-adjusted scores of {join_names(adjusted)}, where reviewers did not "
                "rate the models evenly (see those scenarios)."
            )
        gone = [r.model for r in left_out if r.dimension == dim]
        if gone:
            block.summary[dim] += f" Not ranked across scenarios (no ratings in some): {join_names(gone)}."
    if low:
        block.warnings.insert(0, low_warning(agreement, dims, "All scenarios", block.reliability))
    add_cautions(block.summary, agreement, block.reliability)
    for extra in (
        dominance_warning(data.main, "All scenarios"),
        unblinded_raters_warning(data.main, "All scenarios"),
    ):
        if extra:
            block.warnings.append(extra)
    if left_out:
        for m in dict.fromkeys(r.model for r in left_out):
            where = sorted({s for r in left_out if r.model == m for s in r.missing_in})
            block.warnings.append(
                f"{m} has no ratings in {join_names(where)}, so it is left out of the rankings across scenarios "
                "(they compare models over the same scenarios only)."
            )
    unrated = sorted(output_scenarios - set(scenarios))
    if unrated:
        block.warnings.append(f"No ratings yet in {join_names(unrated)}.")
    used_weights = scenario_weights(scenarios, rubric.scenario_weights, weights)
    composite, sensitivity = composite_section(
        per_dim.get(OVERALL, {}), used_weights, models, seed=data.seed, draws=draws
    )
    # The composite weighs the scenarios' overall scores; the pooled overall ranking's reliability stands for it.
    caution = dimension_caution(OVERALL, agreement, block.reliability)
    if caution and composite.ranking:
        composite = replace(composite, summary=f"{caution} {composite.summary}")
    return OverallReport(
        agreement=tuple(agreement),
        ranking=tuple(block.ranking),
        pairs=tuple(block.pairs),
        summary=block.summary,
        warnings=tuple(block.warnings),
        low_agreement=low,
        reliability=tuple(block.reliability),
        left_out=tuple(left_out),
        win_rates=None if block.win_rates is None else tuple(block.win_rates),
        composite=composite,
        weight_sensitivity=sensitivity,
        benchmarks=_benchmarks(benchmarks[0], block, None, benchmarks[1]),
        reviewer_design=tuple(block.designs) or None,
        ties=None if block.ties is None else tuple(block.ties),
        tie_model=None if block.tie_model is None else tuple(block.tie_model),
    )


def _pooled_design(data: Inputs, dim: str, adjusted: list[str], est: Estimate) -> ReviewerDesignRow:
    """The design row of a ranking pooled over scenarios, some of whose scenarios were reviewer-adjusted: the
    imbalance over all its ratings, the largest reviewer spread among the parts, and its confounded pairs."""
    frame = data.overall if dim in (OVERALL, OVERALL_AGREED) else data.scored[data.scored["dimension"] == dim]
    whole = reviewer_design(frame.dropna(subset=["score"]))
    parts = [data.designs[(s, dim)] for s in adjusted]
    spreads = [p.reviewer_sd for p in parts if p.reviewer_sd is not None]
    mask = est.confounded if est.confounded is not None else np.zeros((0, 0), dtype=bool)
    pairs = tuple((est.models[a], est.models[b]) for a, b in zip(*np.nonzero(np.triu(mask)), strict=True))
    merged = replace(whole, adjusted=True, confounded=pairs, reviewer_sd=max(spreads) if spreads else None)
    return design_row(dim, merged)


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
