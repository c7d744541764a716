"""Webhooks against real receivers on loopback, on SQLite and PostgreSQL: registration checks; every event kind
emitted by its real trigger (a load, a batch complete, a verdict moved, a comparison's regression, a monitor's
canary) and emitted once; signatures that verify and fail when tampered, replayed or keyed wrong; retries with
backoff, given up after the last attempt; a restart that loses nothing; two senders never sending one twice."""

from __future__ import annotations

import json
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import update
from sqlalchemy.engine import Engine

from reviewer_app.batches.loading import load_batch
from reviewer_app.errors import NotFoundError, ValidationError
from reviewer_app.production.feedback import import_feedback, monitor
from reviewer_app.ratings.files import import_ratings
from reviewer_app.results import watch_and_deliver
from reviewer_app.versions.batch_compare import compare_batches
from reviewer_app.webhooks import (
    MAX_ATTEMPTS,
    add_webhook,
    deliver_due,
    delivery_log,
    list_webhooks,
    remove_webhook,
    send_test_event,
)
from reviewer_app.wire.signing import SignatureError, verify
from storage.engine import get_engine, write_session
from storage.models import Webhook, utcnow
from tests.exports.builders import rating_batch
from tests.helpers import RATING_RUBRIC, make_records, write_batch, write_rubric
from tests.support import compare_chain
from tests.support.webhook_receiver import running_receiver


def _load(engine: Engine, folder: Path, name: str = "b", n: int = 4) -> None:
    load_batch(engine, [write_batch(folder, make_records(n, ["m1", "m2"]), name=f"{name}.jsonl")],
               write_rubric(folder, RATING_RUBRIC.format(overlap=2), name=f"{name}.toml"), name=name)  # fmt: skip


def _later(hours: float = 24) -> datetime:
    return utcnow() + timedelta(hours=hours)


def test_registration_is_checked(engine: Engine) -> None:
    with pytest.raises(ValidationError) as caught:
        add_webhook(engine, "ftp://example.org/x", ["load.finished", "batch.done"])
    text = str(caught.value)
    assert "url: must be an absolute http:// or https:// address" in text and "unknown: batch.done" in text
    info, secret = add_webhook(engine, "https://ci.example.org/h", ["load.finished"], label="ci")
    assert secret.startswith("whsec_") and info.events == ("load.finished",)
    assert [h.id for h in list_webhooks(engine)] == [info.id]
    remove_webhook(engine, info.id)
    assert list_webhooks(engine) == []
    with pytest.raises(NotFoundError):
        remove_webhook(engine, info.id)


def test_a_load_is_delivered_signed_and_tampering_fails(engine: Engine, tmp_path: Path) -> None:
    with running_receiver() as receiver:
        _, secret = add_webhook(engine, receiver.url, ["load.finished"])
        _, other_secret = add_webhook(engine, receiver.url, ["compare.regression"])  # not subscribed to loads
        _load(engine, tmp_path)
        _load(engine, tmp_path)  # the same content again: no new load, no new event
        assert deliver_due(engine).delivered == 1
        assert deliver_due(engine).delivered == 0
    [got] = receiver.received
    event_id = verify(secret, got.body, got.headers)
    body = json.loads(got.body)
    assert body["id"] == event_id and body["type"] == "load.finished"
    assert body["data"]["batch"] == "b" and body["data"]["models"] == ["m1", "m2"] and body["data"]["outputs"] == 8
    with pytest.raises(SignatureError, match="does not match"):
        verify(secret, got.body.replace(b'"b"', b'"c"'), got.headers)
    with pytest.raises(SignatureError, match="does not match"):
        verify(other_secret, got.body, got.headers)
    with pytest.raises(SignatureError, match="more than 300 s"):
        verify(secret, got.body, got.headers, now=int(got.headers["webhook-timestamp"]) + 301)
    with pytest.raises(SignatureError, match="missing"):
        verify(secret, got.body, {k: v for k, v in got.headers.items() if k.lower() != "webhook-signature"})


def test_retries_back_off_keep_the_event_id_and_give_up(engine: Engine, tmp_path: Path) -> None:
    with running_receiver([500, 503]) as receiver:
        add_webhook(engine, receiver.url, ["*"])
        _load(engine, tmp_path)
        first = deliver_due(engine)
        assert (first.delivered, first.retrying) == (0, 1)
        [row] = delivery_log(engine)[0]
        assert row.status == "pending" and row.attempts == 1 and row.last_status == 500
        assert row.next_attempt_at is not None
        wait = row.next_attempt_at.replace(tzinfo=row.next_attempt_at.tzinfo or UTC) - utcnow()
        assert timedelta(seconds=25) < wait < timedelta(seconds=35)  # 30 s, up to 10% more
        assert deliver_due(engine).delivered == 0  # not due yet: nothing sent
        assert deliver_due(engine, now=_later()).retrying == 1  # 503
        assert deliver_due(engine, now=_later()).delivered == 1
        ids = {r.headers["webhook-id"] for r in receiver.received}
        assert len(receiver.received) == 3 and len(ids) == 1  # the same event, three tries
    with running_receiver([500] * 20) as failing:
        add_webhook(engine, failing.url, ["load.finished"])
        _load(engine, tmp_path, name="c", n=5)
        passes = [deliver_due(engine, now=_later(24 * k)) for k in range(1, MAX_ATTEMPTS + 2)]
        assert len(failing.received) == MAX_ATTEMPTS
        assert sum(p.given_up for p in passes) >= 1  # this hook's (the first hook, its receiver gone, gives up too)
        gone = [r for r in delivery_log(engine)[0] if r.url == failing.url]
        assert gone[0].status == "given_up" and gone[0].attempts == MAX_ATTEMPTS


def test_a_restart_loses_nothing(engine: Engine, tmp_path: Path) -> None:
    with running_receiver() as receiver:
        url = receiver.url
    add_webhook(engine, url, ["load.finished"])  # the receiver is down now
    _load(engine, tmp_path)
    assert deliver_due(engine).retrying == 1  # connection refused: kept
    engine.dispose()  # "the server restarts": a new engine reads the outbox
    fresh = get_engine(str(engine.url.render_as_string(hide_password=False)))
    with running_receiver() as receiver:
        with write_session(fresh) as session:  # the receiver came back on another port
            session.execute(update(Webhook).values(url=receiver.url))
        assert deliver_due(fresh, now=_later()).delivered == 1
        assert json.loads(receiver.received[0].body)["type"] == "load.finished"


def test_two_senders_never_send_one_delivery_twice(engine: Engine, tmp_path: Path) -> None:
    with running_receiver() as receiver:
        add_webhook(engine, receiver.url, ["load.finished"])
        for k in range(6):
            _load(engine, tmp_path / str(k), name=f"b{k}", n=2 + k)
        results = []
        threads = [threading.Thread(target=lambda: results.append(deliver_due(engine))) for _ in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
        assert sum(r.delivered for r in results) == 6
        ids = [r.headers["webhook-id"] for r in receiver.received]
        assert len(ids) == 6 and len(set(ids)) == 6


def test_batch_complete_and_a_ping(engine: Engine, tmp_path: Path) -> None:
    with running_receiver() as receiver:
        info, _ = add_webhook(engine, receiver.url, ["batch.complete"])
        rating_batch(engine, tmp_path, rated=False)  # 2 samples x 3 models, k = 2
        assert watch_and_deliver(engine).emitted == 0  # nothing rated yet
        half = tmp_path / "half.csv"
        rows = [f"{who},s{i},{m},correctness,3\n{who},s{i},{m},follows_format,1\n"
                for i in range(2) for m in ("m1", "m2", "m3") for who in ("ann", "bob")]  # fmt: skip
        half.write_text("reviewer,sample_id,model,dimension,score\n" + "".join(rows[:-1]), encoding="utf-8")
        import_ratings(engine, "scores", half)
        assert watch_and_deliver(engine).emitted == 0  # one item still has one answer of two
        rest = tmp_path / "rest.csv"
        rest.write_text("reviewer,sample_id,model,dimension,score\n" + rows[-1], encoding="utf-8")
        import_ratings(engine, "scores", rest)
        done = watch_and_deliver(engine)
        assert (done.emitted, done.sent.delivered) == (1, 1)
        body = json.loads(receiver.bodies()[-1])
        assert body["type"] == "batch.complete" and body["data"] == {
            "batch": "scores", "batch_id": body["data"]["batch_id"], "items": 6, "k": 2, "ratings": 24,
        }  # fmt: skip
        assert watch_and_deliver(engine).emitted == 0  # complete once
        send_test_event(engine, info.id)
        deliver_due(engine)
        assert json.loads(receiver.bodies()[-1])["type"] == "ping"


def test_a_regression_and_a_canary_are_sent_once(engine: Engine, tmp_path: Path) -> None:
    with running_receiver() as receiver:
        add_webhook(engine, receiver.url, ["compare.regression", "monitor.canary"])
        compare_chain.chain(engine, tmp_path)
        compare_batches(engine, "v1", "v2", match=["m1=m1-v2"], rounds=200)
        compare_batches(engine, "v1", "v2", match=["m1=m1-v2"], rounds=200)  # the same regressions: no new event
        start = datetime(2026, 3, 2, tzinfo=UTC)
        events = [
            {"model": m, "timestamp": (start + timedelta(minutes=7 * i)).isoformat(),
             "feedback": 1 if i % (2 if m == "cur" else 5) else -1}
            for m in ("cur", "new") for i in range(300)
        ]  # fmt: skip
        feedback = tmp_path / "feedback.jsonl"
        feedback.write_text("".join(json.dumps(e) + "\n" for e in events), encoding="utf-8")
        import_feedback(engine, feedback)
        monitor(engine, canaries=[("new", "cur")])
        monitor(engine, canaries=[("new", "cur")])
        deliver_due(engine)
    bodies = [json.loads(b) for b in receiver.bodies()]
    regressions = [b for b in bodies if b["type"] == "compare.regression"]
    assert len(regressions) == 1
    assert {(r["scenario"], r["model"]) for r in regressions[0]["data"]["regressions"]} >= {("qa", "m1-v2")}
    canaries = [b for b in bodies if b["type"] == "monitor.canary"]
    assert canaries and len(canaries) == len({(c["data"]["metric"], c["data"]["window"]) for c in canaries})
    assert all(c["data"]["model"] == "new" and c["data"]["against"] == "cur" for c in canaries)


def test_a_verdict_that_settles_is_sent_once(engine: Engine, tmp_path: Path) -> None:
    with running_receiver() as receiver:
        add_webhook(engine, receiver.url, ["scenario.verdict_changed"])
        records = make_records(40, ["m1", "m2"], scenarios=("qa",))
        load_batch(engine, [write_batch(tmp_path, records)], write_rubric(tmp_path, RATING_RUBRIC.format(overlap=2)),
                   name="clear", open_now=True)  # fmt: skip
        rows = "".join(
            f"{who},s{i},{m},correctness,{5 if m == 'm1' else 1 + (i + len(who)) % 2}\n"
            f"{who},s{i},{m},follows_format,{1 if m == 'm1' else 0}\n"
            for i in range(40) for m in ("m1", "m2") for who in ("ann", "bob")
        )  # fmt: skip
        ratings = tmp_path / "ratings.csv"
        ratings.write_text("reviewer,sample_id,model,dimension,score\n" + rows, encoding="utf-8")
        import_ratings(engine, "clear", ratings)
        assert watch_and_deliver(engine).emitted == 1
        assert watch_and_deliver(engine).emitted == 0  # nothing moved since
    [body] = [json.loads(b) for b in receiver.bodies()]
    assert body["type"] == "scenario.verdict_changed"
    assert {k: body["data"][k] for k in ("batch", "scenario", "state", "previous")} == {
        "batch": "clear", "scenario": "qa", "state": "settled", "previous": "more_samples",
    }  # fmt: skip
