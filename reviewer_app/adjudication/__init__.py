"""Adjudication of disagreements (issue 32): the queue of items the panel disputes beyond the rubric's threshold,
shown blind to a lead or designated senior reviewer, and their rulings with reasons (``cases``)."""

from reviewer_app.adjudication.cases import (
    AdjudicationQueue,
    CaseView,
    PanelLine,
    adjudicable_batches,
    case_view,
    open_case,
    queue,
    rule,
)
from reviewer_app.adjudication.listing import dispute_table

__all__ = [
    "AdjudicationQueue",
    "CaseView",
    "PanelLine",
    "adjudicable_batches",
    "case_view",
    "dispute_table",
    "open_case",
    "queue",
    "rule",
]
