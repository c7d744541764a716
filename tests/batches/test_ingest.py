"""Loading batches: good files load exactly, bad files are refused with located messages and no writes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PIL import Image
from sqlalchemy import func, select
from sqlalchemy.engine import Engine

from reviewer_app.batches.loading import load_batch
from reviewer_app.errors import BatchValidationError, IdentityLeakError, RubricError
from storage.engine import read_session
from storage.models import Batch, Item, Output, Sample
from tests.helpers import PAIRWISE_RUBRIC, RATING_RUBRIC, make_records, write_batch, write_rubric


def table_counts(engine: Engine) -> tuple[int, ...]:
    with read_session(engine) as s:
        return tuple(
            int(s.execute(select(func.count()).select_from(t)).scalar_one()) for t in (Batch, Sample, Output, Item)
        )


@pytest.fixture
def rubric(tmp_path: Path) -> Path:
    return write_rubric(tmp_path, RATING_RUBRIC.format(overlap=2))


def test_load_stores_every_output_exactly_and_second_load_is_a_noop(
    engine: Engine, tmp_path: Path, rubric: Path
) -> None:
    records = make_records(4, ["m1", "m2"])
    tricky = "Ünïcødé ✓ — 中文 line\u2028separator\u2029para\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n```py\nprint('<b>x</b>')\n```\n<script>alert(1)</script>"  # noqa: E501
    records[0]["output"] = tricky
    records[1]["prompt"] = records[0]["prompt"] = [
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "Hello"},
        {"role": "user", "content": "Question 0?"},
    ]
    path = write_batch(tmp_path, records)
    summary = load_batch(engine, [path], rubric, name="b1", open_now=True)
    assert not summary.already_loaded
    assert (summary.outputs, summary.items, summary.scenarios) == (8, 8, {"qa": 2, "summaries": 2})
    with read_session(engine) as s:
        texts = set(s.execute(select(Output.text)).scalars())
        prompt = s.execute(select(Sample.prompt_json).where(Sample.key == "s0")).scalar_one()
    assert tricky in texts
    assert json.loads(prompt)[1] == {"role": "assistant", "content": "Hello"}
    before = table_counts(engine)
    again = load_batch(engine, [path], rubric, name="other-name", open_now=True)
    assert again.already_loaded and again.batch_name == "b1"
    assert "nothing was written" in again.lines()[0]
    assert table_counts(engine) == before


def test_same_name_with_different_content_is_refused(engine: Engine, tmp_path: Path, rubric: Path) -> None:
    load_batch(engine, [write_batch(tmp_path, make_records(2, ["m1"]))], rubric, name="b1", open_now=True)
    other = write_batch(tmp_path / "o", make_records(3, ["m1"]))
    with pytest.raises(BatchValidationError, match="already exists with different content"):
        load_batch(engine, [other], rubric, name="b1", open_now=True)


def test_csv_batch_with_metadata_columns(engine: Engine, tmp_path: Path, rubric: Path) -> None:
    path = tmp_path / "batch.csv"
    path.write_text(
        "sample_id,scenario,prompt,model,output,metadata.latency_ms,metadata.ttft_ms\n"
        's1,qa,"What, exactly?",m1,"It is, indeed.",120,35\n'
        's1,qa,"What, exactly?",m2,Nope,90.5,\n',
        encoding="utf-8",
    )
    summary = load_batch(engine, [path], rubric, name="csv", open_now=True)
    assert summary.outputs == 2
    with read_session(engine) as s:
        metas = sorted(s.execute(select(Output.metadata_json)).scalars())
    assert [json.loads(m) for m in metas] == [{"latency_ms": 120, "ttft_ms": 35}, {"latency_ms": 90.5}]


def test_images_are_checked_and_stored_by_content_hash(engine: Engine, tmp_path: Path, rubric: Path) -> None:
    Image.new("RGB", (20, 10), "red").save(tmp_path / "chart.png")
    records = make_records(1, ["m1", "m2"])
    for r in records:
        r["images"] = ["chart.png"]
    summary = load_batch(engine, [write_batch(tmp_path, records)], rubric, name="img", open_now=True)
    assert summary.images == 1
    stored = list((tmp_path / "data" / "images").iterdir())
    assert len(stored) == 1 and stored[0].suffix == ".png" and "chart" not in stored[0].name


def bad_case(tmp_path: Path, name: str) -> tuple[list[Path], str]:
    """Each bad input and a fragment of the message it must produce."""
    d = tmp_path / name
    d.mkdir()
    good = make_records(2, ["m1", "m2"])
    line = lambda r: json.dumps(r)  # noqa: E731
    if name == "truncated_json":
        p = d / "b.jsonl"
        p.write_text(line(good[0]) + "\n" + line(good[1])[:-9] + "\n")
        return [p], "b.jsonl:2: not valid JSON"
    if name == "wrong_types":
        bad = dict(good[1], output=42, prompt={"x": 1})
        return [write_batch(d, [good[0], bad])], "batch.jsonl:2: output: must be text, not int"
    if name == "duplicate":
        return [
            write_batch(d, [good[0], good[1], good[0]])
        ], "batch.jsonl:3: sample_id: ('s0', 'm1') appears twice (first at"
    if name == "missing_fields":
        bad = {k: v for k, v in good[1].items() if k not in ("model", "scenario")}
        return [write_batch(d, [good[0], bad])], "batch.jsonl:2: scenario: missing"
    if name == "non_utf8":
        p = d / "b.jsonl"
        p.write_bytes((line(good[0]) + "\n").encode() + b'{"sample_id": "s9", "output": "caf\xe9"}\n')
        return [p], "b.jsonl:2: is not UTF-8"
    if name == "huge_output":
        big = dict(good[1], output="x" * 20_000_000)
        return [write_batch(d, [good[0], big])], "batch.jsonl:2: output: is 20.0 MB, over the 5 MB limit"
    if name == "escaping_image":
        (tmp_path / "secret.png").write_bytes(b"\x89PNG")
        bad = dict(good[1], images=["../secret.png"])
        return [write_batch(d, [good[0], bad])], "batch.jsonl:2: images: '../secret.png' points outside"
    if name == "not_an_image":
        (d / "fake.png").write_text("hello")
        bad = dict(good[1], images=["fake.png"])
        return [write_batch(d, [good[0], bad])], "images: 'fake.png' is not a readable PNG"
    if name == "empty":
        p = d / "b.jsonl"
        p.write_text("")
        return [p], "b.jsonl: is empty"
    if name == "conflicting_prompt":
        bad = dict(good[1], prompt="Another question")
        return [write_batch(d, [good[0], bad])], "batch.jsonl:2: prompt: sample 's0' has a different prompt"
    if name == "unknown_field":
        bad = dict(good[1], modle="typo")
        return [write_batch(d, [good[0], bad])], "batch.jsonl:2: modle: unknown field"
    if name == "bad_role":
        bad = dict(good[1], prompt=[{"role": "wizard", "content": "x"}])
        return [write_batch(d, [good[0], bad])], "prompt[0].role: must be system, user, assistant or tool"
    raise AssertionError(name)


BAD = [
    "truncated_json",
    "wrong_types",
    "duplicate",
    "missing_fields",
    "non_utf8",
    "huge_output",
    "escaping_image",
    "not_an_image",
    "empty",
    "conflicting_prompt",
    "unknown_field",
    "bad_role",
]


@pytest.mark.parametrize("case", BAD)
def test_bad_batch_is_refused_with_its_location_and_nothing_written(
    engine: Engine, tmp_path: Path, rubric: Path, case: str
) -> None:
    load_batch(engine, [write_batch(tmp_path / "ok", make_records(1, ["z"]))], rubric, name="existing", open_now=True)
    before = table_counts(engine)
    paths, expected = bad_case(tmp_path, case)
    with pytest.raises(BatchValidationError) as err:
        load_batch(engine, paths, rubric, name="bad", open_now=True)
    assert expected in str(err.value), str(err.value)
    assert "nothing was written" in str(err.value)
    assert table_counts(engine) == before


def test_every_problem_is_reported_not_only_the_first(engine: Engine, tmp_path: Path, rubric: Path) -> None:
    recs = make_records(3, ["m1"])
    recs[0].pop("model")
    recs[2]["output"] = None
    p = write_batch(tmp_path, recs)
    with pytest.raises(BatchValidationError) as err:
        load_batch(engine, [p], rubric, name="bad", open_now=True)
    assert len(err.value.problems) == 2
    assert "batch.jsonl:1: model: missing" in str(err.value) and "batch.jsonl:3: output: missing" in str(err.value)


RUBRIC_CASES = {
    'mode = "rating"\n[[dimensions]]\nname="a"\nscale="binary"\nleak_words=["x"]\n': "dimensions.a.leak_words: unknown setting",  # noqa: E501
    'mode = "ranking"\noverlap = 2\n': 'mode: must be "rating" or "pairwise"',
    'mode = "rating"\noverlap = 0\n[[dimensions]]\nname="a"\nscale="binary"\n': "overlap: must be a whole number",
    'mode = "rating"\n[[dimensions]]\nname="a"\nscale="likert"\nmin=5\nmax=1\n': "max must be above min",
    'mode = "rating"\n[[dimensions]]\nname="a"\nscale="categorical"\n': "needs a list of at least two choices",
    'mode = "rating"\n[[dimensions]]\nname="a"\nscale="binary"\nlevel="fuzzy"\n': "level: must be one of",
    'mode = "rating"\noverlap = [\n': "not valid TOML",
    'mode = "rating"\n': "needs at least one [[dimensions]]",
}


@pytest.mark.parametrize("text,expected", list(RUBRIC_CASES.items()))
def test_bad_rubric_is_refused(engine: Engine, tmp_path: Path, text: str, expected: str) -> None:
    p = write_batch(tmp_path, make_records(1, ["m1"]))
    with pytest.raises(RubricError) as err:
        load_batch(engine, [p], write_rubric(tmp_path, text), name="b", open_now=True)
    assert expected in str(err.value)
    assert table_counts(engine) == (0, 0, 0, 0)


def test_rubric_naming_an_unknown_scenario_is_refused(engine: Engine, tmp_path: Path) -> None:
    rubric = write_rubric(tmp_path, RATING_RUBRIC.format(overlap=1) + "[scenarios.extraction]\nweight = 2\n")
    with pytest.raises(BatchValidationError, match="scenarios.extraction: no sample of the batch is in scenario"):
        load_batch(engine, [write_batch(tmp_path, make_records(2, ["m1"]))], rubric, name="b", open_now=True)
    assert table_counts(engine) == (0, 0, 0, 0)


def test_leak_policies(engine: Engine, tmp_path: Path) -> None:
    recs = make_records(2, ["acme-large", "m2"])
    recs[0]["output"] = "As an AI language model developed by OpenAI, I cannot."
    recs[1]["output"] = "I'm m2 and not Acme at all"
    rubric = write_rubric(tmp_path, 'leak_words = ["Initech"]\n' + RATING_RUBRIC.format(overlap=1))
    recs[2]["output"] = "Built by Initech."
    path = write_batch(tmp_path, recs)
    with pytest.raises(IdentityLeakError, match="3 output\\(s\\) name a model or vendor"):
        load_batch(engine, [path], rubric, name="b", on_leak="fail", open_now=True)
    assert table_counts(engine) == (0, 0, 0, 0)
    summary = load_batch(engine, [path], rubric, name="b", on_leak="exclude", open_now=True)
    assert {(lk.sample_id, lk.model): lk.words for lk in summary.leaks} == {
        ("s0", "acme-large"): ["OpenAI"],
        ("s0", "m2"): ["m2", "acme"],
        ("s1", "acme-large"): ["Initech"],
    }
    assert summary.excluded == 3 and summary.items == 1


def test_pairwise_batch_makes_every_pair_of_a_sample(engine: Engine, tmp_path: Path) -> None:
    rubric = write_rubric(tmp_path, PAIRWISE_RUBRIC.format(overlap=1))
    summary = load_batch(
        engine, [write_batch(tmp_path, make_records(3, ["a", "b", "c", "d"]))], rubric, name="p", open_now=True
    )
    assert summary.items == 3 * 6


def test_all_six_alpaca_eval_files_load_as_one_batch_and_flag_self_identification(
    engine: Engine, tmp_path: Path, rubric: Path
) -> None:
    # A committed sample of the six real AlpacaEval files (tests/fixtures/alpaca_eval/README.md): nine
    # instructions in each, four of them answered with a model's or vendor's name.
    files = sorted((Path(__file__).parents[1] / "fixtures" / "alpaca_eval").glob("*/model_outputs.json"))
    assert len(files) == 6
    summary = load_batch(engine, files, rubric, name="alpaca", open_now=True)
    assert summary.outputs == 6 * 9 and sum(summary.scenarios.values()) == 9  # matched by instruction
    assert summary.scenarios == {"oasst": 5, "selfinstruct": 1, "koala": 1, "helpful_base": 1, "vicuna": 1}
    flagged = {(lk.model, w) for lk in summary.leaks for w in lk.words}
    assert ("gpt4_1106_preview", "OpenAI") in flagged
    assert ("claude-2", "Anthropic") in flagged and ("claude-2", "Claude") in flagged
    assert ("vicuna-13b", "Vicuna") in flagged  # a part of the batch's own model name
    with read_session(engine) as s:
        n_flagged = s.execute(select(func.count()).select_from(Output).where(Output.leak_words != "")).scalar_one()
    assert n_flagged == len(summary.leaks) == 15
