"""What every part of the report is built from: the prepared frames (:class:`Inputs`) and a ranking table
being built (:class:`Block`), with the dimensions a report ranks and the units its scores are in.

``report.build_report`` makes one :class:`Inputs` per report, and a :class:`Block` per scenario and one
across them; apart from it so that the report's assembling reads as the sequence of its sections.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from reviewer_app.analysis.decisions import Ranking, describe, ranking_rows
from reviewer_app.analysis.disputes import overrule
from reviewer_app.analysis.prepare import (
    OVERALL,
    OVERALL_AGREED,
    add_scores,
    canonical_outcome,
    ordinal_levels,
    overall_rows,
    split_ratings,
)
from reviewer_app.analysis.ranking import Estimate, pairwise_estimate, rating_estimate, win_rates
from reviewer_app.analysis.reliability import means_reliability
from reviewer_app.analysis.reviewer_effects import ReviewerDesign, adjust_for_reviewers, confounded_mask, panel_variance
from reviewer_app.analysis.ties import tie_section
from reviewer_app.domain.enums import Mode
from reviewer_app.domain.report_rankings import (
    PairRow,
    RankingRow,
    ReliabilityRow,
    ReviewerDesignRow,
    TieModelRow,
    TieRow,
    WinRateRow,
)
from reviewer_app.domain.rubric import Rubric


def ranked_dimensions(rubric: Rubric, scenario: str | None) -> list[str]:
    """Dimension names that get a ranking (numeric ones in rating mode), then "overall"."""
    dims = rubric.dimensions if scenario is None else rubric.dimensions_for(scenario)
    names = [d.name for d in dims if rubric.mode == Mode.PAIRWISE or d.numeric()]
    return names + ([OVERALL] if OVERALL not in names else [])


def score_unit(rubric: Rubric, dimension: str) -> str:
    """The unit a ranking's scores, and their differences, are in (for the separation warning)."""
    if rubric.mode == Mode.PAIRWISE:
        return "Bradley-Terry log-odds"
    if dimension in (OVERALL, OVERALL_AGREED):
        return "of the 0-1 overall score"
    return "points"


@dataclass
class Block:
    """One ranking table being built: rows, pairs, summary lines, warnings and the reliability of each
    ranking's model means."""

    ranking: list[RankingRow] = field(default_factory=list)
    pairs: list[PairRow] = field(default_factory=list)
    summary: dict[str, str] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    win_rates: list[WinRateRow] | None = None
    estimates: dict[str, Estimate] = field(default_factory=dict)  # dimension -> estimate (benchmarks read it)
    reliability: list[ReliabilityRow] = field(default_factory=list)
    designs: list[ReviewerDesignRow] = field(default_factory=list)  # rankings on reviewer-adjusted scores
    ties: list[TieRow] | None = None  # pairwise: tie and both-bad rates, Davidson strengths (analysis.ties)
    tie_model: list[TieModelRow] | None = None

    def add(self, est: Estimate, dim: str, label: str, pairwise: bool) -> Ranking:
        ranking = ranking_rows(est, dim)
        self.estimates[dim] = est
        self.ranking += ranking.rows
        self.pairs += ranking.pairs
        self.summary[dim] = describe(ranking.rows, ranking.better, est.models, label)
        reliable = means_reliability(est, dim, label)
        if reliable is not None:
            self.reliability.append(reliable)
        if pairwise and dim == OVERALL:
            self.win_rates = win_rates(est)
        if pairwise and est.draws is not None:
            rows, model_row = tie_section(est, dim)
            self.ties = (self.ties or []) + rows
            self.tie_model = (self.tie_model or []) + [model_row]
        return ranking


class Inputs:
    """The frames and settings every part of the report reads."""

    def __init__(
        self, ratings: pd.DataFrame, rubric: Rubric, rounds: int, seed: int, rulings: pd.DataFrame | None = None
    ) -> None:
        self.rubric, self.rounds, self.seed = rubric, rounds, seed
        self.parts = split_ratings(ratings)
        self.pairwise = rubric.mode == Mode.PAIRWISE
        self.main, self.scored, self.overall = self._prepared(self.parts.main)
        # The panel as it answered, for what describes the panel (agreement, its trend, the reviewer table);
        # the rankings read ``main``/``scored``/``overall``, which carry adjudicators' ``rulings`` when given.
        self.panel_main, self.panel_scored, self.panel_overall = self.main, self.scored, self.overall
        if rulings is not None and not rulings.empty:
            ruled = overrule(self.parts.main, rulings, pairwise=self.pairwise)
            self.main, self.scored, self.overall = self._prepared(ruled)
        self.designs: dict[tuple[str, str], ReviewerDesign] = {}  # (scenario, dimension) -> adjusted design

    def _prepared(self, main: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
        """(main, scored, overall): pairwise answers with their canonical ``outcome``; rating mode's scores and
        per-rating overall scores."""
        if self.pairwise:
            main = main.assign(outcome=canonical_outcome(main))
            return main, main, main.iloc[0:0]
        scored = add_scores(main, self.rubric)
        return main, scored, overall_rows(scored)

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
        spread = panel_variance(part, models)
        part, design = adjust_for_reviewers(part, models)
        if design.adjusted:  # reviewers did particular models: rank reviewer-adjusted scores, by their means
            self.designs[(scen, dim)] = design
        higher, levels = True, None
        if dim not in (OVERALL, OVERALL_AGREED):
            d = rubric.dimension(dim)
            higher, levels = d.higher_is_better, None if design.adjusted else ordinal_levels(d)
        est = rating_estimate(part, models, samples, w, higher_is_better=higher, ordinal_levels=levels)
        est.confounded = confounded_mask(models, design)
        if spread is not None:
            est.panel_var, est.panel_reviewers = spread[1], spread[2]
        return est

    def scored_dims(self, scenario: str | None) -> list[str]:
        """The named dimensions that carry scores (all of them in pairwise mode)."""
        return [d for d in ranked_dimensions(self.rubric, scenario) if d != OVERALL]
