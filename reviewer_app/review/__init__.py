"""The reviewer's side: assignment, blinding (labels, sides), pool claims, the blind item view,
submit/revise/drafts, finished items and progress. Nothing here reads a model's name for a reviewer's page.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from reviewer_app.domain.lazy_names import lazy_names

if TYPE_CHECKING:
    from reviewer_app.review.assignment import assign
    from reviewer_app.review.blinding import draw_labels
    from reviewer_app.review.drafts import Draft, discard_draft, load_draft, save_draft_soon
    from reviewer_app.review.finished_items import previous_item, previous_items
    from reviewer_app.review.progress import ProgressRow, batch_progress
    from reviewer_app.review.reviews import (
        batches_for,
        blind_view_in,
        first_batch_with_work,
        image_bytes,
        item_view,
        next_item,
        question_words,
        submit_review,
    )

__all__ = [
    "Draft",
    "ProgressRow",
    "assign",
    "batch_progress",
    "batches_for",
    "blind_view_in",
    "discard_draft",
    "draw_labels",
    "first_batch_with_work",
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

# Where each name lives: imported on first use, so that importing one module of the package (as every
# `blind-review` command does) does not load all of it.
_HOMES = {
    "Draft": "reviewer_app.review.drafts",
    "ProgressRow": "reviewer_app.review.progress",
    "assign": "reviewer_app.review.assignment",
    "batch_progress": "reviewer_app.review.progress",
    "batches_for": "reviewer_app.review.reviews",
    "blind_view_in": "reviewer_app.review.reviews",
    "discard_draft": "reviewer_app.review.drafts",
    "draw_labels": "reviewer_app.review.blinding",
    "first_batch_with_work": "reviewer_app.review.reviews",
    "image_bytes": "reviewer_app.review.reviews",
    "item_view": "reviewer_app.review.reviews",
    "load_draft": "reviewer_app.review.drafts",
    "next_item": "reviewer_app.review.reviews",
    "previous_item": "reviewer_app.review.finished_items",
    "previous_items": "reviewer_app.review.finished_items",
    "question_words": "reviewer_app.review.reviews",
    "save_draft_soon": "reviewer_app.review.drafts",
    "submit_review": "reviewer_app.review.reviews",
}


__getattr__ = lazy_names(__name__, _HOMES)
