"""A whole study driven through the Python client only, against `blind-review serve` (pages and API in one
process, behind the guard) on SQLite and PostgreSQL: register a webhook, load, add people, assign, import ratings,
report, export, load the next version, compare; the webhooks the study set off arrive at a loopback receiver
with signatures that verify."""

from __future__ import annotations

import csv
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from reviewer_app.client import BlindReview, verify_webhook
from reviewer_app.errors import AssignmentError, NotSignedInError
from reviewer_app.people.api_tokens import issue_api_token
from reviewer_app.people.people import add_reviewer
from storage.engine import get_engine
from tests.helpers import write_batch, write_rubric
from tests.support import compare_chain
from tests.support.app_server import Server
from tests.support.databases import Copy
from tests.support.webhook_receiver import Receiver, running_receiver

ROUNDS = 200


def _bootstrap(copy: Copy) -> str:
    """The one step outside the API: the first admin's token (`blind-review api-token`, on the server)."""
    engine = get_engine(copy.url)
    add_reviewer(engine, "root", "admin")
    token = issue_api_token(engine, "root", label="ci")[1]
    engine.dispose()
    return token


def test_a_whole_study_through_the_client(database: Copy, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    token = _bootstrap(database)
    monkeypatch.setenv("BLIND_REVIEW_WEBHOOK_SECONDS", "1")  # the served app's webhook loop looks every second
    server = Server(database.url, database.data_dir, tmp_path / "serve.log")
    try:
        with running_receiver() as receiver:
            _study(server.url, token, tmp_path, receiver)
    finally:
        server.stop()


def _events(receiver: Receiver, secret: str, kinds: set[str], timeout: float = 60) -> dict[str, dict[str, Any]]:
    """The first delivery of each kind, each verified against the hook's secret, once all of ``kinds`` came."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with receiver.lock:
            got = list(receiver.received)
        seen = {}
        for r in got:
            event = verify_webhook(secret, r.body, r.headers)
            seen.setdefault(event["type"], event)
        if kinds <= set(seen):
            return seen
        time.sleep(0.2)
    raise AssertionError(f"webhook events {kinds - set(seen)} did not arrive within {timeout} s")


def _study(url: str, token: str, folder: Path, receiver: Receiver) -> None:
    rubric = write_rubric(folder, compare_chain.RUBRIC)
    v1 = write_batch(folder / "v1", compare_chain.records({"m1": "m1", "m2": "m2"}), name="outputs.jsonl")
    v2_rows = compare_chain.records({"m1-v2": "m1", "m2": "m2", "m3": "m3"}, refuse=frozenset({("qa", "m1-v2")}))
    v2 = write_batch(folder / "v2", v2_rows, name="outputs.jsonl")
    with BlindReview(url, token) as br:
        assert br.me().role == "admin"
        hook = br.add_webhook(receiver.url, ["load.finished", "batch.complete", "compare.regression"], label="ci")
        assert hook.secret.startswith("whsec_") and [h.id for h in br.webhooks()] == [hook.webhook.id]
        # Load, and loading again is the same batch.
        loaded = br.load_batch("v1", [v1], rubric, on_leak="flag")
        assert (loaded.already_loaded, loaded.outputs, loaded.models) == (False, 120, ["m1", "m2"])
        assert br.load_batch("v1 again", [v1], rubric, on_leak="flag").batch_id == loaded.batch_id
        # People, and the plan: k = 3 of the six.
        with pytest.raises(AssignmentError):
            br.assign("v1")  # nobody to assign yet
        links = {name: br.add_person(name).link for name in compare_chain.REVIEWERS}
        assert all("token=" in link for link in links.values())
        lead_link = br.add_person("lena", "lead")
        assert lead_link.role == "lead"
        planned = br.assign("v1")
        assert planned.new_assignments == 120 * 3 and len(planned.per_reviewer) == 6
        assert br.open_batch("v1").batch.status == "open"
        status = br.batch("v1")
        assert (status.progress.remaining, status.complete) == (360, False)
        # Ratings made elsewhere, imported; the batch is then complete.
        base = {(s, m): 3.5 for s in compare_chain.SCENARIOS for m in ("m1", "m2")}
        imported = br.import_ratings("v1", compare_chain.ratings(folder / "v1.csv", base, seed=1))
        assert imported.ratings == 360
        assert br.batch("v1").complete
        # The report, as JSON and as the HTML file a lead forwards.
        report = br.report("v1", rounds=ROUNDS)
        assert (report["batch"], sorted(report["models"])) == ("v1", ["m1", "m2"])
        html = br.report_file("v1", folder / "out" / "v1.html", rounds=ROUNDS)
        assert html.read_text().lstrip().lower().startswith("<!doctype html")
        # The export, streamed to a file and as a frame.
        exported = br.export_ratings("v1", folder / "out" / "v1-ratings.csv")
        with exported.open(encoding="utf-8") as f:
            rows = list(csv.DictReader(f))
        assert len(rows) == 360 and {r["model"] for r in rows} == {"m1", "m2"}
        assert len(br.ratings_frame("v1")) == 360
        # The next version, and the regression the comparison must find.
        br.load_batch("v2", [v2], rubric, on_leak="flag", open_now=True)
        cand = {(s, m): 3.5 for s in compare_chain.SCENARIOS for m in ("m1-v2", "m2", "m3")}
        cand[("qa", "m1-v2")] = 2.5
        br.import_ratings("v2", compare_chain.ratings(folder / "v2.csv", cand, seed=2))
        compared = br.compare("v1", "v2", match=["m1=m1-v2"], rounds=ROUNDS)
        verdicts = {(s["scenario"], m["model"]): m["verdict"] for s in compared["scenarios"] for m in s["models"]}
        assert verdicts[("qa", "m1-v2")] == "regression"
        assert verdicts[("summaries", "m2")] != "regression"
        # The webhooks the study set off, delivered by the server's loop and signed with the hook's secret.
        events = _events(receiver, hook.secret, {"load.finished", "batch.complete", "compare.regression"})
        assert events["load.finished"]["data"]["batch"] == "v1"
        assert events["batch.complete"]["data"]["batch"] == "v1" and events["batch.complete"]["data"]["k"] == 3
        regressed = {(r["scenario"], r["model"]) for r in events["compare.regression"]["data"]["regressions"]}
        assert ("qa", "m1-v2") in regressed
        # The log says so too, once the loop has written down the answers it got (it may lag the receiver).
        received = {event["id"] for event in events.values()}
        deadline = time.monotonic() + 30
        while True:
            logged = {d.event_id: d.status for d in br.webhook_deliveries() if d.event_id in received}
            if set(logged) == received and set(logged.values()) == {"delivered"} or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        assert logged == dict.fromkeys(received, "delivered")
        # Revoking a person ends their token's use at once (never the last admin: another first).
        br.add_person("ops", "admin")
        br.revoke("root")
        with pytest.raises(NotSignedInError):
            br.me()
    # The API answers behind the pages' guard: its security headers, and no browser cookie for a pipeline.
    answer = httpx.get(f"{url}/api/v1/openapi.json")
    assert answer.status_code == 200 and answer.json()["info"]["title"] == "Blind Review API"
    assert "content-security-policy" in answer.headers and "set-cookie" not in answer.headers
