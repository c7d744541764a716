"""The panel's statistics and the report builder: agreement, estimates, inference, decisions, letters,
diagnostics, composite, secondary measures, checks, comments, benchmarks. Pure pandas/numpy on domain types;
no database. Its surface: the report builder and the statistical pieces that comparisons and the production
monitor reuse, so that every verdict is computed by one set of tests.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from reviewer_app.domain.lazy_names import lazy_names

if TYPE_CHECKING:
    from reviewer_app.analysis.allocation import allocation_states
    from reviewer_app.analysis.anytime import anytime_scenario
    from reviewer_app.analysis.decisions import Ranking, ranking_rows
    from reviewer_app.analysis.disputes import (
        dispute_rule,
        find_disputes,
        named_votes,
        overrule,
        pairwise_value_text,
        ruled_rows,
    )
    from reviewer_app.analysis.inference import ALPHA, CONFIDENCE, holm, percentile_ci, t_quantile, t_two_sided_p
    from reviewer_app.analysis.judge_measures import judge_cards
    from reviewer_app.analysis.judge_ppi import judge_assisted_estimate
    from reviewer_app.analysis.planning import pilot_components, plan_study
    from reviewer_app.analysis.power import Components, samples_needed, simulated_power
    from reviewer_app.analysis.prepare import (
        ANCHOR,
        OVERALL,
        add_scores,
        anchor_mask,
        as_python_strings,
        bootstrap_weights,
        canonical_outcome,
        counts_for_score,
        finite_or_none,
        overall_rows,
        split_ratings,
        sub_rng,
    )
    from reviewer_app.analysis.ranking import rating_estimate
    from reviewer_app.analysis.reliability import means_reliability
    from reviewer_app.analysis.report import DEFAULT_ROUNDS, anytime_verdicts, build_report
    from reviewer_app.analysis.reviewer_effects import adjust_for_reviewers, confounded_mask, panel_variance
    from reviewer_app.analysis.style_control import style_features, style_ranking
    from reviewer_app.analysis.two_sample import EXACT_MAX_PRODUCT, fisher_exact, mann_whitney

__all__ = [
    "ALPHA",
    "ANCHOR",
    "CONFIDENCE",
    "DEFAULT_ROUNDS",
    "EXACT_MAX_PRODUCT",
    "OVERALL",
    "Components",
    "Ranking",
    "add_scores",
    "adjust_for_reviewers",
    "allocation_states",
    "anchor_mask",
    "anytime_scenario",
    "anytime_verdicts",
    "as_python_strings",
    "asymptotic_sequence",
    "bootstrap_weights",
    "build_report",
    "canonical_outcome",
    "confounded_mask",
    "counts_for_score",
    "dispute_rule",
    "eb_sequence",
    "find_disputes",
    "finite_or_none",
    "fisher_exact",
    "holm",
    "judge_assisted_estimate",
    "judge_cards",
    "mann_whitney",
    "named_votes",
    "means_reliability",
    "overall_rows",
    "overrule",
    "pairwise_value_text",
    "panel_variance",
    "percentile_ci",
    "pilot_components",
    "plan_study",
    "ranking_rows",
    "rating_estimate",
    "ruled_rows",
    "samples_needed",
    "simulated_power",
    "split_ratings",
    "style_features",
    "style_ranking",
    "sub_rng",
    "t_quantile",
    "t_two_sided_p",
]

# Where each name lives: imported on first use, so that importing one module of the package (as every
# `blind-review` command does) does not load all of it.
_HOMES = {
    "dispute_rule": "reviewer_app.analysis.disputes",
    "find_disputes": "reviewer_app.analysis.disputes",
    "named_votes": "reviewer_app.analysis.disputes",
    "overrule": "reviewer_app.analysis.disputes",
    "ruled_rows": "reviewer_app.analysis.disputes",
    "pairwise_value_text": "reviewer_app.analysis.disputes",
    "style_ranking": "reviewer_app.analysis.style_control",
    "style_features": "reviewer_app.analysis.style_control",
    "allocation_states": "reviewer_app.analysis.allocation",
    "anytime_verdicts": "reviewer_app.analysis.report",
    "anytime_scenario": "reviewer_app.analysis.anytime",
    "asymptotic_sequence": "reviewer_app.analysis.anytime",
    "eb_sequence": "reviewer_app.analysis.anytime",
    "ALPHA": "reviewer_app.analysis.inference",
    "ANCHOR": "reviewer_app.analysis.prepare",
    "CONFIDENCE": "reviewer_app.analysis.inference",
    "DEFAULT_ROUNDS": "reviewer_app.analysis.report",
    "EXACT_MAX_PRODUCT": "reviewer_app.analysis.two_sample",
    "OVERALL": "reviewer_app.analysis.prepare",
    "Components": "reviewer_app.analysis.power",
    "Ranking": "reviewer_app.analysis.decisions",
    "add_scores": "reviewer_app.analysis.prepare",
    "adjust_for_reviewers": "reviewer_app.analysis.reviewer_effects",
    "anchor_mask": "reviewer_app.analysis.prepare",
    "as_python_strings": "reviewer_app.analysis.prepare",
    "bootstrap_weights": "reviewer_app.analysis.prepare",
    "build_report": "reviewer_app.analysis.report",
    "canonical_outcome": "reviewer_app.analysis.prepare",
    "confounded_mask": "reviewer_app.analysis.reviewer_effects",
    "counts_for_score": "reviewer_app.analysis.prepare",
    "finite_or_none": "reviewer_app.analysis.prepare",
    "fisher_exact": "reviewer_app.analysis.two_sample",
    "holm": "reviewer_app.analysis.inference",
    "judge_assisted_estimate": "reviewer_app.analysis.judge_ppi",
    "judge_cards": "reviewer_app.analysis.judge_measures",
    "mann_whitney": "reviewer_app.analysis.two_sample",
    "means_reliability": "reviewer_app.analysis.reliability",
    "overall_rows": "reviewer_app.analysis.prepare",
    "panel_variance": "reviewer_app.analysis.reviewer_effects",
    "percentile_ci": "reviewer_app.analysis.inference",
    "ranking_rows": "reviewer_app.analysis.decisions",
    "rating_estimate": "reviewer_app.analysis.ranking",
    "pilot_components": "reviewer_app.analysis.planning",
    "plan_study": "reviewer_app.analysis.planning",
    "simulated_power": "reviewer_app.analysis.power",
    "samples_needed": "reviewer_app.analysis.power",
    "split_ratings": "reviewer_app.analysis.prepare",
    "sub_rng": "reviewer_app.analysis.prepare",
    "t_quantile": "reviewer_app.analysis.inference",
    "t_two_sided_p": "reviewer_app.analysis.inference",
}


__getattr__ = lazy_names(__name__, _HOMES)
