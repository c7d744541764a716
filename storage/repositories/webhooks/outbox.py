"""The webhooks' tables: registering hooks, writing an event with its deliveries in one transaction, claiming
due deliveries without two senders ever taking the same one, and the delivery log."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from sqlalchemy import update
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, col, select

from storage.models import Webhook, WebhookDelivery, WebhookEvent

__all__ = [
    "add_hook",
    "claim",
    "deliveries",
    "disable_hook",
    "due",
    "event_exists",
    "hook",
    "hooks",
    "insert_event",
    "payloads",
    "record",
    "wanted",
]


def add_hook(session: Session, url: str, events: str, secret: str, label: str, created_by: str | None) -> Webhook:
    row = Webhook(url=url, events=events, secret=secret, label=label, created_by=created_by)
    session.add(row)
    session.flush()
    return row


def hooks(session: Session, *, live_only: bool = False) -> list[Webhook]:
    stmt = select(Webhook).order_by(col(Webhook.id))
    if live_only:
        stmt = stmt.where(col(Webhook.disabled_at).is_(None))
    return list(session.exec(stmt).all())


def hook(session: Session, hook_id: int) -> Webhook | None:
    return session.get(Webhook, hook_id)


def disable_hook(session: Session, hook_id: int, now: datetime) -> bool:
    """Disable a live hook and give up its pending deliveries; False when there is no live hook of that id."""
    row = session.get(Webhook, hook_id)
    if row is None or row.disabled_at is not None:
        return False
    row.disabled_at = now
    session.execute(
        update(WebhookDelivery)
        .where(col(WebhookDelivery.webhook_id) == hook_id, col(WebhookDelivery.status) == "pending")
        .values(status="given_up", last_error="the webhook was removed", updated_at=now)
    )
    return True


def event_exists(session: Session, dedup_key: str) -> bool:
    return session.exec(select(WebhookEvent.id).where(col(WebhookEvent.dedup_key) == dedup_key)).first() is not None


def insert_event(session: Session, event: WebhookEvent, hook_ids: Sequence[int], now: datetime) -> bool:
    """Write the event and one pending delivery per hook (in a savepoint: a concurrent emit of the same
    ``dedup_key`` makes this one a no-op); False when it was there already."""
    try:
        with session.begin_nested():
            session.add(event)
            session.flush()
            for hook_id in hook_ids:
                session.add(WebhookDelivery(event_id=event.id, webhook_id=hook_id, next_attempt_at=now, updated_at=now))
            session.flush()
    except IntegrityError:
        return False
    return True


def due(session: Session, now: datetime, limit: int) -> list[tuple[WebhookDelivery, WebhookEvent, Webhook]]:
    """Pending deliveries whose time has come, oldest first, with their event and hook."""
    stmt = (
        select(WebhookDelivery, WebhookEvent, Webhook)
        .join(WebhookEvent, col(WebhookEvent.id) == col(WebhookDelivery.event_id))
        .join(Webhook, col(Webhook.id) == col(WebhookDelivery.webhook_id))
        .where(col(WebhookDelivery.status) == "pending", col(WebhookDelivery.next_attempt_at) <= now)
        .order_by(col(WebhookDelivery.next_attempt_at), col(WebhookDelivery.id))
        .limit(limit)
    )
    return [(d, e, h) for d, e, h in session.exec(stmt).all()]


def claim(session: Session, delivery_id: int, seen_at: datetime, lease_until: datetime) -> bool:
    """Take the delivery for one send: move its next attempt to ``lease_until`` if nobody moved it since it was
    read (``seen_at``). A compare-and-set, so of two senders (two servers) exactly one wins; a sender that dies
    mid-send leaves it due again when the lease ends (at least once)."""
    result = session.execute(
        update(WebhookDelivery)
        .where(
            col(WebhookDelivery.id) == delivery_id,
            col(WebhookDelivery.status) == "pending",
            col(WebhookDelivery.next_attempt_at) == seen_at,
        )
        .values(next_attempt_at=lease_until)
        .execution_options(synchronize_session=False)
    )
    return bool(getattr(result, "rowcount", 0))


def record(
    session: Session,
    delivery_id: int,
    *,
    status: str,
    attempts: int,
    next_attempt_at: datetime,
    last_status: int | None,
    last_error: str | None,
    last_ms: float | None,
    now: datetime,
) -> None:
    session.execute(
        update(WebhookDelivery)
        .where(col(WebhookDelivery.id) == delivery_id)
        .values(
            status=status,
            attempts=attempts,
            next_attempt_at=next_attempt_at,
            last_status=last_status,
            last_error=last_error,
            last_ms=last_ms,
            delivered_at=now if status == "delivered" else None,
            updated_at=now,
        )
        .execution_options(synchronize_session=False)
    )


def deliveries(
    session: Session, *, limit: int, offset: int = 0, hook_id: int | None = None
) -> tuple[list[tuple[WebhookDelivery, WebhookEvent, Webhook]], int]:
    """The delivery log, newest event first, and its total."""
    from sqlalchemy import func

    where = [] if hook_id is None else [col(WebhookDelivery.webhook_id) == hook_id]
    stmt = (
        select(WebhookDelivery, WebhookEvent, Webhook)
        .join(WebhookEvent, col(WebhookEvent.id) == col(WebhookDelivery.event_id))
        .join(Webhook, col(Webhook.id) == col(WebhookDelivery.webhook_id))
        .where(*where)
        .order_by(col(WebhookEvent.created_at).desc(), col(WebhookDelivery.id).desc())
        .limit(limit)
        .offset(offset)
    )
    total = int(session.exec(select(func.count()).select_from(WebhookDelivery).where(*where)).one())
    return [(d, e, h) for d, e, h in session.exec(stmt).all()], total


def payloads(session: Session, kind: str, batch_id: int) -> list[str]:
    """The payloads of a batch's events of ``kind``, oldest first (what the watcher said last)."""
    stmt = (
        select(WebhookEvent.payload)
        .where(col(WebhookEvent.kind) == kind, col(WebhookEvent.batch_id) == batch_id)
        .order_by(col(WebhookEvent.created_at), col(WebhookEvent.id))
    )
    return list(session.exec(stmt).all())


def wanted(session: Session) -> set[str]:
    """The event kinds some live hook listens to ("*" when one listens to all)."""
    return {kind.strip() for h in hooks(session, live_only=True) for kind in h.events.split(",")}
