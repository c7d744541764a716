"""Production feedback: importing events (thumbs or scores from a live service) and the monitor that sets
them beside the panel's verdict.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from reviewer_app.domain.lazy_names import lazy_names

if TYPE_CHECKING:
    from reviewer_app.production.feedback import (
        FeedbackImport,
        feedback_models,
        import_feedback,
        monitor,
        panel_and_production,
        parse_canary,
        parse_scale,
        write_monitor,
    )

__all__ = [
    "FeedbackImport",
    "feedback_models",
    "import_feedback",
    "monitor",
    "panel_and_production",
    "parse_canary",
    "parse_scale",
    "write_monitor",
]

# Where each name lives: imported on first use, so that importing one module of the package (as every
# `blind-review` command does) does not load all of it.
_HOMES = {
    "FeedbackImport": "reviewer_app.production.feedback",
    "feedback_models": "reviewer_app.production.feedback",
    "import_feedback": "reviewer_app.production.feedback",
    "monitor": "reviewer_app.production.feedback",
    "panel_and_production": "reviewer_app.production.feedback",
    "parse_canary": "reviewer_app.production.feedback",
    "parse_scale": "reviewer_app.production.feedback",
    "write_monitor": "reviewer_app.production.feedback",
}


__getattr__ = lazy_names(__name__, _HOMES)
