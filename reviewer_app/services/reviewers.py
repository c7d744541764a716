"""People: reviewers, leads and admins, their one-time sign-in links, and sign-in itself.

The link carries a random token; only its SHA-256 is stored, so a copy of the database signs nobody in.
Roles are checked here, on the server, for every page and action — never by hiding a button.
"""

from __future__ import annotations

import hashlib
import secrets
from urllib.parse import quote

from sqlalchemy.engine import Engine

from reviewer_app.domain.enums import Role
from reviewer_app.domain.views import Person
from reviewer_app.errors import AuthError, NotFoundError, ValidationError
from reviewer_app.settings import public_base_url
from storage.engine import read_session, write_session
from storage.repositories import assignments as assignment_repo
from storage.repositories import reviewers as repo

ROLES: tuple[str, ...] = tuple(Role)


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def sign_in_link(token: str) -> str:
    return f"{public_base_url()}/?token={quote(token)}"


def add_reviewer(engine: Engine, name: str, role: str = "reviewer") -> tuple[Person, str]:
    """Create a person and return them with their sign-in link (shown once; only the hash is kept)."""
    name = name.strip()
    if not name:
        raise ValidationError([], "A reviewer needs a name.")
    if role not in ROLES:
        raise AuthError(f"role must be reviewer, lead or admin, not {role!r}")
    token = secrets.token_urlsafe(24)
    with write_session(engine) as session:
        if repo.get_by_name(session, name) is not None:
            raise AuthError(
                f"a person named {name!r} already exists; use `blind-review new-link {name}` for a new sign-in link"
            )
        reviewer = repo.create(session, name, role, hash_token(token))
        assert reviewer.id is not None
        return Person(reviewer.id, reviewer.name, Role(reviewer.role)), sign_in_link(token)


def new_link(engine: Engine, name: str) -> str:
    """Replace a person's sign-in link; the old one stops working at once."""
    token = secrets.token_urlsafe(24)
    with write_session(engine) as session:
        reviewer = repo.get_by_name(session, name)
        if reviewer is None or reviewer.id is None:
            raise NotFoundError(f"no person named {name!r}")
        repo.set_token(session, reviewer.id, hash_token(token))
        repo.set_active(session, reviewer.id, True)
    return sign_in_link(token)


def revoke(engine: Engine, name: str, *, release_pending: bool = True) -> int:
    """Revoke a person's link and (by default) hand their unfinished items back to the pool."""
    with write_session(engine) as session:
        reviewer = repo.get_by_name(session, name)
        if reviewer is None or reviewer.id is None:
            raise NotFoundError(f"no person named {name!r}")
        repo.set_token(session, reviewer.id, None)
        repo.set_active(session, reviewer.id, False)
        return assignment_repo.release_reviewer(session, reviewer.id) if release_pending else 0


def authenticate(engine: Engine, token: str | None) -> Person:
    """The person a sign-in token belongs to; :class:`AuthError` for a wrong or revoked token."""
    if not token or len(token) > 200:
        raise AuthError("This sign-in link is not valid. Ask your admin for a new link.")
    with read_session(engine) as session:
        reviewer = repo.get_by_token_hash(session, hash_token(token))
        if reviewer is None or not reviewer.active or reviewer.id is None:
            raise AuthError("This sign-in link is not valid or has been revoked. Ask your admin for a new link.")
        return Person(reviewer.id, reviewer.name, Role(reviewer.role))


def require(person: Person | None, role: str) -> Person:
    """Raise :class:`AuthError` unless ``person`` may act as ``role``."""
    if person is None:
        raise AuthError("Please sign in with your link.")
    if not person.can(role):
        raise AuthError(f"This page is for {role}s; you are signed in as a {person.role}.")
    return person


def list_people(engine: Engine, role: str | None = None) -> list[Person]:
    with read_session(engine) as session:
        return [
            Person(r.id, r.name, Role(r.role)) for r in repo.list_all(session, role) if r.id is not None and r.active
        ]


def get_person(engine: Engine, name: str) -> Person:
    with read_session(engine) as session:
        r = repo.get_by_name(session, name)
        if r is None or r.id is None:
            raise NotFoundError(f"no person named {name!r}; add them with `blind-review add-reviewer {name}`")
        return Person(r.id, r.name, Role(r.role))
