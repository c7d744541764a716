"""build-eval-set: proportions, minimums, duplicates, reproducibility, log formats and their errors."""

from __future__ import annotations

import argparse
import base64
import csv
import json
import random
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from reviewer_app.cli.generation import register
from reviewer_app.errors import GenerationError, ValidationError
from reviewer_app.generation.eval_set import allocate, build_eval_set
from reviewer_app.generation.samples_file import read_samples

# Nine real AlpacaEval instructions (five of oasst, one of each other dataset), committed with their licence.
ALPACA = Path(__file__).resolve().parents[1] / "fixtures" / "alpaca_eval" / "claude-2" / "model_outputs.json"


def write_logs(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def traffic(sizes: dict[str, int]) -> list[dict[str, Any]]:
    return [
        {"prompt": f"{scenario} request {i}", "scenario": scenario} for scenario, n in sizes.items() for i in range(n)
    ]


def read(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_takes_traffic_proportions_with_a_floor_for_rare_scenarios(tmp_path: Path) -> None:
    logs = write_logs(tmp_path / "logs.jsonl", traffic({"chat": 600, "code": 300, "legal": 90, "medical": 10}))
    summary = build_eval_set(logs, tmp_path / "s.jsonl", n=200, seed=1, min_per_scenario=8)
    taken = Counter(r["scenario"] for r in read(tmp_path / "s.jsonl"))
    assert sum(taken.values()) == 200 == summary.taken
    assert taken["medical"] == 8  # 2 by proportion, kept at the floor
    assert abs(taken["chat"] - 2 * taken["code"]) <= 1  # the rest keeps traffic proportions
    assert taken["legal"] == pytest.approx(192 * 90 / 990, abs=1)
    assert {r.scenario: r.taken for r in summary.rows} == dict(taken)


def test_allocate_edge_cases() -> None:
    assert allocate({"a": 3, "b": 2}, 10, 5) == {"a": 3, "b": 2}  # fewer than asked: everything
    assert allocate({"a": 100, "b": 2}, 20, 5) == {"a": 18, "b": 2}  # a scenario below the floor gives all
    assert allocate({"a": 50, "b": 50, "c": 1}, 11, 0) == {"a": 6, "b": 5, "c": 0}  # tie goes by name
    with pytest.raises(GenerationError, match="--n 10 is too small for 3 scenarios"):
        allocate({"a": 100, "b": 100, "c": 100}, 10, 5)


def test_exact_duplicates_are_kept_once(tmp_path: Path) -> None:
    records = traffic({"chat": 30})
    records += [{"prompt": "chat request 3", "scenario": "chat"}] * 4
    records.append({"messages": [{"role": "user", "content": "chat request 4"}], "scenario": "chat"})
    logs = write_logs(tmp_path / "logs.jsonl", records)
    summary = build_eval_set(logs, tmp_path / "s.jsonl", n=100, seed=0)
    rows = read(tmp_path / "s.jsonl")
    assert len(rows) == 30 and len({r["prompt"] for r in rows}) == 30
    assert summary.rows[0].duplicates == 5 and summary.rows[0].in_logs == 35
    assert len({r["sample_id"] for r in rows}) == 30


def test_same_seed_same_set_whatever_the_log_order(tmp_path: Path) -> None:
    records = traffic({"chat": 300, "code": 120, "math": 7})
    shuffled = records[:]
    random.Random(5).shuffle(shuffled)
    a = build_eval_set(write_logs(tmp_path / "a.jsonl", records), tmp_path / "sa.jsonl", n=50, seed=42)
    build_eval_set(write_logs(tmp_path / "b.jsonl", shuffled), tmp_path / "sb.jsonl", n=50, seed=42)
    build_eval_set(tmp_path / "a.jsonl", tmp_path / "sa2.jsonl", n=50, seed=42)
    build_eval_set(tmp_path / "a.jsonl", tmp_path / "sc.jsonl", n=50, seed=43)
    assert (tmp_path / "sa.jsonl").read_bytes() == (tmp_path / "sa2.jsonl").read_bytes()
    ids = {r["sample_id"] for r in read(tmp_path / "sa.jsonl")}
    assert ids == {r["sample_id"] for r in read(tmp_path / "sb.jsonl")}
    assert ids != {r["sample_id"] for r in read(tmp_path / "sc.jsonl")}
    assert a.taken == 50


def test_bad_log_lines_are_all_reported_with_their_line(tmp_path: Path) -> None:
    logs = tmp_path / "logs.jsonl"
    logs.write_text(
        json.dumps({"prompt": "ok", "scenario": "a"})
        + "\n"
        + json.dumps({"scenario": "a"})
        + "\n"
        + "{not json\n"
        + json.dumps({"prompt": "x"})
        + "\n"
        + json.dumps({"messages": [{"role": "robot", "content": "hi"}], "scenario": "a"})
        + "\n",
        encoding="utf-8",
    )
    with pytest.raises(ValidationError) as error:
        build_eval_set(logs, tmp_path / "s.jsonl", n=5)
    text = str(error.value)
    assert "logs.jsonl:2: prompt: missing (and no messages)" in text
    assert "logs.jsonl:3: not valid JSON" in text
    assert "logs.jsonl:4: scenario: missing scenario" in text
    # The same wording as load-batch: one rule (reviewer_app.domain.input_rules) for both.
    assert "logs.jsonl:5: messages[0].role: must be system, user, assistant or tool, not 'robot'" in text
    assert not (tmp_path / "s.jsonl").exists()


def test_csv_chat_logs_with_images_references_and_nested_scenario(tmp_path: Path) -> None:
    png = base64.b64decode(
        "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
    )
    conversation = [
        {"role": "system", "content": "You are helpful."},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "Describe this"},
                {
                    "type": "image_url",
                    "image_url": {"url": "data:image/png;base64," + base64.b64encode(png).decode()},
                },
            ],
        },
        {"role": "assistant", "content": "the logged answer, dropped"},
    ]
    with (tmp_path / "logs.csv").open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=["messages", "route", "reference"])
        writer.writeheader()
        writer.writerow({"messages": json.dumps(conversation), "route": "vision", "reference": "a pixel"})
        writer.writerow(
            {
                "messages": json.dumps([{"role": "user", "content": "multi\nline"}]),
                "route": "text",
                "reference": "",
            }
        )
    out = tmp_path / "eval" / "samples.jsonl"
    build_eval_set(tmp_path / "logs.csv", out, n=10, by="route")
    rows = {r["scenario"]: r for r in read(out)}
    assert rows["text"]["prompt"] == "multi\nline" and "reference" not in rows["text"]
    vision = rows["vision"]
    assert vision["prompt"] == [
        {"role": "system", "content": "You are helpful."},
        {"role": "user", "content": "Describe this"},
    ]
    assert vision["reference"] == "a pixel"
    assert (out.parent / vision["images"][0]).read_bytes() == png
    assert [s.sample_id for s in read_samples(out)]  # generate accepts what build-eval-set writes


def test_real_alpaca_instructions_keep_the_small_datasets(tmp_path: Path) -> None:
    summary = build_eval_set(
        ALPACA,
        tmp_path / "s.jsonl",
        n=7,
        by="dataset",
        prompt_field="instruction",
        seed=7,
        min_per_scenario=1,
    )
    taken = {r.scenario: r.taken for r in summary.rows}
    assert set(taken) == {"selfinstruct", "oasst", "koala", "helpful_base", "vicuna"}
    assert sum(taken.values()) == 7 and min(taken.values()) == 1
    assert taken["oasst"] == 3  # the two left after one each go to the largest dataset, by traffic
    assert "vicuna" in summary.table()


def run_cli(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="blind-review")
    register(parser.add_subparsers())
    args = parser.parse_args(argv)
    return int(args.handler(args))


def test_cli_prints_the_table_and_turns_errors_into_one_message(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    logs = write_logs(tmp_path / "logs.jsonl", traffic({"chat": 20, "code": 5}))
    assert (
        run_cli(
            [
                "build-eval-set",
                str(logs),
                "--n",
                "10",
                "--min-per-scenario",
                "3",
                "--out",
                str(tmp_path / "s.jsonl"),
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "scenario" in out and "wrote 10 samples" in out
    assert (
        run_cli(
            [
                "build-eval-set",
                str(logs),
                "--n",
                "2",
                "--min-per-scenario",
                "3",
                "--out",
                str(tmp_path / "t.jsonl"),
            ]
        )
        == 1
    )
    err = capsys.readouterr().err
    assert err.startswith("error: --n 2 is too small") and err.count("\n") == 1
    assert run_cli(["generate", str(tmp_path / "s.jsonl"), "--model", "nourl", "--out", str(tmp_path / "b.jsonl")]) == 1
    assert "expected NAME=BASE_URL" in capsys.readouterr().err


def test_help_texts_carry_examples(capsys: pytest.CaptureFixture[str]) -> None:
    for command in ("build-eval-set", "generate"):
        with pytest.raises(SystemExit):
            run_cli([command, "--help"])
        assert f"blind-review {command} " in capsys.readouterr().out


def test_checks_in_the_logs_go_with_their_samples_and_bad_ones_are_located(tmp_path: Path) -> None:
    checks = [{"type": "max_words", "value": 50}]
    records = [{**r, "checks": checks} if r["scenario"] == "json" else r for r in traffic({"json": 6, "chat": 6})]
    out = tmp_path / "s.jsonl"
    build_eval_set(write_logs(tmp_path / "logs.jsonl", records), out, n=12, seed=1)
    taken = read(out)
    assert {s["scenario"]: s.get("checks") for s in taken} == {"json": checks, "chat": None}
    assert all(s.checks == (checks if s.scenario == "json" else None) for s in read_samples(out))
    records[1] = {**records[1], "checks": [{"type": "max_words", "value": "fifty"}]}
    with pytest.raises(ValidationError) as error:
        build_eval_set(write_logs(tmp_path / "logs.jsonl", records), tmp_path / "t.jsonl", n=12)
    assert "logs.jsonl:2: checks[0].value: must be a whole number >= 0" in str(error.value)
