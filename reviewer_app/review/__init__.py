"""The reviewer's side: assignment, blinding (labels, sides), pool claims, the blind item view,
submit/revise/drafts, finished items and progress. Nothing here reads a model's name for a reviewer's page.
"""

from reviewer_app.review.assignment import assign
from reviewer_app.review.blinding import draw_labels
from reviewer_app.review.drafts import Draft, load_draft, save_draft_soon
from reviewer_app.review.finished_items import previous_item, previous_items
from reviewer_app.review.progress import ProgressRow, batch_progress
from reviewer_app.review.reviews import batches_for, image_bytes, item_view, next_item, question_words, submit_review

__all__ = [
    "Draft",
    "ProgressRow",
    "assign",
    "batch_progress",
    "batches_for",
    "draw_labels",
    "image_bytes",
    "item_view",
    "load_draft",
    "next_item",
    "previous_item",
    "previous_items",
    "question_words",
    "save_draft_soon",
    "submit_review",
]
