"""Webhook signatures, the Standard Webhooks scheme (standardwebhooks.com): every delivery carries

* ``webhook-id``: the event's id (the same on every retry: receivers deduplicate on it),
* ``webhook-timestamp``: seconds since the epoch when it was sent,
* ``webhook-signature``: ``v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}">``, keyed with the hook's secret
  (``whsec_`` then base64 of 32 random bytes; the key is those bytes).

Here for both sides: the server signs (``reviewer_app.webhooks``), a receiver verifies with :func:`verify`
(through the client, ``reviewer_app.client.verify_webhook``, or the stdlib snippet in the README).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
import time
from collections.abc import Mapping

from reviewer_app.errors import BlindReviewError

__all__ = ["SECRET_PREFIX", "SignatureError", "new_secret", "sign", "verify"]

SECRET_PREFIX = "whsec_"
TOLERANCE_SECONDS = 300


class SignatureError(BlindReviewError):
    """A webhook delivery whose signature does not verify: not from this server, changed on the way, or replayed."""


def new_secret() -> str:
    return SECRET_PREFIX + base64.b64encode(secrets.token_bytes(32)).decode()


def _key(secret: str) -> bytes:
    try:
        return base64.b64decode(secret.removeprefix(SECRET_PREFIX), validate=True)
    except ValueError as exc:
        raise SignatureError("the webhook secret is not a whsec_ secret; copy it as it was shown") from exc


def sign(secret: str, event_id: str, timestamp: int, body: bytes) -> str:
    """The ``webhook-signature`` header value for ``body``."""
    digest = hmac.new(_key(secret), f"{event_id}.{timestamp}.".encode() + body, hashlib.sha256).digest()
    return "v1," + base64.b64encode(digest).decode()


def verify(
    secret: str,
    body: bytes,
    headers: Mapping[str, str],
    *,
    tolerance: int = TOLERANCE_SECONDS,
    now: float | None = None,
) -> str:
    """Check a delivery: its headers (any case), its body as received (bytes, before any JSON parsing) and the
    hook's secret; returns the event id. Raises :class:`SignatureError` for a missing header, a timestamp more
    than ``tolerance`` seconds away (a replay), or no signature that matches (compared in constant time)."""
    lower = {k.lower(): v for k, v in headers.items()}
    event_id, stamp, signatures = (
        lower.get("webhook-id"),
        lower.get("webhook-timestamp"),
        lower.get("webhook-signature"),
    )
    if not event_id or not stamp or not signatures:
        raise SignatureError(
            "not a signed webhook delivery: webhook-id, webhook-timestamp or webhook-signature is missing"
        )
    try:
        sent = int(stamp)
    except ValueError as exc:
        raise SignatureError(f"webhook-timestamp is not a number: {stamp!r}") from exc
    if abs((time.time() if now is None else now) - sent) > tolerance:
        raise SignatureError(
            f"the delivery was signed {sent}, more than {tolerance} s from now: a replay, or a clock off"
        )
    expected = sign(secret, event_id, sent, body)
    if not any(hmac.compare_digest(expected, given) for given in signatures.split()):
        raise SignatureError("the webhook signature does not match: another secret, or the body was changed on the way")
    return event_id
