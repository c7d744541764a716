"""Comparing versions: model pairing, compare, paired change, drift, a model's history, rerun."""

from __future__ import annotations

from typing import TYPE_CHECKING

from reviewer_app.domain.lazy_names import lazy_names

if TYPE_CHECKING:
    from reviewer_app.versions.batch_compare import (
        SAMPLES_NOTE,
        VERDICT_NOTE,
        compare_batches,
        default_pair,
        write_comparison,
    )
    from reviewer_app.versions.compare import DEFAULT_TOLERANCE, DEFAULT_TOLERANCE_SHARE, compare_ratings
    from reviewer_app.versions.drift import drift_rows
    from reviewer_app.versions.history import ReportFor, history_models, model_history, write_history
    from reviewer_app.versions.pairing import pair_models
    from reviewer_app.versions.rerun import rerun_batch

__all__ = [
    "DEFAULT_TOLERANCE",
    "DEFAULT_TOLERANCE_SHARE",
    "SAMPLES_NOTE",
    "VERDICT_NOTE",
    "ReportFor",
    "compare_batches",
    "compare_ratings",
    "default_pair",
    "drift_rows",
    "history_models",
    "model_history",
    "pair_models",
    "rerun_batch",
    "write_comparison",
    "write_history",
]

# Where each name lives: imported on first use, so that importing one module of the package (as every
# `blind-review` command does) does not load all of it.
_HOMES = {
    "DEFAULT_TOLERANCE_SHARE": "reviewer_app.versions.compare",
    "DEFAULT_TOLERANCE": "reviewer_app.versions.compare",
    "ReportFor": "reviewer_app.versions.history",
    "SAMPLES_NOTE": "reviewer_app.versions.batch_compare",
    "VERDICT_NOTE": "reviewer_app.versions.batch_compare",
    "compare_batches": "reviewer_app.versions.batch_compare",
    "default_pair": "reviewer_app.versions.batch_compare",
    "compare_ratings": "reviewer_app.versions.compare",
    "drift_rows": "reviewer_app.versions.drift",
    "history_models": "reviewer_app.versions.history",
    "model_history": "reviewer_app.versions.history",
    "pair_models": "reviewer_app.versions.pairing",
    "rerun_batch": "reviewer_app.versions.rerun",
    "write_comparison": "reviewer_app.versions.batch_compare",
    "write_history": "reviewer_app.versions.history",
}


__getattr__ = lazy_names(__name__, _HOMES)
