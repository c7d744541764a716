"""Build the report: a :class:`~reviewer_app.domain.report.Report` (its JSON form is ``reporting/schema.json``).

This module only computes; ``reviewer_app.reporting`` renders the report as JSON, CSV, Markdown and HTML.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

import numpy as np
import pandas as pd

from reviewer_app.analysis import secondary_measures
from reviewer_app.analysis.agreement import agreement_rows
from reviewer_app.analysis.benchmarks import benchmark_sections
from reviewer_app.analysis.checks import check_panel_rows, check_rows
from reviewer_app.analysis.comments import comment_groups
from reviewer_app.analysis.composite import composite_section, scenario_weights
from reviewer_app.analysis.decisions import Ranking, describe, ranking_rows, separation_warning
from reviewer_app.analysis.diagnostics import reviewer_diagnostics
from reviewer_app.analysis.methods import METHODS_TEXT, methods_block
from reviewer_app.analysis.prepare import (
    ANCHOR,
    OVERALL,
    OVERALL_AGREED,
    add_scores,
    bootstrap_weights,
    canonical_outcome,
    compact_counts,
    ordinal_levels,
    overall_rows,
    split_ratings,
    sub_rng,
)
from reviewer_app.analysis.ranking import (
    Estimate,
    pairwise_estimate,
    pool_pairwise,
    pool_rating,
    rating_estimate,
    win_rates,
)
from reviewer_app.analysis.secondary_measures import Strata
from reviewer_app.domain.benchmarks import BenchmarkScores, BenchmarkSection
from reviewer_app.domain.enums import Mode
from reviewer_app.domain.report import (
    SCHEMA_VERSION,
    AgreementRow,
    Beside,
    LeftOutRow,
    OverallReport,
    PairRow,
    RankingRow,
    Report,
    ScenarioReport,
    WinRateRow,
    low_agreement_line,
    low_agreement_words,
)
from reviewer_app.domain.rubric import Rubric
from reviewer_app.domain.words import join_names

__all__ = ["DEFAULT_ROUNDS", "METHODS_TEXT", "SCHEMA_VERSION", "build_report"]

DEFAULT_ROUNDS = 1000
DOMINANT_SHARE = 0.6  # one reviewer giving more than this share of a scenario's ratings gets a warning


def _dims(rubric: Rubric, scenario: str | None) -> list[str]:
    """Dimension names that get a ranking (numeric ones in rating mode), then "overall"."""
    dims = rubric.dimensions if scenario is None else rubric.dimensions_for(scenario)
    names = [d.name for d in dims if rubric.mode == Mode.PAIRWISE or d.numeric()]
    return names + ([OVERALL] if OVERALL not in names else [])


def _unit(rubric: Rubric, dimension: str) -> str:
    if rubric.mode == Mode.PAIRWISE:
        return "Bradley-Terry log-odds"
    if dimension in (OVERALL, OVERALL_AGREED):
        return "of the 0-1 overall score"
    return "points"


@dataclass
class _Block:
    """One ranking table being built: rows, pairs, summary lines and warnings."""

    ranking: list[RankingRow] = field(default_factory=list)
    pairs: list[PairRow] = field(default_factory=list)
    summary: dict[str, str] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    win_rates: list[WinRateRow] | None = None
    estimates: dict[str, Estimate] = field(default_factory=dict)  # dimension -> estimate (benchmarks read it)

    def add(self, est: Estimate, dim: str, label: str, pairwise: bool) -> Ranking:
        ranking = ranking_rows(est, dim)
        self.estimates[dim] = est
        self.ranking += ranking.rows
        self.pairs += ranking.pairs
        self.summary[dim] = describe(ranking.rows, ranking.better, est.models, label)
        if pairwise and dim == OVERALL:
            self.win_rates = win_rates(est)
        return ranking


class _Inputs:
    """The frames and settings every part of the report reads."""

    def __init__(self, ratings: pd.DataFrame, rubric: Rubric, rounds: int, seed: int) -> None:
        self.rubric, self.rounds, self.seed = rubric, rounds, seed
        self.parts = split_ratings(ratings)
        self.pairwise = rubric.mode == Mode.PAIRWISE
        main = self.parts.main
        if self.pairwise:
            main = main.assign(outcome=canonical_outcome(main))
            self.scored, self.overall = main, main.iloc[0:0]
        else:
            self.scored = add_scores(main, rubric)
            self.overall = overall_rows(self.scored)
        self.main = main

    def estimate(
        self, frame: pd.DataFrame, scen: str, dim: str, samples: list[Any], w: np.ndarray, low: frozenset[str]
    ) -> Estimate | None:
        """The estimate of one dimension (or "overall", or "overall" without the ``low`` ones) in ``scen``."""
        rubric = self.rubric
        if self.pairwise:
            part = frame if dim in (OVERALL, OVERALL_AGREED) else frame[frame["dimension"] == dim]
            if dim == OVERALL and any(d.name == OVERALL for d in rubric.dimensions_for(scen)):
                part = frame[frame["dimension"] == OVERALL]
            if dim == OVERALL_AGREED:
                part = part[~part["dimension"].isin(list(low))]
            models = sorted(set(part["model_a"]) | set(part["model_b"]))
            return pairwise_estimate(part, models, samples, w) if len(part) else None
        if dim == OVERALL:
            part = self.overall[self.overall["scenario"] == scen]
        elif dim == OVERALL_AGREED:
            part = overall_rows(frame, without=low)
        else:
            part = frame[frame["dimension"] == dim]
        part = part.dropna(subset=["score"])
        if not len(part):
            return None
        models = sorted(set(part["model_a"]))
        if dim in (OVERALL, OVERALL_AGREED):
            return rating_estimate(part, models, samples, w)
        d = rubric.dimension(dim)
        return rating_estimate(
            part, models, samples, w, higher_is_better=d.higher_is_better, ordinal_levels=ordinal_levels(d)
        )

    def scored_dims(self, scenario: str | None) -> list[str]:
        """The named dimensions that carry scores (all of them in pairwise mode)."""
        return [d for d in _dims(self.rubric, scenario) if d != OVERALL]


def _low(agreement: list[AgreementRow]) -> tuple[str, ...]:
    return tuple(r.dimension for r in agreement if r.low_agreement)


def _low_warning(agreement: list[AgreementRow], dims: list[str], scope: str) -> str:
    """Which dimensions reviewers do not agree on, how little (the numbers), and what the overall ranking does
    about it. The block's first warning: it comes before any ranking sentence."""
    low = _low(agreement)
    text = (
        f"{scope}: reviewers {low_agreement_words(agreement)} (low agreement: alpha below 0.4 or its 95% CI "
        "reaching below 0); treat the rankings on them as weak."
    )
    named = [d for d in low if d in dims]
    if not named:
        return text
    it = "it" if len(named) == 1 else "them"
    if len(named) == len(dims):
        return text + f" '{OVERALL}' rests on {'it alone' if len(named) == 1 else 'them all'}; read it with care."
    return text + f" '{OVERALL}' still includes {it}; '{OVERALL_AGREED}' ranks the models without {it}."


def _caution(summary: dict[str, str], agreement: list[AgreementRow]) -> None:
    """Put the low-agreement sentence, with its alpha, in front of each summary line of a dimension reviewers
    do not agree on ("Reviewers barely agree on correctness (alpha 0.12): treat this ranking as weak. ...")."""
    for dim, line in summary.items():
        caution = _dimension_caution(dim, agreement)
        if caution:
            summary[dim] = f"{caution} {line}"


def _dimension_caution(dim: str, agreement: list[AgreementRow]) -> str | None:
    """The low-agreement sentence for one ranking: by the dimension's own alpha, or for a pooled "overall"
    without one (pairwise) when reviewers agree on none of the dimensions it pools."""
    own = [r for r in agreement if r.dimension == dim]
    if own:
        return low_agreement_line(own)
    measured = [r for r in agreement if r.alpha is not None]
    if dim != OVERALL or not measured or not all(r.low_agreement for r in measured):
        return None
    return f"Reviewers {low_agreement_words(measured)}, and this ranking pools them: treat it as weak."


def _agreed_variant(low: tuple[str, ...], dims: list[str]) -> frozenset[str] | None:
    """The dimensions "overall_agreed" leaves out, or None when there is no such ranking to show."""
    named = frozenset(d for d in low if d in dims)
    return named if named and len(named) < len(dims) else None


def _dominance_warning(frame: pd.DataFrame, scope: str) -> str | None:
    showings = frame[["item_id", "reviewer"]].drop_duplicates()
    if showings.empty:
        return None
    counts = showings["reviewer"].value_counts()
    share = float(counts.iloc[0]) / len(showings)
    if share <= DOMINANT_SHARE:
        return None
    return (
        f"{scope}: {counts.index[0]} gave {share:.0%} of the ratings, so this ranking is largely one person's opinion."
    )


def _unblinded_raters_warning(frame: pd.DataFrame, scope: str) -> str | None:
    """Ratings by leads or admins, who may have seen unblinded results and rated only because an admin named
    them as reviewers of the batch: they count, and the report says whose and how many."""
    if "rater_role" not in frame or frame.empty:
        return None
    showings = frame[["item_id", "reviewer", "rater_role"]].drop_duplicates(["item_id", "reviewer"])
    others = showings[showings["rater_role"] != "reviewer"]
    if others.empty:
        return None
    who = sorted(others["reviewer"].unique())
    return (
        f"{scope}: {len(others)} of {len(showings)} judgements come from {join_names(who)}, who can see unblinded "
        "results (a lead or admin named as a reviewer of this batch)."
    )


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
) -> Report:
    """Compute the whole report for one batch from the storage frames.

    ``ratings``/``outputs`` are ``ratings_frame``/``outputs_frame``; ``weights`` overrides the rubric's
    scenario weights for the composite; ``diagnostics=False`` leaves the reviewer table empty;
    ``comments``/``answer_counts`` (``comments_frame``/``answer_counts_frame``) give the reviewers' comments
    and can't-judge reasons (none without them); ``benchmarks`` puts public benchmark scores beside each
    scenario's and the overall ranking (see ``aggregation.benchmarks``; no section without them); ``checks``
    (``checks_frame``) gives each scenario the automatic checks' pass rates (``aggregation.checks``). The result is
    deterministic for a given ``seed`` and ``rounds``, and its ranks, tiers and letters do not depend on
    either. Raises ValueError when ``rounds`` is below 1.
    """
    if rounds < 1:
        raise ValueError("rounds must be at least 1")
    # A follow-up batch's anchor items (the baseline's own outputs shown again) measure the panel's shift
    # between rounds (``compare``); they are no model's answers here, so no ranking, agreement figure or
    # reviewer diagnostic of this report counts them, and the report says how many it left out.
    anchor_note = None
    if ANCHOR in ratings and ratings[ANCHOR].any():
        is_anchor = ratings[ANCHOR].to_numpy(dtype=bool)
        anchor_note = _anchor_note(int(ratings.loc[is_anchor, "item_id"].nunique()), int(is_anchor.sum()))
        ratings = ratings[~is_anchor].reset_index(drop=True)
    data = _Inputs(ratings, rubric, rounds, seed)
    main, scored, pairwise = data.main, data.scored, data.pairwise
    scenarios = sorted(main["scenario"].unique().tolist())

    with_outputs = _output_models(outputs)
    batch_models = _batch_models(main, outputs) if benchmarks is not None else set()
    per_dim: dict[str, dict[str, Estimate]] = {}  # dimension -> scenario -> estimate
    strata: Strata = {}  # scenario -> (samples, bootstrap weights)
    scenario_blocks = []
    for scen in scenarios:
        frame = scored[scored["scenario"] == scen]
        samples = sorted(frame["sample_id"].unique().tolist())
        w = bootstrap_weights(len(samples), rounds, sub_rng(seed, "samples", scen))
        strata[scen] = (samples, compact_counts(w))  # float64 again where used (_overall, _beside)
        agreement = agreement_rows(main, rubric, scenario=scen, rounds=rounds, seed=seed, overall=data.overall)
        dims = data.scored_dims(scen)
        low = _low(agreement)
        without = _agreed_variant(low, dims)
        block = _Block()
        for dim in _dims(rubric, scen) + ([OVERALL_AGREED] if without else []):
            est = data.estimate(frame, scen, dim, samples, w, without or frozenset())
            if est is None:
                continue
            if dim != OVERALL_AGREED:
                per_dim.setdefault(dim, {})[scen] = est
            label = scen if dim == OVERALL else f"{scen} ({dim})"
            if dim == OVERALL_AGREED:
                label = f"{scen} (overall without {join_names(sorted(without or ()))})"
            ranking = block.add(est, dim, label, pairwise)
            warning = separation_warning(est, len(samples), f"{scen} / {dim}", _unit(rubric, dim), ranking.pair_se)
            if warning:
                block.warnings.append(warning)
        if low:
            block.warnings.insert(0, _low_warning(agreement, dims, scen))
        _caution(block.summary, agreement)
        for extra in (_dominance_warning(frame, scen), _unblinded_raters_warning(frame, scen)):
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
                no_ratings=no_ratings,
                win_rates=None if block.win_rates is None else tuple(block.win_rates),
                benchmarks=_benchmarks(benchmarks, block, scen, batch_models),
                **_checks(checks, data, scen),
            )
        )

    models = sorted(set(main["model_a"].dropna()) | (set(main["model_b"].dropna()) if pairwise else set()))
    overall_block = _overall(data, per_dim, strata, scenarios, models, set(with_outputs), weights, sensitivity_draws,
                             (benchmarks, batch_models))  # fmt: skip
    if anchor_note is not None:
        overall_block = replace(overall_block, warnings=(*overall_block.warnings, anchor_note))
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
            reviewer_diagnostics(data.parts, rubric, None if pairwise else scored) if diagnostics else ()
        ),
        beside=_beside(rubric, main, data.overall, outputs, strata=strata),
        methods=methods_block(rubric, data.parts, seed=seed, rounds=rounds, draws=sensitivity_draws,
                              blocks=[*report_blocks, overall_block]),
        comments=() if comments is None or answer_counts is None else comment_groups(comments, answer_counts),
    )  # fmt: skip


def _benchmarks(
    scores: BenchmarkScores | None, block: _Block, scope: str | None, batch_models: set[str]
) -> tuple[BenchmarkSection, ...] | None:
    """The benchmark sections beside ``block``'s "overall" ranking (None without benchmark scores)."""
    if scores is None:
        return None
    est = block.estimates.get(OVERALL)
    return benchmark_sections(scores, est, block.ranking, block.pairs, scope=scope, batch_models=batch_models)


def _checks(checks: pd.DataFrame | None, data: _Inputs, scen: str) -> dict[str, Any]:
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
    data: _Inputs,
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
    low = _low(agreement)
    without = _agreed_variant(low, dims)
    block = _Block()
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
        block.add(est, dim, label, pairwise)
        gone = [r.model for r in left_out if r.dimension == dim]
        if gone:
            block.summary[dim] += f" Not ranked across scenarios (no ratings in some): {join_names(gone)}."
    if low:
        block.warnings.insert(0, _low_warning(agreement, dims, "All scenarios"))
    _caution(block.summary, agreement)
    for extra in (
        _dominance_warning(data.main, "All scenarios"),
        _unblinded_raters_warning(data.main, "All scenarios"),
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
    caution = _dimension_caution(OVERALL, agreement)
    if caution and composite.ranking:
        composite = replace(composite, summary=f"{caution} {composite.summary}")
    return OverallReport(
        agreement=tuple(agreement),
        ranking=tuple(block.ranking),
        pairs=tuple(block.pairs),
        summary=block.summary,
        warnings=tuple(block.warnings),
        low_agreement=low,
        left_out=tuple(left_out),
        win_rates=None if block.win_rates is None else tuple(block.win_rates),
        composite=composite,
        weight_sensitivity=sensitivity,
        benchmarks=_benchmarks(benchmarks[0], block, None, benchmarks[1]),
    )


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
