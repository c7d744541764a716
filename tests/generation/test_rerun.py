"""``rerun`` against the real local fake server: a new model is asked the baseline's samples with the
baseline's parameters (checked in the requests the server recorded), resumably, and its file loads as a
follow-up of the baseline."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy.engine import Engine

from reviewer_app.batches.catalog import find_batch
from reviewer_app.batches.loading import load_batch
from reviewer_app.cli.main import main
from reviewer_app.errors import GenerationError
from reviewer_app.generation.recorded import runs_from_json
from reviewer_app.generation.runner import generate_batch
from reviewer_app.generation.specs import SamplingParams
from reviewer_app.versions.rerun import rerun_batch
from tests.generation.test_runner import FAST, PNG, models, read_batch, write_samples
from tests.helpers import RATING_RUBRIC, make_records, write_batch, write_rubric
from tests.support.fake_openai import FakeOpenAIServer


def _samples(tmp_path: Path) -> Path:
    (tmp_path / "eval").mkdir(parents=True, exist_ok=True)
    (tmp_path / "eval" / "chart.png").write_bytes(PNG)
    return write_samples(
        tmp_path / "eval" / "samples.jsonl",
        [
            {"sample_id": "s0", "scenario": "qa", "prompt": "question 0", "reference": "ref 0"},
            {"sample_id": "s1", "scenario": "code", "prompt": [{"role": "user", "content": "question 1"}]},
            {"sample_id": "s2", "scenario": "qa", "prompt": "question 2", "images": ["chart.png"]},
            {"sample_id": "s3", "scenario": "code", "prompt": "question 3", "criteria": "short"},
        ],
    )


def _sent(server: FakeOpenAIServer, model: str) -> dict[tuple[str, int | None], dict[str, Any]]:
    """The requests for ``model``, by (messages, seed), without the model's name."""
    out = {}
    for r in server.completions():
        if r.body and r.body.get("model") == model:
            body = {k: v for k, v in r.body.items() if k != "model"}
            out[(json.dumps(body["messages"], sort_keys=True), body.get("seed"))] = body
    return out


def test_rerun_asks_the_baseline_samples_with_its_parameters(
    engine: Engine, server: FakeOpenAIServer, tmp_path: Path
) -> None:
    params = SamplingParams(temperature=0.7, top_p=0.9, max_tokens=64, seed=3)
    base_file = tmp_path / "eval" / "v1.jsonl"
    generate_batch(_samples(tmp_path), base_file, models(server, "a", "b"), params=params, repeats=2, policy=FAST,
                   progress=False)  # fmt: skip
    rubric = write_rubric(tmp_path, RATING_RUBRIC.format(overlap=1))
    summary = load_batch(engine, [base_file], rubric, name="v1", open_now=True)
    assert summary.generated
    runs = runs_from_json(find_batch(engine, "v1").generation_json)
    assert runs is not None and set(runs) == {"a", "b"}
    run = runs["a"]
    assert (run.api_model, run.temperature, run.top_p, run.max_tokens, run.seed, run.repeats) == (
        "a",
        0.7,
        0.9,
        64,
        3,
        2,
    )
    assert run.samples_sha256 is not None and len(run.samples_sha256) == 64
    assert "key" not in (find_batch(engine, "v1").generation_json or "").lower()

    out = tmp_path / "next" / "v2.jsonl"
    plan, report = rerun_batch(engine, "v1", out, models(server, "c"), policy=FAST, progress=False)
    assert report.failed == 0 and plan.samples == 4
    baseline_sent, rerun_sent = _sent(server, "a"), _sent(server, "c")
    assert len(rerun_sent) == 4 * 2 and rerun_sent.keys() == baseline_sent.keys()  # same messages, same seeds
    assert rerun_sent == baseline_sent  # every parameter of every request (images as the same data URL)
    assert {body["seed"] for body in rerun_sent.values()} == {3, 4}
    rows = read_batch(out)
    assert {(r["sample_id"], r["repeat"]) for r in rows} == {(f"s{i}", k) for i in range(4) for k in range(2)}

    before = len(server.completions())
    rerun_batch(engine, "v1", out, models(server, "c"), policy=FAST, progress=False)  # resumes: nothing to do
    assert len(server.completions()) == before

    follow = load_batch(engine, [out], None, name="v2", follow_up="v1", open_now=True)
    assert follow.baseline == "v1" and follow.outputs == 8 and follow.anchor_items > 0


def test_rerun_needs_a_baseline_made_by_generate(engine: Engine, server: FakeOpenAIServer, tmp_path: Path) -> None:
    rubric = write_rubric(tmp_path, RATING_RUBRIC.format(overlap=1))
    load_batch(engine, [write_batch(tmp_path, make_records(2, ["m1", "m2"]))], rubric, name="by-hand", open_now=True)
    assert find_batch(engine, "by-hand").generation_json is None
    with pytest.raises(GenerationError, match="'by-hand' has no recorded generation parameters"):
        rerun_batch(engine, "by-hand", tmp_path / "x.jsonl", models(server, "c"), policy=FAST, progress=False)
    assert server.completions() == []


def test_runs_with_other_parameters_per_model_need_params_of(
    engine: Engine, server: FakeOpenAIServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    samples = _samples(tmp_path)
    base_file = tmp_path / "eval" / "v1.jsonl"
    generate_batch(samples, base_file, models(server, "a"), params=SamplingParams(temperature=0.2), policy=FAST,
                   progress=False)  # fmt: skip
    generate_batch(samples, base_file, models(server, "b"), params=SamplingParams(temperature=0.9), policy=FAST,
                   progress=False)  # fmt: skip
    load_batch(engine, [base_file], write_rubric(tmp_path, RATING_RUBRIC.format(overlap=1)), name="v1", open_now=True)
    with pytest.raises(GenerationError, match="--params-of MODEL"):
        rerun_batch(engine, "v1", tmp_path / "v2.jsonl", models(server, "c"), policy=FAST, progress=False)
    url = f"c=http://127.0.0.1:{server.port}/v1"
    assert main(["rerun", "v1", "--model", url, "--out", str(tmp_path / "v2.jsonl"), "--no-progress"]) == 1
    assert capsys.readouterr().err.startswith("error: batch 'v1' was generated with different parameters per model")
    argv = ["rerun", "v1", "--model", url, "--out", str(tmp_path / "v4.jsonl"), "--params-of", "a", "--no-progress"]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    assert "4 samples of batch 'v1' x 1 repeat(s), temperature 0.2" in printed
    assert f"next: blind-review load-batch {tmp_path / 'v4.jsonl'} --follow-up v1 --name NAME" in printed
    rerun_batch(engine, "v1", tmp_path / "v2.jsonl", models(server, "c"), params_of="b", policy=FAST, progress=False)
    sent = [r.body for r in server.completions() if r.body and r.body.get("model") == "c"]
    assert [b["temperature"] for b in sent] == [0.2] * 4 + [0.9] * 4  # v4 with a's parameters, v2 with b's
    rerun_batch(engine, "v1", tmp_path / "v3.jsonl", models(server, "a"), policy=FAST, progress=False)  # by name
    assert len(_sent(server, "a")) == 4
