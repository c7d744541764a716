"""How an error crosses the wire: a problem-details body (RFC 9457) whose ``type`` names our exception class,
``urn:blind-review:error:<ClassName>``, and whose ``errors`` carry a ValidationError's problems one by one. The
server writes it (:mod:`reviewer_app.api.problems`); the client turns it back into the same exception
(:func:`error_from_problem`), with the same message the CLI prints."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from reviewer_app import errors as errs

__all__ = ["PROBLEM_JSON", "TYPE_PREFIX", "error_from_problem"]

PROBLEM_JSON = "application/problem+json"
TYPE_PREFIX = "urn:blind-review:error:"


def error_from_problem(status: int, body: Mapping[str, Any]) -> errs.BlindReviewError:
    """The exception a problem-details body describes: our own type when it names one (a ValidationError with
    its problems and hint), else :class:`~reviewer_app.errors.ApiError` carrying the status and detail."""
    detail = str(body.get("detail") or body.get("title") or f"HTTP {status}")
    kind = str(body.get("type", ""))
    cls = getattr(errs, kind.removeprefix(TYPE_PREFIX), None) if kind.startswith(TYPE_PREFIX) else None
    if not (isinstance(cls, type) and issubclass(cls, errs.BlindReviewError)):
        return errs.ApiError(status, detail)
    if issubclass(cls, errs.ValidationError):
        problems = [
            errs.Problem(str(p.get("file") or ""), p.get("line"), p.get("field"), str(p.get("message", "")))
            for p in body.get("errors") or ()
            if isinstance(p, Mapping)
        ]
        return cls(problems, str(body.get("hint") or "Fix these and send the request again."))
    if cls is errs.ApiError:
        return errs.ApiError(status, detail)
    return cls(detail)
