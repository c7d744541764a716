"""Reviewer rows. Sign-in tokens are stored only as SHA-256 hashes."""

from __future__ import annotations

from sqlalchemy import select, update
from sqlmodel import Session

from storage.models import Reviewer


def get_by_name(session: Session, name: str) -> Reviewer | None:
    return session.execute(select(Reviewer).where(Reviewer.name == name)).scalar_one_or_none()


def get_by_token_hash(session: Session, token_hash: str) -> Reviewer | None:
    return session.execute(select(Reviewer).where(Reviewer.token_hash == token_hash)).scalar_one_or_none()


def list_all(session: Session, role: str | None = None) -> list[Reviewer]:
    stmt = select(Reviewer).order_by(Reviewer.name)
    if role is not None:
        stmt = stmt.where(Reviewer.role == role)
    return list(session.execute(stmt).scalars())


def create(session: Session, name: str, role: str, token_hash: str | None) -> Reviewer:
    reviewer = Reviewer(name=name, role=role, token_hash=token_hash)
    session.add(reviewer)
    session.flush()
    return reviewer


def set_token(session: Session, reviewer_id: int, token_hash: str | None) -> None:
    session.execute(update(Reviewer).where(Reviewer.id == reviewer_id).values(token_hash=token_hash))


def set_active(session: Session, reviewer_id: int, active: bool) -> None:
    session.execute(update(Reviewer).where(Reviewer.id == reviewer_id).values(active=active))
