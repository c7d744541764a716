"""People: reviewers, leads and admins, their one-time sign-in links, and sign-in itself.

The link carries a random token; only its SHA-256 is stored, so a copy of the database signs nobody in.
Roles are checked here, on the server, for every page and action — never by hiding a button. The rules
about people live here too, so the CLI and the Admin page cannot differ: a name is taken once, and the
last active admin cannot be revoked (nobody could then sign in to manage the app).
"""

from __future__ import annotations

import hashlib
import logging
import secrets
from urllib.parse import quote

from sqlalchemy.engine import Engine
from sqlmodel import Session

from reviewer_app.domain.enums import Role
from reviewer_app.domain.views import Person
from reviewer_app.errors import AuthError, ConflictError, NotFoundError, ValidationError
from reviewer_app.settings import public_base_url
from storage.engine import read_session, write_session
from storage.models import Reviewer
from storage.repositories import assignments as assignment_repo
from storage.repositories import reviewers as repo

log = logging.getLogger(__name__)

ROLES: tuple[Role, ...] = tuple(Role)


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def sign_in_link(token: str) -> str:
    return f"{public_base_url()}/?token={quote(token)}"


def parse_role(role: str) -> Role:
    """``role`` as a :class:`Role`; :class:`ValidationError` for anything but reviewer, lead or admin."""
    try:
        return Role(role)
    except ValueError:
        raise ValidationError([], f"A role must be reviewer, lead or admin, not {role!r}.") from None


def add_reviewer(engine: Engine, name: str, role: Role | str = Role.REVIEWER) -> tuple[Person, str]:
    """Create a person and return them with their sign-in link (shown once; only the hash is kept).

    Raises :class:`ValidationError` for an empty name or an unknown role, :class:`ConflictError` for a name
    that is taken."""
    name = name.strip()
    if not name:
        raise ValidationError([], "A reviewer needs a name.")
    checked = parse_role(role)
    token = secrets.token_urlsafe(24)
    with write_session(engine) as session:
        if repo.get_by_name(session, name) is not None:
            raise ConflictError(
                f"a person named {name!r} already exists; use `blind-review new-link {name}` for a new sign-in link"
            )
        reviewer = repo.create(session, name, checked, hash_token(token))
        person = _person(reviewer)
    log.info("added %s %r", person.role, person.name)
    return person, sign_in_link(token)


def new_link(engine: Engine, name: str) -> str:
    """Replace a person's sign-in link; the old one stops working at once (and a revoked person is active
    again). Raises :class:`NotFoundError` for an unknown name."""
    token = secrets.token_urlsafe(24)
    with write_session(engine) as session:
        reviewer = _existing(session, name)
        assert reviewer.id is not None
        repo.set_token(session, reviewer.id, hash_token(token))
        repo.set_active(session, reviewer.id, True)
    log.info("new sign-in link for %r", name)
    return sign_in_link(token)


def revoke(engine: Engine, name: str, *, release_pending: bool = True) -> int:
    """Revoke a person's link and (by default) hand their unfinished items back to the pool; returns how
    many items went back.

    Raises :class:`NotFoundError` for an unknown name and :class:`ConflictError` for the last active admin.
    """
    with write_session(engine) as session:
        reviewer = _existing(session, name)
        assert reviewer.id is not None
        _keep_an_admin(session, reviewer, "revoke")
        repo.set_token(session, reviewer.id, None)
        repo.set_active(session, reviewer.id, False)
        released = assignment_repo.release_reviewer(session, reviewer.id) if release_pending else 0
    log.info("revoked %r's sign-in link; %d unfinished item(s) released", name, released)
    return released


def _existing(session: Session, name: str) -> Reviewer:
    reviewer = repo.get_by_name(session, name)
    if reviewer is None or reviewer.id is None:
        raise NotFoundError(f"no person named {name!r}")
    return reviewer


def _keep_an_admin(session: Session, reviewer: Reviewer, action: str) -> None:
    """Refuse to take the last active admin away: nobody could then sign in to add people or load batches.

    Every change that revokes, deactivates or demotes a person calls this inside its write transaction."""
    if reviewer.role != Role.ADMIN or not reviewer.active:
        return
    others = [r for r in repo.list_all(session, Role.ADMIN, lock=True) if r.active and r.id != reviewer.id]
    if not others:
        raise ConflictError(
            f"cannot {action} {reviewer.name!r}: they are the last active admin, and nobody could manage the "
            "app without one. Add another admin first (`blind-review add-reviewer NAME --role admin`)."
        )


def authenticate(engine: Engine, token: str | None) -> Person:
    """The person a sign-in token belongs to; :class:`AuthError` for a wrong or revoked token."""
    if not token or len(token) > 200:
        log.warning("sign-in refused: %s", "no token" if not token else "token too long")
        raise AuthError("This sign-in link is not valid. Ask your admin for a new link.")
    digest = hash_token(token)
    with read_session(engine) as session:
        reviewer = repo.get_by_token_hash(session, digest)
        if reviewer is None or not reviewer.active or reviewer.id is None:
            # The hash's first digits tell repeated attempts apart without making the token recoverable.
            log.warning("sign-in refused: unknown or revoked token (sha256 %s...)", digest[:8])
            raise AuthError("This sign-in link is not valid or has been revoked. Ask your admin for a new link.")
        return _person(reviewer)


def require(person: Person | None, role: Role) -> Person:
    """Raise :class:`AuthError` unless ``person`` may act as ``role``."""
    if person is None:
        raise AuthError("Please sign in with your link.")
    if not person.can(role):
        raise AuthError(f"This page is for {role}s; you are signed in as a {person.role}.")
    return person


def list_people(engine: Engine, role: Role | None = None) -> list[Person]:
    """Active people (with a working link or imported without one), by name; only ``role`` if given."""
    with read_session(engine) as session:
        return [_person(r) for r in repo.list_all(session, role) if r.id is not None and r.active]


def get_person(engine: Engine, name: str) -> Person:
    """The person named ``name``; :class:`NotFoundError` otherwise."""
    with read_session(engine) as session:
        r = repo.get_by_name(session, name)
        if r is None or r.id is None:
            raise NotFoundError(f"no person named {name!r}; add them with `blind-review add-reviewer {name}`")
        return _person(r)


def _person(reviewer: Reviewer) -> Person:
    assert reviewer.id is not None
    return Person(reviewer.id, reviewer.name, Role(reviewer.role))
