"""The Admin page's Webhooks tab, through the real app script: a bad URL said on the page, a webhook added (its
secret shown once), a test event delivered to a loopback receiver and in the log, the webhook removed."""

from __future__ import annotations

from sqlalchemy.engine import Engine

from reviewer_app.people.people import add_reviewer
from reviewer_app.webhooks import list_webhooks
from reviewer_app.wire.signing import verify
from tests.support.apptest import app_for
from tests.support.webhook_receiver import running_receiver


def _messages(at) -> str:  # type: ignore[no-untyped-def]
    """What the page said, as a reader reads it (the word joiners that keep URLs from turning into links out)."""
    return " ".join(str(e.value) for e in [*at.success, *at.error, *at.info, *at.code]).replace("\u2060", "")


def test_add_test_and_remove_a_webhook_on_the_page(engine: Engine) -> None:
    at = app_for(add_reviewer(engine, "root", "admin")[1])
    at.run(timeout=120)
    assert any(t.label == "Webhooks" for t in at.tabs)
    url = next(w for w in at.text_input if w.label == "URL")
    url.set_value("ftp://nowhere")
    next(b for b in at.button if b.label == "Add webhook").click()
    at.run(timeout=120)
    assert "URL: must be an absolute http:// or https:// address" in _messages(at)
    with running_receiver() as receiver:
        next(w for w in at.text_input if w.label == "URL").set_value(receiver.url)
        next(w for w in at.text_input if w.label == "Label (what it is for)").set_value("ci")
        next(b for b in at.button if b.label == "Add webhook").click()
        at.run(timeout=120)
        shown = _messages(at)
        assert "Signing secret (shown once)" in shown
        secret = at.code[0].value  # in a code block, with its copy button
        assert secret.startswith("whsec_")
        [hook] = list_webhooks(engine)
        assert hook.created_by == "root" and hook.label == "ci" and hook.events == ("batch.complete",)
        next(b for b in at.button if b.label == "Send a test event").click()
        at.run(timeout=120)
        assert f"Delivered a test event to webhook {hook.id} (HTTP 200)" in _messages(at)
        [got] = receiver.received
        verify(secret, got.body, got.headers)
    log = next(df.value for df in at.dataframe if "event id" in df.value.columns)
    assert list(log["event"]) == ["ping"] and list(log["status"]) == ["delivered"]
    next(b for b in at.button if b.label == "Remove").click()
    at.run(timeout=120)
    assert f"Removed webhook {hook.id}" in _messages(at) and list_webhooks(engine) == []
