"""Unblinded exports for training and analysis elsewhere: a batch's panel verdicts as DPO-style preference
records (JSONL, Parquet, a Hugging Face dataset folder). For leads and the command line; never imported by the
reviewer's side."""

from __future__ import annotations

from typing import TYPE_CHECKING

from reviewer_app.domain.lazy_names import lazy_names

if TYPE_CHECKING:
    from reviewer_app.exports.options import PREFERENCE_FORMATS, PREFERENCE_SOURCES, TIE_RULES
    from reviewer_app.exports.preferences import export_preferences

__all__ = ["PREFERENCE_FORMATS", "PREFERENCE_SOURCES", "TIE_RULES", "export_preferences"]

# Where each name lives: imported on first use, so that `blind-review --help` does not load pandas and pyarrow.
_HOMES = {
    **dict.fromkeys(["PREFERENCE_FORMATS", "PREFERENCE_SOURCES", "TIE_RULES"], "reviewer_app.exports.options"),
    "export_preferences": "reviewer_app.exports.preferences",
}


__getattr__ = lazy_names(__name__, _HOMES)
