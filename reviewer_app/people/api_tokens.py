"""API tokens: how a pipeline signs in to the REST API (issue 31), as ``Authorization: Bearer <token>``.

A token belongs to a person and acts with that person's role at the moment of each request, so a lead made
reviewer, or a person revoked, loses what the token could do at once. Only leads and admins get tokens: the
API serves unblinded results and management, and has nothing for a reviewer (a reviewer's token, if a person
is demoted, is refused everywhere by the API's role check). As with sign-in links, the token is shown once
and only its SHA-256 is stored: a copy of the database authenticates nobody. A token has a label (one per
pipeline, so one can be revoked without the others), an optional expiry, and the time it was last used.
"""

from __future__ import annotations

import logging
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy.engine import Engine

from reviewer_app.domain.enums import Role
from reviewer_app.domain.views import Person
from reviewer_app.errors import ConflictError, NotFoundError, NotSignedInError, Problem, ValidationError
from reviewer_app.people.people import TOUCH_EVERY, aware, hash_token, person_of
from storage.engine import read_session, write_session
from storage.models import utcnow
from storage.repositories import people as repo

__all__ = [
    "TOKEN_PREFIX",
    "ApiTokenInfo",
    "authenticate_api_token",
    "issue_api_token",
    "list_api_tokens",
    "revoke_api_tokens",
]

log = logging.getLogger(__name__)

TOKEN_PREFIX = "br_"  # recognisable in a leaked config file or a secret scanner's rules
NOT_VALID = "this API token is not valid, has expired or was revoked; ask an admin for a new one"


@dataclass(frozen=True)
class ApiTokenInfo:
    """What may be shown of a token: never the token itself."""

    person: str
    label: str
    created_at: datetime
    expires_at: datetime | None
    revoked_at: datetime | None
    last_used_at: datetime | None

    def line(self) -> str:
        state = "revoked" if self.revoked_at else ("expired" if _expired(self.expires_at) else "live")
        expiry = f"expires {self.expires_at:%Y-%m-%d}" if self.expires_at else "no expiry"
        used = f"last used {self.last_used_at:%Y-%m-%d %H:%M}" if self.last_used_at else "never used"
        return f"{self.person} / {self.label}: {state}, made {self.created_at:%Y-%m-%d}, {expiry}, {used}"


def _argument_error(field: str, message: str) -> ValidationError:
    return ValidationError([Problem.argument(field, message)])


def _expired(expires_at: datetime | None, now: datetime | None = None) -> bool:
    return expires_at is not None and aware(expires_at) <= (now or utcnow())


def issue_api_token(
    engine: Engine, name: str, *, label: str = "default", days: int | None = None
) -> tuple[ApiTokenInfo, str]:
    """Make an API token for the lead or admin ``name``; returns what may be shown of it and the token, the
    one time it exists in the clear. ``days``: it expires that many days from now (None: never).

    Raises NotFoundError for an unknown name, ValidationError for a reviewer, a revoked person, an empty
    label or days below 1, ConflictError for a label the person already has a live token under."""
    label = label.strip()
    if not label:
        raise _argument_error("label", "must name the token, e.g. --label ci-nightly")
    if days is not None and days < 1:
        raise _argument_error("days", f"must be a whole number of days, at least 1, not {days}")
    token = TOKEN_PREFIX + secrets.token_urlsafe(32)
    with write_session(engine) as session:
        reviewer = repo.get_by_name(session, name)
        if reviewer is None or reviewer.id is None:
            raise NotFoundError(f"no person named {name!r}; see the Admin page's People tab")
        if reviewer.role == Role.REVIEWER:
            raise _argument_error(
                "name",
                f"{name!r} is a reviewer: the API serves unblinded results and management, so only leads and "
                "admins get tokens",
            )
        if not reviewer.active:
            raise _argument_error(
                "name", f"{name!r} is revoked; give them a new sign-in link first (`blind-review new-link {name}`)"
            )
        if label in repo.live_api_token_labels(session, reviewer.id):
            raise ConflictError(
                f"{name!r} already has a token labelled {label!r}; revoke it first "
                f"(`blind-review api-token {name} --revoke --label {label}`) or choose another label"
            )
        expires = None if days is None else utcnow() + timedelta(days=days)
        row = repo.create_api_token(session, reviewer.id, label, hash_token(token), expires)
        info = ApiTokenInfo(name, label, row.created_at, row.expires_at, None, None)
    log.info("API token %r made for %r (%s)", label, name, "no expiry" if days is None else f"{days} days")
    return info, token


def revoke_api_tokens(engine: Engine, name: str, *, label: str | None = None) -> int:
    """Revoke the person's live tokens (only the one labelled ``label`` when given); returns how many.
    Raises NotFoundError for an unknown name."""
    with write_session(engine) as session:
        reviewer = repo.get_by_name(session, name)
        if reviewer is None or reviewer.id is None:
            raise NotFoundError(f"no person named {name!r}")
        n = repo.revoke_api_tokens(session, reviewer.id, label, utcnow())
    log.info("revoked %d API token(s) of %r", n, name)
    return n


def list_api_tokens(engine: Engine, name: str | None = None) -> list[ApiTokenInfo]:
    """Every token (of ``name`` when given), oldest first, without the tokens themselves."""
    with read_session(engine) as session:
        owner = None
        if name is not None:
            reviewer = repo.get_by_name(session, name)
            if reviewer is None or reviewer.id is None:
                raise NotFoundError(f"no person named {name!r}")
            owner = reviewer.id
        rows = repo.api_tokens(session, owner)
        return [ApiTokenInfo(n, t.label, t.created_at, t.expires_at, t.revoked_at, t.last_used_at) for t, n in rows]


def authenticate_api_token(engine: Engine, token: str | None) -> Person:
    """The person (with their role now) a bearer token acts for; NotSignedInError (an AuthError) for a missing,
    unknown, expired or revoked token or a revoked person. Notes the use (at most every ``TOUCH_EVERY``, as a
    sign-in session notes its clicks)."""
    if not token:
        raise NotSignedInError("no API token: send it as 'Authorization: Bearer <token>'")
    now = utcnow()
    with read_session(engine) as session:
        found = repo.api_token_owner(session, hash_token(token))
        if found is None:
            raise NotSignedInError(NOT_VALID)
        row, reviewer = found
        if row.revoked_at is not None or _expired(row.expires_at, now) or not reviewer.active:
            raise NotSignedInError(NOT_VALID)
        person = person_of(reviewer)
        stale = row.last_used_at is None or aware(row.last_used_at) + TOUCH_EVERY <= now
        token_id = row.id
    if stale and token_id is not None:
        with write_session(engine) as session:
            repo.touch_api_token(session, token_id, now)
    return person
