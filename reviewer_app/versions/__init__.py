"""Comparing versions: model pairing, compare, paired change, drift, a model's history, rerun."""

from reviewer_app.versions.batch_compare import SAMPLES_NOTE, VERDICT_NOTE, compare_batches, write_comparison
from reviewer_app.versions.compare import compare_ratings
from reviewer_app.versions.drift import drift_rows
from reviewer_app.versions.history import ReportFor, history_models, model_history, write_history
from reviewer_app.versions.pairing import pair_models
from reviewer_app.versions.rerun import rerun_batch

__all__ = [
    "ReportFor",
    "SAMPLES_NOTE",
    "VERDICT_NOTE",
    "compare_batches",
    "compare_ratings",
    "drift_rows",
    "history_models",
    "model_history",
    "pair_models",
    "rerun_batch",
    "write_comparison",
    "write_history",
]
