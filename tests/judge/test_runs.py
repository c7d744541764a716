"""``blind-review judge`` against a real judge on loopback (:mod:`tests.support.fake_judge`): what it asks, what
it stores, how it resumes, fails, asks again and judges pairs in both orders, and what it never tells the judge.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy.engine import Engine
from sqlmodel import col, select

from reviewer_app.batches.loading import load_batch
from reviewer_app.cli.main import main
from reviewer_app.errors import GenerationError, NotFoundError
from reviewer_app.generation.specs import parse_model_spec
from reviewer_app.judge.runs import judge_batch
from storage.engine import read_session
from storage.models import Item, Judge, Output
from storage.repositories.judge import runs as repo
from tests.generation.test_runner import FAST
from tests.helpers import PAIRWISE_RUBRIC, RATING_RUBRIC, write_batch, write_rubric
from tests.support.fake_judge import JudgeBehaviour, fake_judge
from tests.support.fake_openai import Behaviour, FakeOpenAIServer, Rule, running_server


@pytest.fixture
def judge_server() -> Iterator[FakeOpenAIServer]:
    with running_server(Behaviour(reply=fake_judge())) as srv:
        yield srv


def _records(n: int, models: dict[str, int], scenario: str = "qa") -> list[dict[str, Any]]:
    """``n`` samples; each model's answer states its quality (the fake judge reads it)."""
    return [
        {
            "sample_id": f"s{i}",
            "scenario": scenario,
            "prompt": f"Question {i}?",
            "model": model,
            "output": f"Answer {i}: quality {(q + i) % 5 + 1}, written at length.",
        }
        for i in range(n)
        for model, q in models.items()
    ]


def _load(engine: Engine, tmp_path: Path, records: list[dict[str, Any]], rubric: str, name: str = "b") -> None:
    batch = write_batch(tmp_path, records, name=f"{name}.jsonl")
    load_batch(engine, [batch], write_rubric(tmp_path, rubric.format(overlap=2)), name=name, open_now=True)


def _stored(engine: Engine, status: str | None = repo.OK) -> list[Any]:
    with read_session(engine) as session:
        (judge,) = session.exec(select(Judge)).all()
        assert judge.id is not None
        return list(repo.judgements(session, judge.id, 1, status=status))


def _spec(server: FakeOpenAIServer, name: str = "judge") -> str:
    return f"{name}={server.base_url}"


def test_the_judge_rates_every_item_with_the_schema_and_a_rerun_asks_nothing_again(
    engine: Engine, tmp_path: Path, judge_server: FakeOpenAIServer, capsys: pytest.CaptureFixture[str]
) -> None:
    _load(engine, tmp_path, _records(4, {"m1": 0, "m2": 2}), RATING_RUBRIC)
    assert main(["judge", "b", "--model", _spec(judge_server), "--no-progress", "--retries", "0"]) == 0
    out = capsys.readouterr().out
    assert "8 items, 8 judgements" in out and "written 8, failed 0" in out
    requests = judge_server.completions()
    assert len(requests) == 8
    body = requests[0].body
    assert body is not None
    assert body["response_format"]["type"] == "json_schema"
    assert body["response_format"]["json_schema"]["strict"] is True
    assert body["temperature"] == 0.0
    rows = _stored(engine)
    assert len(rows) == 8 and all(r.latency_ms is not None and r.output_tokens for r in rows)
    # Every stored answer is the stated quality: the judge read the answer it was asked about.
    with read_session(engine) as session:
        shown = select(Item.id, Output.text).join(Output, col(Output.id) == col(Item.output_a_id))
        texts = dict(session.exec(shown).all())
    for row in rows:
        stated = texts[row.item_id].split("quality ")[1][0]
        assert json.loads(row.answers_json) == {"correctness": stated, "follows_format": "1"}
        assert json.loads(row.raw_response)["answers"]["correctness"] == int(stated)
    assert main(["judge", "b", "--model", _spec(judge_server), "--no-progress"]) == 0
    assert len(judge_server.completions()) == 8  # nothing asked again
    assert "already done 8, written 0" in capsys.readouterr().out


def test_an_invalid_reply_is_asked_once_more_then_recorded_as_failed_and_retried_by_a_rerun(
    engine: Engine, tmp_path: Path
) -> None:
    _load(engine, tmp_path, _records(3, {"m1": 0}), RATING_RUBRIC)
    behaviour = JudgeBehaviour(invalid_when="Question 0?", always_invalid_when="Question 1?")
    with running_server(Behaviour(reply=fake_judge(behaviour))) as server:
        report = judge_batch(engine, "b", parse_model_spec(_spec(server)), policy=FAST, progress=False)
        assert (report.written, report.failed, report.reprompted) == (2, 1, 2)
        asked = [r.body for r in server.completions() if r.body is not None]
        again = [b for b in asked if any(m["role"] == "assistant" for m in b["messages"])]
        assert len(asked) == 5 and len(again) == 2
        assert again[0]["messages"][-1]["role"] == "user"
        assert "Your reply could not be used" in again[0]["messages"][-1]["content"]
        failed = _stored(engine, status=repo.FAILED)
        assert len(failed) == 1
        assert "not a valid answer" in failed[0].error
        assert failed[0].raw_response == "I think the first answer is rather good."
        assert "failed x1" in report.table() and "Run the same command again" in report.table()
        server.set_behaviour(Behaviour(reply=fake_judge()))
        report = judge_batch(engine, "b", parse_model_spec(_spec(server)), policy=FAST, progress=False)
        assert (report.already_done, report.written, report.failed) == (2, 1, 0)
        assert len(_stored(engine)) == 3 and not _stored(engine, status=repo.FAILED)


def test_a_request_that_fails_for_good_is_recorded_with_its_reason(engine: Engine, tmp_path: Path) -> None:
    _load(engine, tmp_path, _records(2, {"m1": 0}), RATING_RUBRIC)
    fault = Rule(status=500, match="Question 1?", message="the GPU is on fire")
    with running_server(Behaviour(reply=fake_judge(), rules=[fault])) as server:
        report = judge_batch(engine, "b", parse_model_spec(_spec(server)), policy=FAST, progress=False)
    assert (report.written, report.failed) == (1, 1)
    (failed,) = _stored(engine, status=repo.FAILED)
    assert "HTTP 500" in failed.error and "the GPU is on fire" in failed.error and failed.attempts == 3


def test_pairs_are_judged_in_both_orders_and_a_judge_that_picks_the_first_is_inconsistent(
    engine: Engine, tmp_path: Path
) -> None:
    _load(engine, tmp_path, _records(3, {"m1": 0, "m2": 2}), PAIRWISE_RUBRIC)
    with running_server(Behaviour(reply=fake_judge())) as server:
        fair = judge_batch(engine, "b", parse_model_spec(_spec(server, "fair")), policy=FAST, progress=False)
    assert fair.items == 3 and fair.written == 6
    assert (fair.consistent, fair.both_orders) == (3, 3)
    assert "3 of 3 verdicts (100%)" in fair.table()
    with running_server(Behaviour(reply=fake_judge(JudgeBehaviour(prefer_first=True)))) as server:
        first = judge_batch(engine, "b", parse_model_spec(_spec(server, "first")), policy=FAST, progress=False)
        bodies = [r.body for r in server.completions() if r.body is not None]
    assert (first.consistent, first.both_orders) == (0, 3)
    # The two orders show the same two texts, swapped.
    shown = [json.dumps(b["messages"]) for b in bodies]
    assert len(shown) == 6 and len(set(shown)) == 6


def test_the_judge_is_told_no_model_file_batch_or_scenario_name(engine: Engine, tmp_path: Path) -> None:
    """An attacker's batch: models, file, batch and scenario all named for models; none of it reaches the judge."""
    records = _records(2, {"gpt-4o-2024-08-06": 0, "claude-3-5-sonnet": 1}, scenario="gpt-4o-vs-claude")
    batch = write_batch(tmp_path, records, name="gpt-4o_vs_claude-3-5-sonnet.jsonl")
    rubric = write_rubric(tmp_path, PAIRWISE_RUBRIC.format(overlap=2))
    load_batch(engine, [batch], rubric, name="gpt-4o-vs-claude-3-5-sonnet", open_now=True)
    with running_server(Behaviour(reply=fake_judge())) as server:
        report = judge_batch(
            engine, "gpt-4o-vs-claude-3-5-sonnet", parse_model_spec(_spec(server)), policy=FAST, progress=False
        )
        sent = "\n".join(json.dumps(r.body) + json.dumps(r.headers) for r in server.completions())
    assert report.written == 4
    for secret in ("gpt-4o", "gpt", "claude", "sonnet", "3-5", "2024-08-06", ".jsonl", "vs"):
        assert secret not in sent.lower(), secret


def test_samples_rated_and_n_choose_the_items(engine: Engine, tmp_path: Path, judge_server: FakeOpenAIServer) -> None:
    _load(engine, tmp_path, _records(6, {"m1": 0, "m2": 1}), RATING_RUBRIC)
    spec = parse_model_spec(_spec(judge_server))
    three = judge_batch(engine, "b", spec, samples=3, policy=FAST, progress=False)
    assert three.items == 6  # 3 samples x 2 models
    again = judge_batch(engine, "b", spec, samples=3, policy=FAST, progress=False)
    assert again.already_done == 6 and again.written == 0  # the same 3 samples
    rated = judge_batch(engine, "b", spec, samples="rated", policy=FAST, progress=False)
    assert rated.items == 0  # nobody has rated anything yet


def test_repeats_send_seed_plus_repeat_and_a_new_template_is_a_new_judge(
    engine: Engine, tmp_path: Path, judge_server: FakeOpenAIServer, capsys: pytest.CaptureFixture[str]
) -> None:
    _load(engine, tmp_path, _records(1, {"m1": 0}), RATING_RUBRIC)
    url = _spec(judge_server)
    assert main(["judge", "b", "--model", url, "--repeats", "2", "--seed", "7", "--no-progress"]) == 0
    seeds = sorted(r.body["seed"] for r in judge_server.completions() if r.body is not None)
    assert seeds == [7, 8]
    template = tmp_path / "t.txt"
    template.write_text("Judge this.\n{{prompt}}\n{{answers}}\n{{questions}}\n", encoding="utf-8")
    assert main(["judge", "b", "--model", url, "--prompt", str(template), "--no-progress"]) == 0
    with read_session(engine) as session:
        judges = repo.judges_of_batch(session, 1)
    assert [(j.name, ok, failed) for j, ok, failed in judges] == [("judge", 2, 0), ("judge", 1, 0)]
    assert judges[0][0].template_digest != judges[1][0].template_digest
    assert judge_server.completions()[-1].body["messages"][0]["content"].startswith("Judge this.")  # type: ignore[index]


def test_bad_arguments_are_refused_before_any_request(
    engine: Engine, tmp_path: Path, judge_server: FakeOpenAIServer, capsys: pytest.CaptureFixture[str]
) -> None:
    _load(engine, tmp_path, _records(1, {"m1": 0}), RATING_RUBRIC)
    url = _spec(judge_server)
    assert main(["judge", "nope", "--model", url, "--no-progress"]) == 1
    assert "nope" in capsys.readouterr().err
    assert main(["judge", "b", "--model", url, "--samples", "some"]) == 1
    assert "--samples 'some'" in capsys.readouterr().err
    assert main(["judge", "b", "--model", f"{url}@NO_SUCH_KEY_VAR", "--no-progress"]) == 1
    assert "NO_SUCH_KEY_VAR" in capsys.readouterr().err
    bad = tmp_path / "bad.txt"
    bad.write_text("{{prompt}} {{answerz}}\n", encoding="utf-8")
    assert main(["judge", "b", "--model", url, "--prompt", str(bad)]) == 1
    assert "{{answerz}}" in capsys.readouterr().err
    with pytest.raises(GenerationError, match="--repeats"):
        judge_batch(engine, "b", parse_model_spec(url), repeats=0, progress=False)
    with pytest.raises(NotFoundError):
        judge_batch(engine, "missing", parse_model_spec(url), progress=False)
    assert judge_server.completions() == []


def test_a_reviewer_sees_no_judgement_and_the_panel_counts_none(engine: Engine, tmp_path: Path) -> None:
    """The judge's answers are nobody's queue: a reviewer's item shows no answer, and the pool and progress
    count the panel's answers only (the judge took no slot of the k per item)."""
    from reviewer_app.people.people import add_reviewer, get_person
    from reviewer_app.review.progress import batch_progress
    from reviewer_app.review.reviews import next_item

    _load(engine, tmp_path, _records(2, {"m1": 0, "m2": 1}), RATING_RUBRIC)
    add_reviewer(engine, "ann")
    before = batch_progress(engine, 1)
    with running_server(Behaviour(reply=fake_judge())) as server:
        assert judge_batch(engine, "b", parse_model_spec(_spec(server)), policy=FAST, progress=False).written == 4
    after = batch_progress(engine, 1)
    assert after == before
    view = next_item(engine, 1, get_person(engine, "ann").id)
    assert view is not None and view.answers == {} and not view.submitted
    assert "judge:" not in repr(view).lower()  # (the view has a cant_judge field of its own)
