"""Errors as problem details (RFC 9457): the same located messages the CLI prints, as JSON a pipeline can read.

Every error a person can cause is one of our :class:`~reviewer_app.errors.BlindReviewError` types; each maps to
an HTTP status here, and its ``type`` is ``urn:blind-review:error:<ClassName>`` so that the Python client
(:mod:`reviewer_app.client`, through :mod:`reviewer_app.wire`) raises the very same exception type the service raised. A
:class:`~reviewer_app.errors.ValidationError` carries its problems one by one (``file``, ``line``, ``field``,
``message``) beside the rendered ``detail``, which reads exactly like the CLI's message.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from fastapi import Request
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException
from starlette.responses import JSONResponse

from reviewer_app import errors as errs
from reviewer_app.wire import PROBLEM_JSON, TYPE_PREFIX

__all__ = ["install_handlers", "problem_response", "status_of"]

log = logging.getLogger(__name__)


# The most specific class first: a subclass maps to its own status before its parent's.
_STATUS: tuple[tuple[type[errs.BlindReviewError], int], ...] = (
    (errs.ValidationError, 422),
    (errs.IdentityLeakError, 422),
    (errs.NotFoundError, 404),
    (errs.ConflictError, 409),
    (errs.BatchClosedError, 409),
    (errs.AssignmentError, 409),
    (errs.NotSignedInError, 401),
    (errs.AuthError, 403),
    (errs.ReportError, 422),
    (errs.GenerationError, 422),
    (errs.ConfigError, 500),
)
_TITLES = {
    400: "Bad request",
    401: "Not signed in",
    403: "Not allowed",
    404: "Not found",
    405: "Method not allowed",
    409: "Conflict",
    413: "Too large",
    422: "Cannot be used as sent",
    500: "Server error",
}


def status_of(exc: errs.BlindReviewError) -> int:
    """The HTTP status for one of our errors (400 for one without a more specific mapping)."""
    return next((status for kind, status in _STATUS if isinstance(exc, kind)), 400)


def problem_response(
    status: int,
    detail: str,
    *,
    kind: str = "about:blank",
    instance: str | None = None,
    extra: dict[str, Any] | None = None,
    headers: Mapping[str, str] | None = None,
) -> JSONResponse:
    """A problem-details response: ``type``, ``title``, ``status``, ``detail`` (and ``instance``, extras)."""
    body: dict[str, Any] = {"type": kind, "title": _TITLES.get(status, "Error"), "status": status, "detail": detail}
    if instance:
        body["instance"] = instance
    body.update(extra or {})
    return JSONResponse(body, status_code=status, media_type=PROBLEM_JSON, headers=dict(headers or {}))


def _ours(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, errs.BlindReviewError)
    extra: dict[str, Any] = {}
    if isinstance(exc, errs.ValidationError):
        extra["errors"] = [
            {"file": p.file or None, "line": p.line, "field": p.field, "message": p.message} for p in exc.problems
        ]
        extra["hint"] = exc.hint
    status = status_of(exc)
    return problem_response(
        status,
        str(exc),
        kind=TYPE_PREFIX + _public_type(exc).__name__,
        instance=request.url.path,
        extra=extra,
        headers={"WWW-Authenticate": "Bearer"} if status == 401 else None,
    )


def _public_type(exc: errs.BlindReviewError) -> type[errs.BlindReviewError]:
    """The most specific of the error's classes that :mod:`reviewer_app.errors` defines (a service's own
    subclass, such as the delete's confirmation error, travels as its public parent)."""
    for cls in type(exc).__mro__:
        if cls.__module__ == errs.__name__ and issubclass(cls, errs.BlindReviewError):
            return cls
    return errs.BlindReviewError


def _request_invalid(request: Request, exc: Exception) -> JSONResponse:
    """FastAPI's own check of parameters and bodies, worded like ours: one problem per bad field."""
    assert isinstance(exc, RequestValidationError)
    problems = []
    for error in exc.errors():
        where = [str(part) for part in error.get("loc", ()) if part not in ("body", "query", "path", "header")]
        problems.append(errs.Problem.argument(".".join(where) or "request", str(error.get("msg", "is not valid"))))
    return _ours(request, errs.ValidationError(problems, hint="Fix these and send the request again."))


def _http(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, HTTPException)
    return problem_response(exc.status_code, str(exc.detail), instance=request.url.path, headers=exc.headers)


def _unexpected(request: Request, exc: Exception) -> JSONResponse:
    """A bug: one clear sentence for the caller, the details in the server's log (never a traceback in a body)."""
    log.exception("unexpected error answering %s %s", request.method, request.url.path)
    return problem_response(
        500, "Something went wrong on the server; the details are in its log.", instance=request.url.path
    )


def install_handlers(app: Any) -> None:
    """Answer every error of ``app`` (a FastAPI app) as problem details."""
    app.add_exception_handler(errs.BlindReviewError, _ours)
    app.add_exception_handler(RequestValidationError, _request_invalid)
    app.add_exception_handler(HTTPException, _http)
    app.add_exception_handler(Exception, _unexpected)
