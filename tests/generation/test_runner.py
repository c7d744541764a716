"""``generate`` end to end against a real local server: batch format, failures, resume, secrets."""

from __future__ import annotations

import io
import json
import logging
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from reviewer_app.errors import GenerationError
from reviewer_app.generation.runner import generate_batch
from reviewer_app.generation.specs import RetryPolicy, SamplingParams, parse_model_spec
from tests.support.fake_openai import Behaviour, FakeOpenAIServer, Rule

FAST = RetryPolicy(retries=2, backoff_s=0.01, backoff_max_s=0.05, timeout_s=5)


def _png() -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (2, 2), "white").save(buffer, "PNG")
    return buffer.getvalue()


PNG = _png()


def write_samples(path: Path, samples: list[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(s) + "\n" for s in samples), encoding="utf-8")
    return path


def simple_samples(tmp_path: Path, n: int = 5) -> Path:
    return write_samples(
        tmp_path / "samples.jsonl",
        [{"sample_id": f"s{i}", "scenario": "qa" if i % 2 else "code", "prompt": f"question {i}"} for i in range(n)],
    )


def read_batch(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def models(server: FakeOpenAIServer, *names: str) -> list[Any]:
    return [parse_model_spec(f"{n}=http://127.0.0.1:{server.port}/v1") for n in names]


def test_writes_a_batch_with_timings_and_parameters(server: FakeOpenAIServer, tmp_path: Path) -> None:
    server.set_behaviour(Behaviour(first_token_delay_ms=20, tokens=4))
    samples = simple_samples(tmp_path)
    out = tmp_path / "batch.jsonl"
    params = SamplingParams(temperature=0.7, top_p=0.9, max_tokens=64, seed=3)
    report = generate_batch(
        samples, out, models(server, "a", "b"), params=params, repeats=2, policy=FAST, progress=False
    )
    rows = read_batch(out)
    assert len(rows) == 5 * 2 * 2 and report.failed == 0
    assert len({(r["sample_id"], r["model"], r["repeat"]) for r in rows}) == 20
    row = next(r for r in rows if r["sample_id"] == "s1" and r["model"] == "b" and r["repeat"] == 1)
    assert row["scenario"] == "qa" and row["prompt"] == "question 1"
    assert row["output"].startswith("b:question-1")
    meta = row["metadata"]
    assert meta["ttft_ms"] >= 20 and meta["latency_ms"] >= meta["ttft_ms"]
    assert meta["output_tokens"] == 4 and meta["finish_reason"] == "stop"
    assert (meta["temperature"], meta["top_p"], meta["max_tokens"], meta["seed"]) == (0.7, 0.9, 64, 4)
    sent_seeds = sorted(r.body["seed"] for r in server.completions() if r.body)
    assert set(sent_seeds) == {3, 4}  # repeat r is sent seed + r, so repeats are not copies
    table = report.table().splitlines()
    assert table[0].split()[:3] == ["model", "new", "had"]
    assert table[1].split()[:4] == ["a", "10", "0", "0"] and table[2].split()[:4] == ["b", "10", "0", "0"]


def test_failed_outputs_go_to_the_sidecar_and_are_retried_on_rerun(server: FakeOpenAIServer, tmp_path: Path) -> None:
    server.set_behaviour(
        Behaviour(rules=[Rule(status=500, match="question 3"), Rule(drop_after_tokens=1, match="question 2")])
    )
    samples = simple_samples(tmp_path)
    out = tmp_path / "batch.jsonl"
    report = generate_batch(samples, out, models(server, "a"), params=SamplingParams(), policy=FAST, progress=False)
    assert report.failed == 2
    assert sorted(r["sample_id"] for r in read_batch(out)) == ["s0", "s1", "s4"]  # others unaffected
    failures = read_batch(report.failures_path)
    by_id = {f["sample_id"]: f for f in failures}
    assert set(by_id) == {"s2", "s3"}
    assert "HTTP 500" in by_id["s3"]["reason"] and by_id["s3"]["attempts"] == 3
    assert by_id["s2"]["model"] == "a" and by_id["s2"]["repeat"] == 0
    assert "failed" in report.table()

    server.set_behaviour(Behaviour())
    before = len(server.completions())
    again = generate_batch(samples, out, models(server, "a"), params=SamplingParams(), policy=FAST, progress=False)
    assert again.failed == 0 and not report.failures_path.exists()
    assert len(server.completions()) - before == 2  # only the two failed ones were asked again
    assert sorted(r["sample_id"] for r in read_batch(out)) == ["s0", "s1", "s2", "s3", "s4"]


def test_resume_cuts_a_torn_line_and_adds_no_duplicates(server: FakeOpenAIServer, tmp_path: Path) -> None:
    samples = simple_samples(tmp_path, n=6)
    out = tmp_path / "batch.jsonl"
    generate_batch(samples, out, models(server, "a"), params=SamplingParams(), policy=FAST, progress=False)
    lines = out.read_text(encoding="utf-8").splitlines(keepends=True)
    out.write_text("".join(lines[:3]) + lines[3][: len(lines[3]) // 2], encoding="utf-8")  # killed mid-write
    before = len(server.completions())
    report = generate_batch(samples, out, models(server, "a"), params=SamplingParams(), policy=FAST, progress=False)
    rows = read_batch(out)
    assert len(rows) == 6 and len({r["sample_id"] for r in rows}) == 6
    assert len(server.completions()) - before == 3
    assert report.stats[0].already_done == 3 and report.stats[0].written == 3


def test_resume_refuses_changed_sampling_parameters(server: FakeOpenAIServer, tmp_path: Path) -> None:
    samples = simple_samples(tmp_path, n=2)
    out = tmp_path / "batch.jsonl"
    generate_batch(
        samples, out, models(server, "a"), params=SamplingParams(temperature=0.2), policy=FAST, progress=False
    )
    with pytest.raises(GenerationError, match="temperature=0.2"):
        generate_batch(
            samples,
            out,
            models(server, "a"),
            params=SamplingParams(temperature=0.9),
            policy=FAST,
            progress=False,
        )


def test_multi_turn_and_image_samples_are_sent_as_chat_content(server: FakeOpenAIServer, tmp_path: Path) -> None:
    (tmp_path / "in" / "img").mkdir(parents=True)
    (tmp_path / "in" / "img" / "dot.png").write_bytes(PNG)
    conversation = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "What is in the picture?"},
        {"role": "assistant", "content": "A dot."},
        {"role": "user", "content": "What colour?"},
    ]
    samples = write_samples(
        tmp_path / "in" / "samples.jsonl",
        [
            {
                "sample_id": "v1",
                "scenario": "vision",
                "prompt": conversation,
                "images": ["img/dot.png"],
                "reference": "white",
                "criteria": "names the colour",
            }
        ],
    )
    out = tmp_path / "out" / "batch.jsonl"
    generate_batch(samples, out, models(server, "a"), params=SamplingParams(), policy=FAST, progress=False)
    sent = server.completions()[0].body
    assert sent is not None
    assert [m["role"] for m in sent["messages"]] == ["system", "user", "assistant", "user"]
    parts = sent["messages"][1]["content"]
    assert parts[0] == {"type": "text", "text": "What is in the picture?"}
    assert parts[1]["type"] == "image_url" and parts[1]["image_url"]["url"].startswith("data:image/png;base64,iVBOR")
    assert sent["messages"][3]["content"] == "What colour?"
    (row,) = read_batch(out)
    assert row["prompt"] == conversation and row["reference"] == "white" and row["criteria"] == "names the colour"
    assert row["images"][0].startswith("images/") and row["images"][0].endswith(".png")
    assert (out.parent / row["images"][0]).read_bytes() == PNG  # copied next to the batch for load-batch


def test_api_key_never_reaches_files_or_logs(
    server: FakeOpenAIServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    capfd: pytest.CaptureFixture[str],
) -> None:
    key = "sk-live-9d8e7f6a5b4c3d2e1f"
    monkeypatch.setenv("BR_TEST_API_KEY", key)
    server.set_behaviour(
        Behaviour(
            rules=[
                Rule(status=401, match="question 1", message=f"Incorrect API key provided: {key}"),
                Rule(status=503, match="question 2", times=1, message=f"overloaded for key {key}"),
            ]
        )
    )
    caplog.set_level(logging.DEBUG)
    samples = simple_samples(tmp_path, n=3)
    out = tmp_path / "batch.jsonl"
    spec = parse_model_spec(f"a=http://127.0.0.1:{server.port}/v1@BR_TEST_API_KEY")
    report = generate_batch(samples, out, [spec], params=SamplingParams(), policy=FAST, progress=True)
    print(report.table())
    assert all(r.headers["authorization"] == f"Bearer {key}" for r in server.completions())
    assert report.failed == 1 and report.stats[0].retries == 1
    written = "".join(p.read_text(encoding="utf-8") for p in tmp_path.iterdir() if p.is_file())
    assert "Incorrect API key provided: ***" in written
    captured = capfd.readouterr()
    for text in (
        written,
        caplog.text,
        captured.out,
        captured.err,
        " ".join(r.getMessage() for r in caplog.records),
    ):
        assert key not in text


def test_ctrl_c_leaves_a_valid_file_and_a_rerun_completes_it(server: FakeOpenAIServer, tmp_path: Path) -> None:
    # ~130 ms a request, one at a time: the run needs ~5 s, so the interrupt after five answers always lands
    # mid-run however busy the machine is (a faster run once finished before the signal arrived).
    server.set_behaviour(Behaviour(first_token_delay_ms=30, token_delay_ms=20, tokens=5))
    samples = simple_samples(tmp_path, n=40)
    out = tmp_path / "batch.jsonl"
    script = (
        "import argparse, sys\n"
        "from reviewer_app.cli.generation import register\n"
        "parser = argparse.ArgumentParser(); register(parser.add_subparsers())\n"
        "args = parser.parse_args(sys.argv[1:]); sys.exit(args.handler(args))\n"
    )
    argv = [
        sys.executable,
        "-c",
        script,
        "generate",
        str(samples),
        "--out",
        str(out),
        "--concurrency",
        "1",
        "--model",
        f"a=http://127.0.0.1:{server.port}/v1",
        "--no-progress",
    ]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and (
        not out.exists() or out.stat().st_size == 0 or len(out.read_bytes().splitlines()) < 5
    ):
        time.sleep(0.02)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert "Run the same command to resume" in err
    partial = read_batch(out)  # every line parses: nothing torn
    assert 5 <= len(partial) < 40
    server.set_behaviour(Behaviour(first_token_delay_ms=0, token_delay_ms=0, tokens=5))
    argv[argv.index("--concurrency") + 1] = "8"  # resuming may use another concurrency; only sampling must match
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60, env={**os.environ})
    assert done.returncode == 0, done.stderr
    rows = read_batch(out)
    assert len(rows) == 40 and len({r["sample_id"] for r in rows}) == 40


def test_load_batch_reader_takes_the_generated_batch_as_it_is(server: FakeOpenAIServer, tmp_path: Path) -> None:
    from reviewer_app.batches.checked_batch import read_batch_files

    (tmp_path / "img").mkdir()
    (tmp_path / "img" / "dot.png").write_bytes(PNG)
    samples = write_samples(
        tmp_path / "samples.jsonl",
        [
            {"sample_id": "t1", "scenario": "qa", "prompt": "question 1", "reference": "r", "criteria": "c"},
            {"sample_id": "v1", "scenario": "vision", "prompt": "what is this?", "images": ["img/dot.png"]},
            {
                "sample_id": "m1",
                "scenario": "chat",
                "prompt": [
                    {"role": "user", "content": "hi"},
                    {"role": "assistant", "content": "hello"},
                    {"role": "user", "content": "question 2"},
                ],
            },
        ],
    )
    out = tmp_path / "batches" / "batch.jsonl"
    generate_batch(
        samples,
        out,
        models(server, "a", "b"),
        params=SamplingParams(seed=1),
        repeats=2,
        policy=FAST,
        progress=False,
    )
    records = read_batch_files([out])
    assert len(records) == 3 * 2 * 2
    vision = next(r for r in records if r.sample_id == "v1")
    assert len(vision.images) == 1 and vision.metadata["output_tokens"] == 8
    assert {r.repeat for r in records} == {0, 1}


def test_samples_checks_travel_into_the_batch_and_are_counted(server: FakeOpenAIServer, tmp_path: Path) -> None:
    from reviewer_app.batches.checked_batch import read_batch_files

    checks = [{"type": "regex", "pattern": "^a:", "name": "from a"}, {"type": "contains", "text": "QUESTION"}]
    samples = write_samples(
        tmp_path / "samples.jsonl",
        [{"sample_id": f"s{i}", "scenario": "qa", "prompt": f"question {i}", "checks": checks} for i in range(3)],
    )
    out = tmp_path / "batch.jsonl"
    report = generate_batch(samples, out, models(server, "a", "b"), params=SamplingParams(seed=1), policy=FAST,
                            progress=False)  # fmt: skip
    assert all(r["checks"] == checks for r in read_batch(out))
    lines = report.table().splitlines()
    assert "a: automatic checks passed (new outputs): contains 3/3, from a 3/3" in lines
    assert "b: automatic checks passed (new outputs): contains 3/3, from a 0/3" in lines
    assert {r.checks == checks for r in read_batch_files([out])} == {True}
