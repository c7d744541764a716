"""The Admin page's Webhooks tab: register a URL for events (its signing secret shown once), the hooks with a
test and a remove button each, and the delivery log. Layout only: each action is one ``reviewer_app.webhooks``
call, the same the CLI and the API make."""

from __future__ import annotations

from typing import TYPE_CHECKING

import streamlit as st

from reviewer_app.domain.views import Person
from reviewer_app.ui.views.admin_messages import act, show_result
from reviewer_app.webhooks import (
    EVENT_KINDS,
    add_webhook,
    delivery_log,
    list_webhooks,
    ping,
    remove_webhook,
)

if TYPE_CHECKING:
    from sqlalchemy.engine import Engine

MESSAGE = "admin_webhooks_msg"


def render_webhooks(engine: Engine, person: Person) -> None:
    show_result(MESSAGE)
    st.caption(
        "Each event is POSTed as JSON, signed the Standard Webhooks way (webhook-id, webhook-timestamp, "
        "webhook-signature), and retried with backoff for about 11 hours; the README shows how to verify it."
    )
    with st.form("add_webhook", clear_on_submit=True):
        st.markdown("**Add a webhook**")
        url = st.text_input("URL", placeholder="https://ci.example.org/hooks/blind-review")
        events = st.multiselect("Events", list(EVENT_KINDS), default=["batch.complete"],
                                format_func=lambda k: f"{k}: {EVENT_KINDS[k]}")  # fmt: skip
        label = st.text_input("Label (what it is for)")
        if st.form_submit_button("Add webhook"):

            def added() -> str:
                info, secret = add_webhook(engine, url, events, label=label, created_by=person.name)
                return f"Added webhook {info.id} for {', '.join(info.events)}. Signing secret (shown once):\n{secret}"

            act(MESSAGE, added)
    hooks = list_webhooks(engine)
    if hooks:
        st.markdown("**Webhooks**")
        st.dataframe(
            [{"id": h.id, "url": h.url, "events": ", ".join(h.events), "label": h.label, "by": h.created_by or ""}
             for h in hooks],
            hide_index=True, width="stretch",
        )  # fmt: skip
        pick = st.selectbox(
            "Webhook", [h.id for h in hooks], format_func=lambda i: next(h.line() for h in hooks if h.id == i)
        )
        left, right = st.columns(2)
        if left.button("Send a test event", help="A ping, sent at once; its result shows in the log below."):

            def pinged() -> str:
                row = ping(engine, pick)
                if row is not None and row.status == "delivered":
                    return f"Delivered a test event to webhook {pick} (HTTP {row.last_status})."
                why = row.last_error if row is not None else "queued"
                return f"The test event to webhook {pick} did not go through ({why}); it is retried."

            act(MESSAGE, pinged)
        if right.button("Remove", help="Nothing more is sent to it; its log stays."):

            def removed() -> str:
                remove_webhook(engine, pick)
                return f"Removed webhook {pick}: nothing more is sent to it."

            act(MESSAGE, removed)
    rows, total = delivery_log(engine, limit=100)
    st.markdown(f"**Delivery log** (newest first; {total} in all)")
    if not rows:
        st.caption("Nothing sent yet.")
        return
    st.dataframe(
        [{"when": r.created_at, "event": r.kind, "webhook": r.webhook_id, "status": r.status, "attempts": r.attempts,
          "answer": r.last_error or (f"HTTP {r.last_status}" if r.last_status else ""), "next try": r.next_attempt_at,
          "event id": r.event_id} for r in rows],
        hide_index=True, width="stretch",
    )  # fmt: skip
