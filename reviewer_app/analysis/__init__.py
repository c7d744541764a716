"""The panel's statistics and the report builder: agreement, estimates, inference, decisions, letters,
diagnostics, composite, secondary measures, checks, comments, benchmarks. Pure pandas/numpy on domain types;
no database. Its surface: the report builder and the statistical pieces that comparisons and the production
monitor reuse, so that every verdict is computed by one set of tests.
"""

from reviewer_app.analysis.inference import ALPHA, CONFIDENCE, holm, percentile_ci, t_quantile, t_two_sided_p
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
from reviewer_app.analysis.report import DEFAULT_ROUNDS, build_report
from reviewer_app.analysis.two_sample import EXACT_MAX_PRODUCT, fisher_exact, mann_whitney

__all__ = [
    "ALPHA",
    "ANCHOR",
    "CONFIDENCE",
    "DEFAULT_ROUNDS",
    "EXACT_MAX_PRODUCT",
    "OVERALL",
    "add_scores",
    "anchor_mask",
    "as_python_strings",
    "bootstrap_weights",
    "build_report",
    "canonical_outcome",
    "counts_for_score",
    "finite_or_none",
    "fisher_exact",
    "holm",
    "mann_whitney",
    "overall_rows",
    "percentile_ci",
    "rating_estimate",
    "split_ratings",
    "sub_rng",
    "t_quantile",
    "t_two_sided_p",
]
