"""People: reviewers, leads and admins, their sign-in links, and sign-in itself.

The link carries a random token; only its SHA-256 is stored, so a copy of the database signs nobody in.
Roles are checked here, on the server, for every page and action — never by hiding a button. The rules
about people live here too, so the CLI and the Admin page cannot differ: a name is taken once, and the
last active admin cannot be revoked (nobody could then sign in to manage the app).

**Sessions.** Opening a link (:func:`sign_in`) makes a sign-in session for that browser; the page's address
then carries the session's token instead of the link's, and every click is checked with
:func:`authenticate_session`. A session made in a browser with the server's cookie works in that browser
only. Signing out (:func:`sign_out`) ends the session *and refuses the link in that browser*: going Back
to the link, or finding it in the browser's history, does not sign the next person at that computer in.
The link keeps working on the person's other devices; to sign in again where they signed out they ask
their admin for a new link. "Sign out everywhere" ends every session of the person. Revoking a person or
replacing their link ends all their sessions too. With ``BLIND_REVIEW_LINK_DAYS`` set, a link older than
that many days signs nobody in (sessions already made keep working until they end).
"""

from __future__ import annotations

import hashlib
import logging
import secrets
from datetime import UTC, datetime, timedelta
from urllib.parse import quote

from sqlalchemy.engine import Engine
from sqlmodel import Session

from reviewer_app.domain.enums import Role
from reviewer_app.domain.views import Person
from reviewer_app.errors import AuthError, ConflictError, NotFoundError, ValidationError
from reviewer_app.settings import link_days, public_base_url
from storage.engine import read_session, write_session
from storage.models import Reviewer, utcnow
from storage.repositories import people as repo
from storage.repositories.review import assignments as assignment_repo

log = logging.getLogger(__name__)

ROLES: tuple[Role, ...] = tuple(Role)
TOUCH_EVERY = timedelta(minutes=10)  # how stale a session's last_seen_at may get before a click writes it

NOT_VALID = "This sign-in link is not valid or has been revoked. Ask your admin for a new link."
SIGNED_OUT_HERE = (
    "You signed out of this browser, so this page and your old sign-in link no longer sign you in here (the "
    "link still works on devices you did not sign out of). To sign in here again, ask an admin for a new "
    "link (admins send them from the Admin page)."
)
ENDED = "You are signed out here. Open your sign-in link to sign in again."
ENDED_EVERYWHERE = (
    "You signed out on every device, so this page no longer signs you in. Your sign-in link still works on this "
    "device: open it to sign in again."
)
OTHER_BROWSER = (
    "This address belongs to a sign-in made in another browser and does not work here. Open your own sign-in "
    "link instead."
)
NO_COOKIE = (
    "This browser did not send the cookie that ties a sign-in to it, so nobody can be signed in here. Allow "
    "cookies for this site (or leave private mode), then open your sign-in link again."
)
UNBOUND = "This sign-in is not tied to a browser and no longer works. Open your sign-in link again."


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
        person = person_of(reviewer)
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
        # The old link is dead: so is every browser it signed in (a leaked link's sessions included).
        ended = repo.end_sessions_of(session, reviewer.id, "new-link", utcnow())
    log.info("new sign-in link for %r; %d session(s) ended", name, ended)
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
        repo.end_sessions_of(session, reviewer.id, "revoke", utcnow())
        repo.revoke_api_tokens(session, reviewer.id, None, utcnow())  # their pipelines stop with them
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
    """The person a sign-in link's token belongs to; :class:`AuthError` for a wrong, revoked or expired link."""
    with read_session(engine) as session:
        return person_of(_link_owner(session, token))


def _link_owner(session: Session, token: str | None) -> Reviewer:
    if not token or len(token) > 200:
        log.warning("sign-in refused: %s", "no token" if not token else "token too long")
        raise AuthError("This sign-in link is not valid. Ask your admin for a new link.")
    digest = hash_token(token)
    reviewer = repo.get_by_token_hash(session, digest)
    if reviewer is None or not reviewer.active or reviewer.id is None:
        # The hash's first digits tell repeated attempts apart without making the token recoverable.
        log.warning("sign-in refused: unknown or revoked token (sha256 %s...)", digest[:8])
        raise AuthError(NOT_VALID)
    days = link_days()
    if days is not None:
        issued = aware(reviewer.link_issued_at or reviewer.created_at)
        if datetime.now(UTC) - issued > timedelta(days=days):
            log.warning("sign-in refused: link of %r is older than %d days", reviewer.name, days)
            raise AuthError(
                f"This sign-in link has expired (links work for {days} day{'s' if days != 1 else ''}). "
                "Ask your admin for a new link."
            )
    return reviewer


def aware(moment: datetime) -> datetime:
    """A stored time as UTC-aware (SQLite gives naive ones back)."""
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def sign_in(
    engine: Engine, link_token: str | None, browser: str | None = None, *, require_browser: bool = False
) -> tuple[Person, str]:
    """Exchange a sign-in link's token for a new session of this browser; returns the person and the
    session's token (for the address bar). ``browser`` is the hash of the browser's cookie, if it has one:
    the session then works in that browser only. With ``require_browser`` (the served app, which gives every
    browser a cookie) a page without a cookie is refused: its session would be bound to nothing, and its
    address would sign in anywhere it was copied to.

    Raises :class:`AuthError` for a wrong, revoked or expired link, for a link this browser signed out of
    (see the module docstring), and for a missing cookie where one is required."""
    if require_browser and browser is None:
        log.warning("sign-in refused: a sign-in link opened without the browser cookie")
        raise AuthError(NO_COOKIE)
    token = secrets.token_urlsafe(32)
    with write_session(engine) as session:
        reviewer = _link_owner(session, link_token)
        assert reviewer.id is not None and link_token is not None
        link_hash = hash_token(link_token)
        if browser is not None and repo.signed_out_in_browser(session, link_hash, browser):
            log.warning("sign-in refused: %r's link opened again in a browser that signed out of it", reviewer.name)
            raise AuthError(SIGNED_OUT_HERE)
        repo.create_session(session, reviewer.id, hash_token(token), link_hash, browser)
        person = person_of(reviewer)
    log.info("%s %r signed in (a new browser session)", person.role, person.name)
    return person, token


def authenticate_session(
    engine: Engine, session_token: str | None, browser: str | None = None, *, require_browser: bool = False
) -> Person:
    """The person signed in by a session token; :class:`AuthError` for a wrong or ended session, a revoked
    person, or a session bound to another browser than ``browser``. With ``require_browser`` (see
    :func:`sign_in`), also for a page without a cookie and for a session bound to no browser (made before
    sign-ins required one, or outside the served app)."""
    if not session_token or len(session_token) > 200:
        raise AuthError(ENDED)
    if require_browser and browser is None:
        raise AuthError(NO_COOKIE)
    digest = hash_token(session_token)
    with read_session(engine) as session:
        found = repo.get_session(session, digest)
    if found is None:
        log.warning("sign-in refused: unknown session (sha256 %s...)", digest[:8])
        raise AuthError(ENDED)
    row, reviewer = found
    if row.ended_at is not None or not reviewer.active or reviewer.id is None or row.id is None:
        raise AuthError(_ended_message(row.ended_by))
    if row.link_hash != reviewer.token_hash:
        # Made from a link that has since been replaced or revoked: a session created in the instant between
        # reading the old link and `new-link` ending its sessions (PostgreSQL, READ COMMITTED) dies here too.
        raise AuthError(NOT_VALID)
    if row.browser_hash is not None and row.browser_hash != browser:
        log.warning("sign-in refused: %r's session used from another browser", reviewer.name)
        raise AuthError(OTHER_BROWSER)
    if require_browser and row.browser_hash is None:
        log.warning("sign-in refused: %r's session is bound to no browser", reviewer.name)
        raise AuthError(UNBOUND)
    now = utcnow()
    if now - aware(row.last_seen_at) > TOUCH_EVERY:  # a write every few minutes, not on every click
        with write_session(engine) as session:
            repo.touch_session(session, row.id, now)
    return person_of(reviewer)


def _ended_message(ended_by: str | None) -> str:
    """Why an ended session signs nobody in, and what to do: a browser that signed out needs a new link (its old
    one is refused there); a device signed out from another one can open its link again."""
    if ended_by == repo.SIGNED_OUT:
        return SIGNED_OUT_HERE
    if ended_by == "sign-out-everywhere":
        return ENDED_EVERYWHERE
    return NOT_VALID


def sign_out(engine: Engine, session_token: str | None, *, everywhere: bool = False) -> str | None:
    """End this browser's session (and, with ``everywhere``, every other session of the person); the link
    then no longer signs in in this browser. Returns the hash of the link the session was made from (None
    for an unknown token)."""
    if not session_token:
        return None
    now = utcnow()
    with write_session(engine) as session:
        found = repo.get_session(session, hash_token(session_token))
        if found is None or found[0].id is None:
            return None
        row, reviewer = found
        assert row.id is not None and reviewer.id is not None
        repo.end_session(session, row.id, repo.SIGNED_OUT, now)
        if everywhere:
            repo.end_sessions_of(session, reviewer.id, "sign-out-everywhere", now)
    log.info("%r signed out%s", reviewer.name, " everywhere" if everywhere else "")
    return row.link_hash


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
        return [person_of(r) for r in repo.list_all(session, role) if r.id is not None and r.active]


def get_person(engine: Engine, name: str) -> Person:
    """The person named ``name``; :class:`NotFoundError` otherwise."""
    with read_session(engine) as session:
        r = repo.get_by_name(session, name)
        if r is None or r.id is None:
            raise NotFoundError(f"no person named {name!r}; add them with `blind-review add-reviewer {name}`")
        return person_of(r)


def person_of(reviewer: Reviewer) -> Person:
    """A person as the rest of the app sees them (id, name, role)."""
    assert reviewer.id is not None
    return Person(reviewer.id, reviewer.name, Role(reviewer.role))
