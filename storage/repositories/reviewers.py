"""Reviewer rows. Sign-in tokens are stored only as SHA-256 hashes."""

from __future__ import annotations

from sqlalchemy import update
from sqlmodel import Session, col, select

from reviewer_app.domain.enums import Role
from storage.models import Reviewer


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
    reviewer = Reviewer(name=name, role=Role(role), token_hash=token_hash)
    session.add(reviewer)
    session.flush()
    return reviewer


def set_token(session: Session, reviewer_id: int, token_hash: str | None) -> None:
    session.exec(update(Reviewer).where(col(Reviewer.id) == reviewer_id).values(token_hash=token_hash))


def set_active(session: Session, reviewer_id: int, active: bool) -> None:
    session.exec(update(Reviewer).where(col(Reviewer.id) == reviewer_id).values(active=active))
