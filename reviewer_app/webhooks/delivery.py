"""Sending the outbox: each due delivery is claimed (so two servers never send one at once), POSTed as JSON
with its Standard Webhooks signature, and recorded: delivered on any 2xx, otherwise tried again later.

Retries back off: 30 s, 2 min, 8 min, 30 min, 2 h, 8 h after each failed attempt (plus up to 10% jitter, so
receivers coming back up are not hit by every sender at once); after the 7th attempt (about 11 hours) the
delivery is given up and stays in the log. At least once: a sender that dies mid-send leaves the delivery due
again when its lease ends, so a receiver deduplicates on ``webhook-id`` (the event id, the same on every try).
"""

from __future__ import annotations

import logging
import random
import time
from dataclasses import dataclass
from datetime import datetime, timedelta

import httpx
from sqlalchemy.engine import Engine

from reviewer_app.wire.signing import sign
from storage.engine import read_session, write_session
from storage.models import utcnow
from storage.repositories.webhooks import outbox as repo

__all__ = ["BACKOFF", "MAX_ATTEMPTS", "DeliveryPass", "DeliveryRow", "deliver_due", "delivery_log", "ping"]

log = logging.getLogger(__name__)

BACKOFF = (timedelta(seconds=30), timedelta(minutes=2), timedelta(minutes=8), timedelta(minutes=30),
           timedelta(hours=2), timedelta(hours=8))  # fmt: skip
MAX_ATTEMPTS = len(BACKOFF) + 1
LEASE = timedelta(seconds=60)  # longer than a send may take (TIMEOUT): a claim that outlives it was a dead sender
TIMEOUT = 10.0


@dataclass(frozen=True)
class DeliveryPass:
    """What one pass did: deliveries sent and delivered, failed (to be retried), given up."""

    delivered: int = 0
    retrying: int = 0
    given_up: int = 0

    def line(self) -> str:
        return f"webhooks: {self.delivered} delivered, {self.retrying} to retry, {self.given_up} given up"


@dataclass(frozen=True)
class DeliveryRow:
    """One line of the delivery log."""

    event_id: str
    kind: str
    created_at: datetime
    webhook_id: int
    url: str
    status: str
    attempts: int
    last_status: int | None
    last_error: str | None
    next_attempt_at: datetime | None


def _retry_at(attempts: int, now: datetime, rng: random.Random) -> datetime:
    delay = BACKOFF[min(attempts, len(BACKOFF)) - 1]
    return now + delay * (1 + 0.1 * rng.random())


def deliver_due(
    engine: Engine, *, client: httpx.Client | None = None, limit: int = 100, now: datetime | None = None
) -> DeliveryPass:
    """Send every delivery that is due (up to ``limit``) and record each result."""
    rng = random.Random()
    started = now or utcnow()
    with read_session(engine) as session:
        batch = [
            (d.id, d.next_attempt_at, d.attempts, e.id, e.payload, h.url, h.secret)
            for d, e, h in repo.due(session, started, limit)
        ]
    own = client is None
    http = client or httpx.Client(timeout=TIMEOUT, follow_redirects=False)
    delivered = retrying = given_up = 0
    try:
        for delivery_id, seen_at, attempts, event_id, payload, url, secret in batch:
            assert delivery_id is not None
            with write_session(engine) as session:
                if not repo.claim(session, delivery_id, seen_at, started + LEASE):
                    continue  # another sender has it
            body = payload.encode()
            stamp = int(time.time())
            headers = {
                "content-type": "application/json",
                "user-agent": "blind-review-webhooks/1",
                "webhook-id": event_id,
                "webhook-timestamp": str(stamp),
                "webhook-signature": sign(secret, event_id, stamp, body),
            }
            status: int | None = None
            error: str | None = None
            began = time.perf_counter()
            try:
                answer = http.post(url, content=body, headers=headers)
                status = answer.status_code
                if not answer.is_success:
                    error = f"HTTP {status}: {answer.text[:200]}"
            except httpx.HTTPError as exc:
                error = f"{type(exc).__name__}: {str(exc)[:200]}"
            ms = (time.perf_counter() - began) * 1000
            tried = attempts + 1
            done_at = utcnow()
            if error is None:
                outcome, next_at = "delivered", done_at
                delivered += 1
            elif tried >= MAX_ATTEMPTS:
                outcome, next_at = "given_up", done_at
                given_up += 1
                log.warning("webhook delivery of %s to %s given up after %d attempts: %s", event_id, url, tried, error)
            else:
                outcome, next_at = "pending", _retry_at(tried, done_at, rng)
                retrying += 1
            with write_session(engine) as session:
                repo.record(session, delivery_id, status=outcome, attempts=tried, next_attempt_at=next_at,
                            last_status=status, last_error=error, last_ms=ms, now=done_at)  # fmt: skip
    finally:
        if own:
            http.close()
    return DeliveryPass(delivered, retrying, given_up)


def delivery_log(
    engine: Engine, *, limit: int = 100, offset: int = 0, hook_id: int | None = None
) -> tuple[list[DeliveryRow], int]:
    """The newest deliveries (of ``hook_id`` when given) and how many there are in all."""
    with read_session(engine) as session:
        rows, total = repo.deliveries(session, limit=limit, offset=offset, hook_id=hook_id)
        return [
            DeliveryRow(
                event_id=e.id,
                kind=e.kind,
                created_at=e.created_at,
                webhook_id=h.id or 0,
                url=h.url,
                status=d.status,
                attempts=d.attempts,
                last_status=d.last_status,
                last_error=d.last_error,
                next_attempt_at=d.next_attempt_at if d.status == "pending" else None,
            )  # fmt: skip
            for d, e, h in rows
        ], total


def ping(engine: Engine, hook_id: int) -> DeliveryRow | None:
    """Send one hook a test event now (the CLI's ``test-webhook``, the Admin page's button) and return its
    delivery as logged (None if it could not be found); a failed one stays queued for its retries."""
    from reviewer_app.webhooks.hooks import send_test_event

    event = send_test_event(engine, hook_id)
    deliver_due(engine)
    return next((r for r in delivery_log(engine, limit=50, hook_id=hook_id)[0] if r.event_id == event), None)
