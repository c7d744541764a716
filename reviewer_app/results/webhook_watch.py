"""The webhook events nobody's action emits directly: a batch became complete, a scenario's verdict moved. The
served app's webhook loop (:func:`start_webhooks`) looks every ``BLIND_REVIEW_WEBHOOK_SECONDS`` at the batches
whose ratings changed, emits what happened, then sends the outbox (``webhooks.deliver_due``);
``blind-review deliver-webhooks`` does one look and one send, for a cron or a CI job.

A batch is complete when every item has its k answers; a scenario's verdict is the report's anytime-valid one
(``analysis.anytime_verdicts``: settled, more_samples or not_settling), and an event says when it moved from
what the last event said (every scenario starts at more_samples). Only kinds some live hook listens to are
computed: with no webhook, a look reads one small query.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Hashable
from dataclasses import dataclass

from sqlalchemy.engine import Engine

from reviewer_app.analysis.report import anytime_verdicts
from reviewer_app.batches.catalog import batch_rubric
from reviewer_app.settings import webhook_seconds
from reviewer_app.webhooks import DeliveryPass, deliver_due, emit
from storage.engine import read_session
from storage.models import Batch
from storage.repositories.batches import admin as batches_repo
from storage.repositories.batches.batches import batch_counts
from storage.repositories.results.completions import sample_completions
from storage.repositories.results.frames import ratings_frame
from storage.repositories.results.revisions import batch_revision
from storage.repositories.webhooks import outbox as hooks_repo

__all__ = ["WebhookLoop", "WatchPass", "start_webhooks", "watch_and_deliver"]

log = logging.getLogger(__name__)

START = "more_samples"


@dataclass(frozen=True)
class WatchPass:
    """What a look emitted and what the send did."""

    emitted: int
    sent: DeliveryPass

    def line(self) -> str:
        return f"{self.emitted} new event(s); {self.sent.line()}"


class WebhookLoop:
    """One watcher per process: remembers each batch's revision, so an unchanged batch costs one query."""

    def __init__(self, engine: Engine, period: float = 30.0) -> None:
        self.engine, self.period = engine, period
        self.seen: dict[int, Hashable] = {}
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._loop, name="blind-review-webhooks", daemon=True)

    def _loop(self) -> None:
        while not self.stop.wait(self.period):
            try:
                self.run_once()
            except Exception as exc:  # noqa: BLE001 - a background thread: log, look again next time
                first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
                log.warning("the webhook loop failed (%s); it tries again in %.0f s", first, self.period)

    def run_once(self) -> WatchPass:
        return WatchPass(self.look(), deliver_due(self.engine))

    def look(self) -> int:
        """Emit what changed in the batches whose ratings changed since the last look; returns how many events."""
        with read_session(self.engine) as session:
            kinds = hooks_repo.wanted(session)
            if not kinds & {"*", "batch.complete", "scenario.verdict_changed"}:
                return 0
            batches = [b for b in batches_repo.batches(session, archived=False) if b.id is not None]
            revisions = {b.id: batch_revision(session, b.id) for b in batches if b.id is not None}
        emitted = 0
        for batch in batches:
            assert batch.id is not None
            if revisions[batch.id] is None or self.seen.get(batch.id) == revisions[batch.id]:
                continue
            if kinds & {"*", "batch.complete"}:
                emitted += self._complete(batch)
            if kinds & {"*", "scenario.verdict_changed"}:
                emitted += self._verdicts(batch)
            self.seen[batch.id] = revisions[batch.id]
        return emitted

    def _complete(self, batch: Batch) -> int:
        assert batch.id is not None
        with read_session(self.engine) as session:
            counts = batch_counts(session, batch.id)
        if counts.items == 0 or counts.done < counts.items * batch.overlap:
            return 0
        data = {"batch": batch.name, "batch_id": batch.id, "items": counts.items, "k": batch.overlap,
                "ratings": counts.ratings}  # fmt: skip
        return int(emit(self.engine, "batch.complete", data, dedup_key=f"complete:{batch.id}:{batch.content_hash}",
                        batch_id=batch.id) is not None)  # fmt: skip

    def _verdicts(self, batch: Batch) -> int:
        assert batch.id is not None
        rubric = batch_rubric(batch)
        with read_session(self.engine) as session:
            ratings = ratings_frame(session, batch.id, python_strings=True)
            completions = [key for key, _at in sample_completions(session, batch.id, rubric.overlap)]
            said = [json.loads(p)["data"] for p in hooks_repo.payloads(session, "scenario.verdict_changed", batch.id)]
        if ratings.empty:
            return 0
        last = {d["scenario"]: d["state"] for d in said}
        emitted = 0
        for verdict in anytime_verdicts(ratings, rubric, completions):
            before = last.get(verdict.scenario, START)
            if verdict.state == before:
                continue
            data = {"batch": batch.name, "batch_id": batch.id, "scenario": verdict.scenario, "state": verdict.state,
                    "previous": before, "samples": verdict.samples, "sentence": verdict.sentence}  # fmt: skip
            key = f"verdict:{batch.id}:{verdict.scenario}:{len(said)}:{verdict.state}:{verdict.samples}"
            emitted += int(
                emit(self.engine, "scenario.verdict_changed", data, dedup_key=key, batch_id=batch.id) is not None
            )
        return emitted


def watch_and_deliver(engine: Engine) -> WatchPass:
    """One look and one send (``blind-review deliver-webhooks``): a fresh watcher looks at every batch."""
    return WebhookLoop(engine).run_once()


_STARTED: dict[int, WebhookLoop] = {}
_LOCK = threading.Lock()


def start_webhooks(engine: Engine) -> None:
    """Start the served app's webhook loop for ``engine``, once per process."""
    with _LOCK:
        if id(engine) in _STARTED:
            return
        loop = WebhookLoop(engine, webhook_seconds())
        _STARTED[id(engine)] = loop
        loop.thread.start()
