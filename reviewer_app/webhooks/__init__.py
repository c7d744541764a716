"""Webhooks (issue 31): admins register URLs for events; events go into a durable outbox and are delivered,
signed (Standard Webhooks), with retries, by the served app's delivery loop or ``blind-review deliver-webhooks``.
A low layer (the services that emit events import it): it stands on storage, the errors and the wire's signing.
"""

from __future__ import annotations

from reviewer_app.webhooks.delivery import (
    BACKOFF,
    MAX_ATTEMPTS,
    DeliveryPass,
    DeliveryRow,
    deliver_due,
    delivery_log,
    ping,
)
from reviewer_app.webhooks.events import EVENT_KINDS, emit
from reviewer_app.webhooks.hooks import WebhookInfo, add_webhook, list_webhooks, remove_webhook, send_test_event

__all__ = [
    "BACKOFF",
    "EVENT_KINDS",
    "MAX_ATTEMPTS",
    "DeliveryPass",
    "DeliveryRow",
    "WebhookInfo",
    "add_webhook",
    "deliver_due",
    "delivery_log",
    "emit",
    "list_webhooks",
    "ping",
    "remove_webhook",
    "send_test_event",
]
