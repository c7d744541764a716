"""Traces in without glue: OpenAI logs and Batch API files, Langfuse and LangSmith exports (hand-written in each
tool's shape, tests/fixtures/traces) read into requests for build-eval-set and batch files of logged answers for
load-batch; every bad line located, nothing written then; the logged answers share their sample ids with the
eval set built from the same requests, and load as a batch (both databases)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from sqlalchemy.engine import Engine

from reviewer_app.batches.loading import load_batch
from reviewer_app.cli.main import main
from reviewer_app.errors import GenerationError, ValidationError
from reviewer_app.generation.eval_set import build_eval_set
from reviewer_app.generation.trace_files import import_traces
from reviewer_app.generation.traces import read_traces
from tests.helpers import write_rubric

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "traces"
RUBRIC = """
mode = "rating"
overlap = 1
seed = 1
[[dimensions]]
name = "quality"
description = "Good?"
scale = "likert"
min = 1
max = 5
"""


def _lines(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def test_openai_logs_become_requests_and_a_batch_file(tmp_path: Path) -> None:
    done = import_traces(FIXTURES / "openai.jsonl", "openai", tmp_path / "out")
    assert done.traces == 3 and done.skipped == {}
    requests = _lines(done.requests)
    assert [r["scenario"] for r in requests] == ["support", "summaries", "support"]
    assert requests[1]["messages"][0]["content"][1]["text"] == "The order ships Tuesday."  # type: ignore[index]
    [answers] = done.answers.values()
    assert answers.name == "answers-gpt-4o-mini-2024-07-18.jsonl"
    rows = _lines(answers)
    # The same prompt answered twice: one sample, repeats 0 and 1; content parts flattened to text.
    assert [(r["output"], r["repeat"]) for r in rows] == [
        ("Clean the rims and check the pads.", 0), ("Ships Tuesday.", 0), ("Try new pads.", 1),
    ]  # fmt: skip
    assert rows[0]["sample_id"] == rows[2]["sample_id"] != rows[1]["sample_id"]
    assert rows[1]["prompt"] == "Summarise:\nThe order ships Tuesday."
    assert rows[0]["metadata"] == {"trace_id": "chatcmpl-1", "input_tokens": 20, "output_tokens": 9}
    # build-eval-set on the requests gives the answers' sample ids.
    summary = build_eval_set(done.requests, tmp_path / "samples.jsonl", n=10, min_per_scenario=1)
    assert {s["sample_id"] for s in _lines(summary.out)} == {r["sample_id"] for r in rows}
    # ... and reads the log directly with --from.
    direct = build_eval_set(
        FIXTURES / "openai.jsonl", tmp_path / "direct.jsonl", n=10, min_per_scenario=1, source="openai"
    )
    assert _lines(direct.out) == _lines(summary.out)


def test_every_bad_line_is_located_and_nothing_is_written(tmp_path: Path) -> None:
    with pytest.raises(ValidationError) as caught:
        import_traces(
            FIXTURES / "openai_bad.jsonl", "openai", tmp_path / "out", scenario_field="request.metadata.scenario"
        )
    located = [(p.file, p.line, p.field) for p in caught.value.problems]
    assert located == [
        ("openai_bad.jsonl", 2, "request.messages"),
        ("openai_bad.jsonl", 3, None),
        ("openai_bad.jsonl", 4, "request.metadata.scenario"),
    ]
    assert "openai_bad.jsonl:3: not valid JSON" in str(caught.value)
    assert not (tmp_path / "out").exists()
    with pytest.raises(ValidationError) as caught:
        build_eval_set(FIXTURES / "openai_bad.jsonl", tmp_path / "s.jsonl", n=5, source="openai")
    assert {p.line for p in caught.value.problems} == {2, 3}  # line 4 has a scenario by default: "all"


def test_openai_batch_joins_input_and_output_and_counts_failures(tmp_path: Path) -> None:
    with pytest.raises(GenerationError, match="--requests"):
        read_traces(FIXTURES / "batch_output.jsonl", "openai-batch")
    done = import_traces(
        FIXTURES / "batch_output.jsonl", "openai-batch", tmp_path, requests=FIXTURES / "batch_input.jsonl"
    )
    assert done.traces == 2 and done.skipped == {"failed in the batch (error or non-200 status)": 1}
    rows = _lines(done.answers["gpt-4.1-2025-04-14"])
    assert [(r["scenario"], r["prompt"], r["output"]) for r in rows] == [("math", "What is 2+2?", "4"),
                                                                        ("words", "Spell cat.", "C-A-T")]  # fmt: skip
    bad = tmp_path / "bad_output.jsonl"
    bad.write_text((FIXTURES / "batch_output.jsonl").read_text().replace('"req-3"', '"req-9"'), encoding="utf-8")
    with pytest.raises(ValidationError, match="bad_output.jsonl:3: custom_id: 'req-9' is not in the input file"):
        read_traces(bad, "openai-batch", requests=FIXTURES / "batch_input.jsonl")


def test_langfuse_generations_with_latency_and_usage(tmp_path: Path) -> None:
    read = read_traces(FIXTURES / "langfuse.json", "langfuse")
    assert read.skipped == {"Langfuse span observations (not generations)": 1}
    first, second = read.traces
    assert (first.line, first.scenario, first.output, first.model) == (
        2,
        "support",
        "It ships today.",
        "claude-3-5-sonnet",
    )
    assert first.metadata == {"trace_id": "trace-1", "latency_ms": 1250.0, "input_tokens": 12, "output_tokens": 4}
    assert second.scenario == "faq" and second.messages == [{"role": "user", "content": "What are your hours?"}]
    done = import_traces(FIXTURES / "langfuse.json", "langfuse", tmp_path, scenario_field="name", model="sonnet-prod")
    assert list(done.answers) == ["sonnet-prod"] and [r["scenario"] for r in _lines(done.answers["sonnet-prod"])] == [
        "answer", "faq",
    ]  # fmt: skip


def test_langsmith_llm_runs_in_langchain_form(tmp_path: Path) -> None:
    read = read_traces(FIXTURES / "langsmith.jsonl", "langsmith")
    assert read.skipped == {"LangSmith chain runs (not llm)": 1}
    first, second = read.traces
    assert first.messages == [
        {"role": "system", "content": "You grade essays."},
        {"role": "user", "content": "Grade: The cat sat."},
    ]
    assert (first.output, first.model, first.scenario, first.metadata["latency_ms"]) == (
        "B+",
        "gpt-4o",
        "grading",
        500.0,
    )
    assert (second.output, second.model) == ("A-", "gpt-4o")


def test_logged_answers_load_as_a_batch(engine: Engine, tmp_path: Path) -> None:
    done = import_traces(FIXTURES / "openai.jsonl", "openai", tmp_path / "out", model="prod")
    summary = load_batch(engine, [done.answers["prod"]], write_rubric(tmp_path, RUBRIC), name="prod-logs")
    assert (summary.outputs, summary.models, sorted(summary.scenarios)) == (3, ["prod"], ["summaries", "support"])


def test_the_cli_imports_and_says_what_it_wrote(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    shutil.copy(FIXTURES / "langsmith.jsonl", tmp_path / "runs.jsonl")
    assert (
        main(["import-traces", str(tmp_path / "runs.jsonl"), "--from", "langsmith", "--out", str(tmp_path / "t")]) == 0
    )
    said = capsys.readouterr().out
    assert "Read 2 trace(s)" in said and "left out 1: LangSmith chain runs (not llm)" in said
    assert "gpt-4o: 2 logged answer(s)" in said
    assert (
        main(["import-traces", str(FIXTURES / "openai_bad.jsonl"), "--from", "openai", "--out", str(tmp_path / "u")])
        == 1
    )
    assert "openai_bad.jsonl:2: request.messages: missing" in capsys.readouterr().err
