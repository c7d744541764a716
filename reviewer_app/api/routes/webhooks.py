"""Webhooks (admins): register a URL for events (the secret comes back once), list, remove, send a test event,
and read the delivery log."""

from __future__ import annotations

from fastapi import APIRouter
from pydantic import BaseModel, Field

from reviewer_app.api.auth import Admin, EngineDep
from reviewer_app.api.paging import PageQuery
from reviewer_app.webhooks import (
    EVENT_KINDS,
    DeliveryRow,
    WebhookInfo,
    add_webhook,
    delivery_log,
    list_webhooks,
    remove_webhook,
    send_test_event,
)
from reviewer_app.wire import DeliveryOut, NewWebhook, Page, WebhookOut

router = APIRouter(prefix="/webhooks", tags=["webhooks"])


def _out(info: WebhookInfo) -> WebhookOut:
    return WebhookOut(id=info.id, url=info.url, events=list(info.events), label=info.label,
                      created_by=info.created_by, created_at=info.created_at, disabled_at=info.disabled_at)  # fmt: skip


def _delivery(row: DeliveryRow) -> DeliveryOut:
    return DeliveryOut.model_validate(row, from_attributes=True)


class WebhookIn(BaseModel):
    url: str = Field(description="where deliveries are POSTed (http or https)")
    events: list[str] = Field(default_factory=lambda: ["*"], description=f"any of {', '.join(EVENT_KINDS)}, or *")
    label: str = ""


@router.get("", summary="List webhooks")
def webhooks(engine: EngineDep, _: Admin, include_removed: bool = False) -> list[WebhookOut]:
    return [_out(h) for h in list_webhooks(engine, include_removed=include_removed)]


@router.post("", summary="Register a webhook", status_code=201)
def register(engine: EngineDep, who: Admin, hook: WebhookIn) -> NewWebhook:
    """Deliveries are JSON, signed as Standard Webhooks (webhook-id, webhook-timestamp, webhook-signature) with the
    secret in the answer, retried with backoff for about 11 hours."""
    info, secret = add_webhook(engine, hook.url, hook.events, label=hook.label, created_by=who.name)
    return NewWebhook(webhook=_out(info), secret=secret)


@router.delete("/{webhook_id}", summary="Remove a webhook", status_code=204)
def remove(engine: EngineDep, _: Admin, webhook_id: int) -> None:
    remove_webhook(engine, webhook_id)


@router.post("/{webhook_id}/test", summary="Queue a test event (ping) for one webhook", status_code=202)
def test(engine: EngineDep, _: Admin, webhook_id: int) -> dict[str, str]:
    return {"event_id": send_test_event(engine, webhook_id)}


@router.get("/deliveries", summary="The delivery log, newest first")
def deliveries(engine: EngineDep, _: Admin, page: PageQuery, webhook_id: int | None = None) -> Page[DeliveryOut]:
    rows, total = delivery_log(engine, limit=page.limit, offset=page.offset, hook_id=webhook_id)
    end = page.offset + len(rows)
    return Page[DeliveryOut](items=[_delivery(r) for r in rows], total=total, limit=page.limit, offset=page.offset,
                             next_offset=end if end < total else None)  # fmt: skip
