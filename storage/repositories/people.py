"""Reviewer rows, their sign-in sessions and their API tokens. Link, session and API tokens are stored only as
SHA-256 hashes."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import exists, func, update
from sqlmodel import Session, col, select

from reviewer_app.domain.enums import Role
from storage.models import ApiToken, Reviewer, SigninSession, utcnow

SIGNED_OUT = "sign-out"  # ``SigninSession.ended_by`` of a session its own browser signed out of


def get_by_name(session: Session, name: str) -> Reviewer | None:
    return session.exec(select(Reviewer).where(col(Reviewer.name) == name)).one_or_none()


def get_by_token_hash(session: Session, token_hash: str) -> Reviewer | None:
    return session.exec(select(Reviewer).where(col(Reviewer.token_hash) == token_hash)).one_or_none()


def list_all(session: Session, role: Role | str | None = None, *, lock: bool = False) -> list[Reviewer]:
    """Everyone, by name; only those of ``role`` when given.

    ``lock`` takes row locks (PostgreSQL) until the transaction ends, so a rule checked over these rows (the
    last active admin) cannot be broken by a concurrent change; SQLite's write transactions are serial anyway.
    """
    stmt = select(Reviewer).order_by(col(Reviewer.name))
    if role is not None:
        stmt = stmt.where(col(Reviewer.role) == role)
    if lock:
        stmt = stmt.with_for_update()
    return list(session.exec(stmt))


def create(session: Session, name: str, role: Role | str, token_hash: str | None) -> Reviewer:
    """A new reviewer row, flushed so it has its id. ``role`` is a :class:`Role` value (ValueError otherwise)."""
    reviewer = Reviewer(
        name=name, role=Role(role), token_hash=token_hash, link_issued_at=utcnow() if token_hash else None
    )
    session.add(reviewer)
    session.flush()
    return reviewer


def set_token(session: Session, reviewer_id: int, token_hash: str | None) -> None:
    """Replace (or, with None, remove) a person's link; a new link is dated now."""
    session.exec(
        update(Reviewer)
        .where(col(Reviewer.id) == reviewer_id)
        .values(token_hash=token_hash, link_issued_at=utcnow() if token_hash else None)
    )


def set_active(session: Session, reviewer_id: int, active: bool) -> None:
    session.exec(update(Reviewer).where(col(Reviewer.id) == reviewer_id).values(active=active))


def create_session(
    session: Session, reviewer_id: int, token_hash: str, link_hash: str, browser_hash: str | None
) -> SigninSession:
    row = SigninSession(reviewer_id=reviewer_id, token_hash=token_hash, link_hash=link_hash, browser_hash=browser_hash)
    session.add(row)
    session.flush()
    return row


def get_session(session: Session, token_hash: str) -> tuple[SigninSession, Reviewer] | None:
    """The sign-in session with this token hash and its person, in one query."""
    found = session.exec(
        select(SigninSession, Reviewer)
        .join(Reviewer, col(Reviewer.id) == col(SigninSession.reviewer_id))
        .where(col(SigninSession.token_hash) == token_hash)
    ).one_or_none()
    return None if found is None else (found[0], found[1])


def touch_session(session: Session, session_id: int, now: datetime) -> None:
    session.exec(update(SigninSession).where(col(SigninSession.id) == session_id).values(last_seen_at=now))


def end_session(session: Session, session_id: int, ended_by: str, now: datetime) -> None:
    """End one session. A session already ended elsewhere ("sign out everywhere" on another device) keeps its
    end time but takes this reason, so signing out here still refuses the link in this browser."""
    session.exec(
        update(SigninSession)
        .where(col(SigninSession.id) == session_id)
        .values(ended_at=func.coalesce(col(SigninSession.ended_at), now), ended_by=ended_by)
    )


def end_sessions_of(session: Session, reviewer_id: int, ended_by: str, now: datetime) -> int:
    """End every open session of a person; returns how many were open."""
    result = session.exec(
        update(SigninSession)
        .where(col(SigninSession.reviewer_id) == reviewer_id, col(SigninSession.ended_at).is_(None))
        .values(ended_at=now, ended_by=ended_by)
    )
    return int(result.rowcount or 0)


def signed_out_in_browser(session: Session, link_hash: str, browser_hash: str) -> bool:
    """Whether this browser signed out of a session made from this link."""
    stmt = select(
        exists().where(
            col(SigninSession.link_hash) == link_hash,
            col(SigninSession.browser_hash) == browser_hash,
            col(SigninSession.ended_by) == SIGNED_OUT,
        )
    )
    return bool(session.exec(stmt).one())


def create_api_token(
    session: Session, reviewer_id: int, label: str, token_hash: str, expires_at: datetime | None
) -> ApiToken:
    token = ApiToken(reviewer_id=reviewer_id, label=label, token_hash=token_hash, expires_at=expires_at)
    session.add(token)
    session.flush()
    return token


def api_token_owner(session: Session, token_hash: str) -> tuple[ApiToken, Reviewer] | None:
    row = session.exec(
        select(ApiToken, Reviewer)
        .join(Reviewer, col(Reviewer.id) == col(ApiToken.reviewer_id))
        .where(col(ApiToken.token_hash) == token_hash)
    ).one_or_none()
    return None if row is None else (row[0], row[1])


def live_api_token_labels(session: Session, reviewer_id: int) -> set[str]:
    """The labels of the person's tokens not revoked (expired ones included: their label stays taken)."""
    stmt = select(col(ApiToken.label)).where(
        col(ApiToken.reviewer_id) == reviewer_id, col(ApiToken.revoked_at).is_(None)
    )
    return set(session.exec(stmt).all())


def api_tokens(session: Session, reviewer_id: int | None = None) -> list[tuple[ApiToken, str]]:
    """Tokens (never their secret: only its hash is stored) with their owner's name, oldest first."""
    stmt = select(ApiToken, col(Reviewer.name)).join(Reviewer, col(Reviewer.id) == col(ApiToken.reviewer_id))
    if reviewer_id is not None:
        stmt = stmt.where(col(ApiToken.reviewer_id) == reviewer_id)
    return [(t, str(n)) for t, n in session.exec(stmt.order_by(col(ApiToken.id)))]


def revoke_api_tokens(session: Session, reviewer_id: int, label: str | None, now: datetime) -> int:
    """Revoke the person's live tokens (only the one labelled ``label`` when given); returns how many."""
    stmt = update(ApiToken).where(col(ApiToken.reviewer_id) == reviewer_id, col(ApiToken.revoked_at).is_(None))
    if label is not None:
        stmt = stmt.where(col(ApiToken.label) == label)
    result = session.exec(stmt.values(revoked_at=now))
    return int(result.rowcount or 0)


def touch_api_token(session: Session, token_id: int, now: datetime) -> None:
    session.exec(update(ApiToken).where(col(ApiToken.id) == token_id).values(last_used_at=now))
