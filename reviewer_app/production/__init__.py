"""Production feedback: importing events (thumbs or scores from a live service) and the monitor that sets
them beside the panel's verdict.
"""

from reviewer_app.production.feedback import (
    feedback_models,
    import_feedback,
    monitor,
    panel_and_production,
    parse_canary,
    parse_scale,
    write_monitor,
)

__all__ = [
    "feedback_models",
    "import_feedback",
    "monitor",
    "panel_and_production",
    "parse_canary",
    "parse_scale",
    "write_monitor",
]
