"""LLM judge runs through the API, against a real server and a real judge on loopback: an admin starts a run
that goes on in the server, a lead watches it and finds the judge in the report; the judge is asked exactly
what `blind-review judge` asks (never a model name), reads its key only from a variable the server allows, and
every mistake comes back as a problem the CLI would have printed."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy.engine import Engine

from reviewer_app.batches.loading import load_batch
from reviewer_app.client import BlindReview
from reviewer_app.errors import AuthError, ConflictError, GenerationError, JudgeTemplateError, NotFoundError
from reviewer_app.ratings.files import import_ratings
from tests.helpers import RATING_RUBRIC, write_batch, write_rubric
from tests.support.api_server import Tokens, role_tokens, running_api
from tests.support.fake_judge import fake_judge
from tests.support.fake_openai import Behaviour, running_server

MODELS = ("zephyr-orbit", "quokka-large")  # names that cannot turn up in a prompt by chance


def _records(n: int) -> list[dict[str, Any]]:
    return [
        {"sample_id": f"s{i}", "scenario": "qa", "prompt": f"Question {i}?", "model": m,
         "output": f"Answer {i}: quality {(k * 2 + i) % 5 + 1}, written at length."}
        for i in range(n)
        for k, m in enumerate(MODELS)
    ]  # fmt: skip


def _batch(engine: Engine, tmp_path: Path, n: int = 4) -> None:
    batch = write_batch(tmp_path, _records(n), name="b.jsonl")
    load_batch(engine, [batch], write_rubric(tmp_path, RATING_RUBRIC.format(overlap=2)), name="b", open_now=True)
    rows = ["reviewer,sample_id,model,dimension,score"]
    for who, shift in (("ann", 0), ("bob", 1)):
        for i in range(n):
            for k, m in enumerate(MODELS):
                score = (k * 2 + i + shift) % 5 + 1
                rows += [f"{who},s{i},{m},correctness,{score}", f"{who},s{i},{m},follows_format,1"]
    (tmp_path / "panel.csv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    import_ratings(engine, "b", tmp_path / "panel.csv")


@pytest.fixture
def api(engine: Engine) -> Iterator[tuple[str, Tokens]]:
    tokens = role_tokens(engine)
    with running_api(engine) as url:
        yield url, tokens


def test_an_admin_runs_a_judge_and_a_lead_finds_it_in_the_report(
    engine: Engine, tmp_path: Path, api: tuple[str, Tokens]
) -> None:
    url, tokens = api
    _batch(engine, tmp_path)
    with BlindReview(url, tokens.admin) as admin:
        hook = admin.add_webhook("http://127.0.0.1:9/hook", ["judge.finished"]).webhook
    with running_server(Behaviour(reply=fake_judge())) as judge:
        spec = f"judge={judge.base_url}"
        answer = httpx.post(f"{url}/batches/b/judge-runs", json={"model": spec, "retries": 0},
                            headers={"Authorization": f"Bearer {tokens.admin}"})  # fmt: skip
        assert answer.status_code == 202, answer.text
        started = answer.json()
        assert answer.headers["location"] == f"/api/v1/judge-runs/{started['id']}"
        assert started["batch"] == "b" and started["model"] == "judge" and started["started_by"] == "ada"
        with BlindReview(url, tokens.lead) as lead:
            run = lead.wait_for_judge(started["id"], timeout=60, every=0.05)
            assert (run.state, run.items, run.planned, run.written, run.failed, run.error) == (
                "finished", 8, 8, 8, 0, None
            )  # fmt: skip
            assert run.judge is not None and run.judge.startswith("judge:judge@")
            assert any("written 8, failed 0" in line for line in run.summary)
            assert [r.id for r in lead.judge_runs("b")] == [run.id]
            (found,) = lead.judges("b")
            assert (found.judge, found.model, found.judged, found.failed) == (run.judge, "judge", 8, 0)
            report = lead.report("b", rounds=100, judge=run.judge)
            assert report["judge"]["run"]["judge"] == run.judge and report["judge"]["run"]["judgements"] == 8
            with pytest.raises(AuthError, match="admin"):
                lead.start_judge("b", spec)
        asked = judge.completions()
        assert len(asked) == 8
        for request in asked:  # blind: the judge never reads a model's name, the batch file's or the batch's
            text = json.dumps(request.body)
            assert not any(name in text for name in MODELS) and "b.jsonl" not in text
        with BlindReview(url, tokens.admin) as admin:  # the same run again asks nothing: all is done
            again = admin.wait_for_judge(admin.start_judge("b", spec).id, timeout=60, every=0.05)
            told = [d.kind for d in admin.webhook_deliveries(webhook_id=hook.id)]
        assert (again.already_done, again.written, len(judge.completions())) == (8, 0, 8)
        assert told == ["judge.finished", "judge.finished"]  # each run, when it ended


def test_the_key_is_read_only_from_a_variable_the_server_allows(
    engine: Engine, tmp_path: Path, api: tuple[str, Tokens], monkeypatch: pytest.MonkeyPatch
) -> None:
    url, tokens = api
    _batch(engine, tmp_path, n=1)
    monkeypatch.setenv("JUDGE_TEST_KEY", "sk-test-123")
    monkeypatch.setenv("BLIND_REVIEW_SECRET_LIKE", "server-secret")
    with running_server(Behaviour(reply=fake_judge())) as judge, BlindReview(url, tokens.admin) as admin:
        for variable in ("JUDGE_TEST_KEY", "BLIND_REVIEW_SECRET_LIKE"):
            with pytest.raises(GenerationError, match="BLIND_REVIEW_JUDGE_KEY_VARS") as refused:
                admin.start_judge("b", f"judge={judge.base_url}@{variable}")
            assert variable in str(refused.value)
        assert judge.completions() == []  # refused before any request
        monkeypatch.setenv("BLIND_REVIEW_JUDGE_KEY_VARS", "OTHER_KEY, JUDGE_TEST_KEY")
        run = admin.wait_for_judge(admin.start_judge("b", f"judge={judge.base_url}@JUDGE_TEST_KEY").id, every=0.05)
        assert (run.state, run.written) == ("finished", 2)
        assert {r.headers.get("authorization") for r in judge.completions()} == {"Bearer sk-test-123"}
        monkeypatch.delenv("JUDGE_TEST_KEY")
        with pytest.raises(GenerationError, match="JUDGE_TEST_KEY is not set"):
            admin.start_judge("b", f"judge={judge.base_url}@JUDGE_TEST_KEY")


def test_mistakes_come_back_as_the_clis_messages(engine: Engine, tmp_path: Path, api: tuple[str, Tokens]) -> None:
    url, tokens = api
    _batch(engine, tmp_path, n=2)
    slow = Behaviour(reply=fake_judge(), first_token_delay_ms=150)
    with running_server(slow) as judge, BlindReview(url, tokens.admin) as admin:
        spec = f"judge={judge.base_url}"
        with pytest.raises(GenerationError, match="expected NAME=BASE_URL"):
            admin.start_judge("b", "judge=not-a-url")
        with pytest.raises(NotFoundError):
            admin.start_judge("no-such-batch", spec)
        with pytest.raises(GenerationError, match="samples 'some'"):
            admin.start_judge("b", spec, samples="some")
        with pytest.raises(JudgeTemplateError) as bad:
            admin.start_judge("b", spec, prompt="[system]\nBe fair.\n")
        assert bad.value.problems[0].file == "prompt" and "[user]" in str(bad.value)
        with pytest.raises(NotFoundError, match="no judge run"):
            admin.judge_run("0" * 16)
        first = admin.start_judge("b", spec, concurrency=1)
        with pytest.raises(ConflictError, match="already running"):
            admin.start_judge("b", spec)
        assert admin.wait_for_judge(first.id, timeout=60, every=0.05).state == "finished"
        assert admin.wait_for_judge(admin.start_judge("b", spec).id, every=0.05).already_done == 4
