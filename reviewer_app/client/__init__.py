"""A Python client for the REST API: ``BlindReview(base_url, token)``.

    from reviewer_app.client import BlindReview

    with BlindReview("https://review.example.org", token) as br:
        br.load_batch("support-v2", ["outputs.jsonl"], rubric="rubric.toml")
        br.assign("support-v2")
        report = br.report("support-v2")             # the report's JSON, as a dict
        br.export_ratings("support-v2", "ratings.csv")  # streamed to the file

Errors come back as the project's own exception types (a bad file is a ValidationError with each problem
located, an unknown batch a NotFoundError, ...), with the message the CLI prints; anything else the server or
a proxy answers is an :class:`~reviewer_app.errors.ApiError`.
"""

from __future__ import annotations

from reviewer_app.client.client import BlindReview, verify_webhook

__all__ = ["BlindReview", "verify_webhook"]
