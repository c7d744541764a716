"""What can happen that a pipeline may want to hear of, and how an event is put in the outbox.

An event is written once per happening: its ``dedup_key`` says what happened (batch 12 loaded; scenario qa of
batch 12 settled at 140 samples; canary m2 flagged against m1 on 2026-03-05), so a monitor read again or a
comparison run twice sends nothing new. Writing the event and its deliveries is one transaction with the
caller's own (the load's) or right after it: a restart loses nothing that was emitted.
"""

from __future__ import annotations

import json
import logging
import uuid
from typing import Any

from sqlalchemy.engine import Engine

from storage.engine import write_session
from storage.models import WebhookEvent, utcnow
from storage.repositories.webhooks import outbox as repo

__all__ = ["EVENT_KINDS", "emit", "subscribed"]

log = logging.getLogger(__name__)

EVENT_KINDS: dict[str, str] = {
    "load.finished": "a batch was loaded (a load of content already there is not one)",
    "batch.complete": "every item of a batch has its k answers",
    "scenario.verdict_changed": "a scenario's anytime-valid verdict moved (settled, more samples, not settling)",
    "compare.regression": "`compare` found a regression (one event per comparison that found any)",
    "monitor.canary": "the production monitor flagged a canary against the model it would replace",
    "judge.finished": "an LLM judge run on a batch ended (finished, or stopped with why), with its counts",
    "ping": "a test event an admin sent to one webhook",
}


def subscribed(events: str, kind: str) -> bool:
    """Whether a hook listening to ``events`` (comma-separated kinds, or "*") gets ``kind`` (pings: always)."""
    wanted = {e.strip() for e in events.split(",")}
    return kind == "ping" or "*" in wanted or kind in wanted


def emit(
    engine: Engine,
    kind: str,
    data: dict[str, Any],
    *,
    dedup_key: str,
    batch_id: int | None = None,
    only_hook: int | None = None,
) -> str | None:
    """Put an event of ``kind`` with ``data`` in the outbox, with a delivery for every live hook that listens
    to it (``only_hook``: that hook alone, a test); returns its id, or None when this happening was emitted before
    (``dedup_key``). Never raises for a
    webhook's sake: an event that cannot be written is logged, and the caller's work stands."""
    if kind not in EVENT_KINDS:
        raise ValueError(f"unknown event kind {kind!r}")
    event_id = str(uuid.uuid4())
    now = utcnow()
    body = {"id": event_id, "type": kind, "created_at": now.isoformat(timespec="seconds"), "data": data}
    try:
        with write_session(engine) as session:
            if repo.event_exists(session, dedup_key):
                return None
            targets = [
                h.id
                for h in repo.hooks(session, live_only=True)
                if h.id is not None and subscribed(h.events, kind) and only_hook in (None, h.id)
            ]
            payload = json.dumps(body, ensure_ascii=False, sort_keys=True)
            row = WebhookEvent(id=event_id, kind=kind, batch_id=batch_id, dedup_key=dedup_key, payload=payload,
                               created_at=now)  # fmt: skip
            if not repo.insert_event(session, row, targets, now):
                return None
    except Exception:  # noqa: BLE001 - a webhook must never fail the load or report that emitted it
        log.exception("could not put a %s event in the webhook outbox", kind)
        return None
    log.info("webhook event %s %s for %d hook(s)", kind, event_id, len(targets))
    return event_id
