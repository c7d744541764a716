"""Registering webhooks: an admin names a URL and the events it wants; the secret its deliveries are signed
with is made here and shown once (it is kept, since signing needs it; the README says who can read it)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from urllib.parse import urlparse

from sqlalchemy.engine import Engine

from reviewer_app.errors import NotFoundError, Problem, ValidationError
from reviewer_app.webhooks.events import EVENT_KINDS, emit
from reviewer_app.wire.signing import new_secret
from storage.engine import read_session, write_session
from storage.models import Webhook, utcnow
from storage.repositories.webhooks import outbox as repo

__all__ = ["WebhookInfo", "add_webhook", "list_webhooks", "remove_webhook", "send_test_event"]


@dataclass(frozen=True)
class WebhookInfo:
    """What may be shown of a hook: never its secret."""

    id: int
    url: str
    events: tuple[str, ...]
    label: str
    created_by: str | None
    created_at: datetime
    disabled_at: datetime | None

    def line(self) -> str:
        state = "removed" if self.disabled_at else "live"
        label = f" ({self.label})" if self.label else ""
        return f"{self.id}: {self.url}{label} [{', '.join(self.events)}] {state}, made {self.created_at:%Y-%m-%d}"


def _info(row: Webhook) -> WebhookInfo:
    assert row.id is not None
    events = tuple(e for e in row.events.split(",") if e)
    return WebhookInfo(row.id, row.url, events, row.label, row.created_by, row.created_at, row.disabled_at)


def _problem(field: str, message: str) -> ValidationError:
    return ValidationError([Problem.argument(field, message)])


def add_webhook(
    engine: Engine, url: str, events: Sequence[str], *, label: str = "", created_by: str | None = None
) -> tuple[WebhookInfo, str]:
    """Register ``url`` for ``events`` (kinds of :data:`EVENT_KINDS`, or ["*"] for all); returns what may be
    shown of it and its secret, the one time it is shown. ValidationError for a URL that is not absolute
    http(s), or an unknown kind (each named, with the kinds there are)."""
    parsed = urlparse(url.strip())
    problems = []
    if parsed.scheme not in ("http", "https") or not parsed.netloc:
        problems.append(Problem.argument("url", f"must be an absolute http:// or https:// address, not {url!r}"))
    kinds = [e.strip() for e in events if e.strip()]
    unknown = [e for e in kinds if e != "*" and e not in EVENT_KINDS]
    if not kinds:
        problems.append(Problem.argument("events", f"name at least one: {', '.join(EVENT_KINDS)} (or *)"))
    if unknown:
        problems.append(
            Problem.argument("events", f"unknown: {', '.join(unknown)}; the kinds are {', '.join(EVENT_KINDS)} (or *)")
        )
    if problems:
        raise ValidationError(problems)
    secret = new_secret()
    with write_session(engine) as session:
        row = repo.add_hook(session, url.strip(), ",".join(dict.fromkeys(kinds)), secret, label.strip(), created_by)
        info = _info(row)
    return info, secret


def list_webhooks(engine: Engine, *, include_removed: bool = False) -> list[WebhookInfo]:
    with read_session(engine) as session:
        return [_info(r) for r in repo.hooks(session, live_only=not include_removed)]


def remove_webhook(engine: Engine, hook_id: int) -> None:
    """Stop a hook: no new deliveries, its pending ones given up (the log keeps them). NotFoundError otherwise."""
    with write_session(engine) as session:
        if not repo.disable_hook(session, hook_id, utcnow()):
            raise NotFoundError(f"no live webhook {hook_id}; `blind-review webhooks` lists them")


def send_test_event(engine: Engine, hook_id: int) -> str:
    """Queue a ``ping`` for one hook (the delivery loop sends it); returns the event id."""
    with read_session(engine) as session:
        row = repo.hook(session, hook_id)
        if row is None or row.disabled_at is not None:
            raise NotFoundError(f"no live webhook {hook_id}; `blind-review webhooks` lists them")
    now = utcnow().isoformat()
    event = emit(
        engine, "ping", {"webhook": hook_id, "sent_at": now}, dedup_key=f"ping:{hook_id}:{now}", only_hook=hook_id
    )
    if event is None:
        raise NotFoundError("the test event could not be queued; see the server's log")
    return event
