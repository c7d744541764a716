"""The streaming load stores exactly what the load before it stored, and refuses bad files with exactly the
same messages.

The load used to read every file whole and hold every row in memory; it now checks the files a record at a
time, keeps small keys, and writes in chunks (issue 14, point 5). These tests build one deterministic batch
(our JSONL with a byte-order mark, CRLF and a lone CR between records, multi-turn prompts, repeats, images,
references, leaks; a CSV file; two AlpacaEval files) and one set of bad files, and compare a canonical dump
of what was stored (every column but ids and timestamps, foreign keys replaced by the natural keys they
point to) and the rendered error with digests recorded from the code before the change.

How the digests were recorded: in a worktree of commit 0c7315f (``git worktree add /tmp/base 0c7315f``),
this module was copied into ``tests/services/`` and ``record_digests()`` run with that worktree first on
``PYTHONPATH`` (``python -c "from tests.batches.test_load_stream import record_digests;
record_digests()"``). The columns that commit did not have (``output.n_chars``/``n_words``, ``item.pool_key``)
are checked against their definitions instead.
"""

from __future__ import annotations

import base64
import hashlib
import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select
from sqlalchemy.engine import Engine

from reviewer_app.batches import check_pass, ingest, load_rows
from reviewer_app.batches.catalog import batch_list
from reviewer_app.batches.checked_batch import read_batch_files
from reviewer_app.batches.load_summary import LoadSummary
from reviewer_app.batches.loading import load_batch
from reviewer_app.errors import BatchValidationError, IdentityLeakError
from storage.engine import get_engine, read_session
from storage.models import Batch, Item, Model, Output, Sample, Scenario

# A 2x1 PNG, literal so that its bytes (part of the content hash) never depend on an encoder's version.
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAIAAAABCAIAAAB7QOjdAAAAD0lEQVR4nGM8ISfHwMAAAAXMAQZFiFnUAAAAAElFTkSuQmCC"
)

RATING = """mode = "rating"
overlap = 2
seed = 424242
leak_words = ["Initech"]
[[dimensions]]
name = "correctness"
description = "Right?"
scale = "likert"
min = 1
max = 5
level = "ordinal"
[scenarios.support]
weight = 2.0
[[gold]]
sample_id = "b2"
model = "m2"
expected = { correctness = 5 }
"""

PAIRWISE = """mode = "pairwise"
overlap = 1
seed = 99
[[gold]]
sample_id = "a1"
models = ["m2", "acme-large"]
expected = { overall = "a" }
"""


def _line(record: dict[str, Any]) -> bytes:
    return json.dumps(record, ensure_ascii=False).encode()


def build_batch(folder: Path) -> list[Path]:
    """Our JSONL, a CSV file and two AlpacaEval files: every format, the awkward bytes of each."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "scan.png").write_bytes(PNG)
    chat = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "My order is late.", "name": "ann"},
    ]
    reordered = [{"content": m["content"], "role": m["role"], **({"name": "ann"} if "name" in m else {})} for m in chat]
    records = [
        {
            "sample_id": "a1",
            "scenario": "support",
            "prompt": chat,
            "model": "acme-large",
            "output": "As an AI language model developed by OpenAI, I can't track orders.",
            "reference": "Ask for the order number.",
            "criteria": "Polite.",
            "metadata": {"latency_ms": 812, "ttft_ms": 140.5, "output_tokens": 9, "tags": ["x", {"y": None}]},
        },
        {
            "sample_id": "a1",
            "scenario": "support",
            "prompt": reordered,  # the same messages, keys in another order: the same prompt
            "model": "m2",
            "output": "Sure \u2014 which order? \U0001f642\u2028Line two",
            "reference": "Ask for the order number.",
            "criteria": "Polite.",
            "metadata": {},
        },
        {
            "sample_id": "a1",
            "scenario": "support",
            "prompt": chat,
            "model": "acme-large",
            "repeat": 1,
            "output": "I'm acme-large, here to help.",
            "reference": "Ask for the order number.",
            "criteria": "Polite.",
        },
        {
            "sample_id": 7,
            "scenario": "extraction",
            "prompt": "Extract the total: \u20ac1,240.00",
            "model": "m2",
            "output": "\u20ac1,240.00",
            "images": ["scan.png"],
        },
        {
            "sample_id": 7,
            "scenario": "extraction",
            "prompt": "Extract the total: \u20ac1,240.00",
            "model": "acme-large",
            "output": "The total is \u20ac1,240.00 (Claude Monet would agree).",
            "images": ["scan.png"],
            "metadata": {"latency_ms": 1200},
        },
        {
            "sample_id": "b2",
            "scenario": "support",
            "prompt": "Hi",
            "model": "m2",
            "output": "  \u3000Hello\tthere\x1c friend ",
            "metadata": None,
        },
        {"sample_id": "b2", "scenario": "support", "prompt": "Hi", "model": "acme-large", "output": "Hello!"},
    ]
    lines = [_line(r) for r in records]
    jsonl = folder / "main.jsonl"
    jsonl.write_bytes(
        b"\xef\xbb\xbf"
        + lines[0]
        + b"\r\n"
        + lines[1]
        + b"\n\n"
        + lines[2]
        + b"\r"
        + lines[3]
        + b"\n   \n"
        + b"\n".join(lines[4:])
        + b"\n"
    )
    csv_file = folder / "extra.csv"
    csv_file.write_text(
        "sample_id,scenario,prompt,model,output,reference,repeat,images,metadata.latency_ms,metadata.note\n"
        'c1,support,"Where is, my parcel?",acme-large,"Made by Initech, it ships today.",,0,,120,fast\n'
        'c1,support,"Where is, my parcel?",m2,"It ships ""today"".",,,scan.png,90.5,\n',
        encoding="utf-8",
    )
    files = [jsonl, csv_file]
    for model, answers in (("acme-large", ["Blue.", "Hi! I'm ChatGPT."]), ("m2", ["Red, or blue.", "Hello."])):
        path = folder / "alpaca" / model / "model_outputs.json"
        path.parent.mkdir(parents=True)
        items = [
            {"instruction": "Name a colour.", "output": answers[0], "generator": model, "dataset": "helpful_base"},
            {"instruction": "Say hi", "output": answers[1], "generator": model, "dataset": "oasst"},
        ]
        path.write_text(json.dumps(items, indent=2), encoding="utf-8")
        files.append(path)
    return files


def build_bad_files(folder: Path) -> list[Path]:
    """Files with one of every kind of problem, some of them several times."""
    folder.mkdir(parents=True, exist_ok=True)
    good = {"sample_id": "s1", "scenario": "qa", "prompt": "Q?", "model": "m1", "output": "A."}
    bad_jsonl = folder / "bad.jsonl"
    bad_jsonl.write_bytes(
        b"\n".join(
            [
                _line(good),
                _line(good)[:-5],  # truncated
                b"[1, 2]",
                _line({**good, "model": "m2", "output": 42, "prompt": {"x": 1}}),
                _line({**good, "model": "m3", "modle": "typo"}),
                _line({**good, "model": "m4", "prompt": [{"role": "wizard", "content": "x"}]}),
                _line({**good, "model": "m5", "output": "x" * 1_200_000}),
                _line(good),  # the same output again
                _line({**good, "model": "m6", "prompt": "Another question"}),
                _line({**good, "model": "m7", "scenario": "other"}),
                _line({**good, "model": "m8", "reference": "R"}),
                _line({**good, "model": "m9", "images": ["../escape.png"]}),
                _line({**good, "model": "m10", "images": ["missing.png"]}),
            ]
        )
        + b"\n"
    )
    latin1 = folder / "latin1.jsonl"  # problems before the bad byte are not reported: the file is not UTF-8
    latin1.write_bytes(_line(good)[:-3] + b"\n" + b'{"sample_id": "s9", "output": "caf\xe9"}\n' + _line(good) + b"\n")
    empty = folder / "empty.jsonl"
    empty.write_bytes(b"\xef\xbb\xbf \n\r\n\t\n")
    csv_extra = folder / "cells.csv"
    csv_extra.write_text(
        "sample_id,scenario,prompt,model,output,metadata.x\ns2,qa,Q?,m1,A,1,surplus\ns2,qa,Q?,m2,,2\n"
        "s2,qa,Q?,m1,dup,3\n",
        encoding="utf-8",
    )
    csv_header = folder / "header.csv"
    csv_header.write_text("sample_id,scenario,prompt,output\ns3,qa,Q,A\n", encoding="utf-8")
    csv_only_header = folder / "only-header.csv"
    csv_only_header.write_text("sample_id,scenario,prompt,model,output\n", encoding="utf-8")
    csv_latin1 = folder / "latin1.csv"
    csv_latin1.write_bytes(b"sample_id,scenario,prompt,model,output\ns4,qa,Q,m1,caf\xe9\n")
    text = folder / "notes.txt"
    text.write_text("hello", encoding="utf-8")
    alpaca = folder / "model_outputs.json"
    alpaca.write_text(
        json.dumps([{"instruction": "I", "output": "O", "generator": "g"}, {"instruction": 3}, "x"]), encoding="utf-8"
    )
    not_list = folder / "object.json"
    not_list.write_text('{"a": 1}', encoding="utf-8")
    truncated = folder / "truncated.json"
    truncated.write_text('[{"instruction": "I"', encoding="utf-8")
    return [
        bad_jsonl,
        latin1,
        empty,
        folder / "absent.jsonl",
        csv_extra,
        csv_header,
        csv_only_header,
        csv_latin1,
        text,
        alpaca,
        not_list,
        truncated,
    ]


def canonical(engine: Engine, batch_id: int, folder: Path) -> dict[str, Any]:
    """Every stored column of the batch but ids and timestamps (and the columns added after 0c7315f), rows
    in id order, foreign keys as the natural keys they point to."""
    with read_session(engine) as s:
        batch = s.get(Batch, batch_id)
        assert batch is not None
        scenarios = {sc.id: sc.name for sc in s.exec(select(Scenario).where(Scenario.batch_id == batch_id)).scalars()}
        samples = list(s.execute(select(Sample).where(Sample.batch_id == batch_id).order_by(Sample.id)).scalars())
        models = {m.id: m.name for m in s.execute(select(Model)).scalars()}
        outputs = list(s.execute(select(Output).where(Output.batch_id == batch_id).order_by(Output.id)).scalars())
        items = list(s.execute(select(Item).where(Item.batch_id == batch_id).order_by(Item.id)).scalars())
    sample_key = {sm.id: sm.key for sm in samples}
    output_key = {o.id: (sample_key[o.sample_id], models[o.model_id], o.repeat) for o in outputs}
    return {
        "batch": {
            "name": batch.name,
            "content_hash": batch.content_hash,
            "mode": str(batch.mode),
            "overlap": batch.overlap,
            "seed": batch.seed,
            "rubric_toml": batch.rubric_toml,
            "rubric_json": batch.rubric_json,
            "status": str(batch.status),
            "source_files": batch.source_files.replace(str(folder), "<folder>"),
        },
        "scenarios": sorted(scenarios.values()),
        "samples": [
            [sm.key, scenarios[sm.scenario_id], sm.prompt_json, sm.reference, sm.criteria, sm.images_json]
            for sm in samples
        ],
        "outputs": [
            [*output_key[o.id], o.text, o.metadata_json, o.leak_words, o.shown_text, o.excluded] for o in outputs
        ],
        "items": [name_ordered(it, sample_key, output_key) for it in items],
    }


def name_ordered(it: Item, sample_key: dict[Any, str], output_key: dict[Any, tuple[str, str, int]]) -> list[Any]:
    """An item as 0c7315f stored it: a pair's outputs in model-name order. Output a is now a keyed coin per
    pair (issue 33), so a pair stored the other way is turned back, its gold answers with it."""
    a = output_key[it.output_a_id]
    b = None if it.output_b_id is None else output_key[it.output_b_id]
    gold = it.gold_json
    if b is not None and b[1] < a[1]:
        a, b = b, a
        flip = {"a": "b", "b": "a"}
        gold = (
            None
            if gold is None
            else json.dumps({d: flip.get(v, v) for d, v in json.loads(gold).items()}, sort_keys=True)
        )
    return [sample_key[it.sample_id], a, b, it.is_gold, gold]


def summary_lines(summary: LoadSummary) -> list[str]:
    lines = summary.lines()
    return [lines[0].replace(f"id {summary.batch_id},", "id <id>,"), *lines[1:]]


def digest(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


CASES = {  # name -> (rubric, on_leak)
    "rating-mask": (RATING, "mask"),
    "rating-flag": (RATING, "flag"),
    "rating-exclude": (RATING, "exclude"),
    "pairwise-mask": (PAIRWISE, "mask"),
}

# Recorded from 0c7315f (see the module docstring): sha256 of the canonical dump, and of the summary lines.
STORED = {
    "rating-mask": (
        "6256066da5ed4cf73768aad31cf4fabb02b8f09e27acf15a1c8c810483a8a901",
        "c0199d7ec2c1b65d64c602be097ad814731f60da4b2e6aacbd0552126c2f25f4",
    ),
    "rating-flag": (
        "8f3aa25bf23577ebd57ae6653a32dc64aa4330d0d10e0041e81d351667780625",
        "299c8100d55ff7f030c3cb22e8e5e615926bfd274f04de6d4392ba7a54845d1b",
    ),
    "rating-exclude": (
        "664ff0b1a1d018d1938ec059f04b8d844da092d7fd9e03f33f43ddb367841555",
        "8d33eaf79d5e94282b001154461c1c16a7218c44ff32f28edb4ab1c3a8bf4b53",
    ),
    "pairwise-mask": (
        "1f60f5dced1f2a9d7a35bba2475a90fd2b519a259f6555c8bdb9694e04c9b851",
        "e18456f872fab40774b14aa8abc1cab3392c3e3675ba01ebd00eecd3c93cde48",
    ),
}
# sha256 of the rendered BatchValidationError for build_bad_files (paths relative to the folder)
REFUSED = (
    "1d956fa2cfbb1454854ca567a2b5c96ae7ef077bb72236e4be4cf1723bfd3c70"  # checks: three messages name them (diffed)
)
RECORDS = "08477dd17a2369b317ea69c19b131581e0cbe137562dc4f7a7ac71b15bcfd699"  # read_batch_files, as plain data


def load_case(engine: Engine, folder: Path, case: str) -> tuple[dict[str, Any], list[str]]:
    rubric_text, on_leak = CASES[case]
    files = build_batch(folder)
    (folder / "rubric.toml").write_text(rubric_text, encoding="utf-8")
    summary = load_batch(engine, files, folder / "rubric.toml", name=case, on_leak=on_leak, open_now=True)
    return canonical(engine, summary.batch_id, folder), summary_lines(summary)


def refused_text(folder: Path) -> str:
    files = build_bad_files(folder)
    (folder / "rubric.toml").write_text(RATING.split("[scenarios.support]")[0], encoding="utf-8")
    with pytest.raises(BatchValidationError) as err:
        load_batch(
            get_engine(f"sqlite:///{folder / 'refused.db'}"), files, folder / "rubric.toml", name="bad", open_now=True
        )
    return str(err.value).replace(str(folder) + "/", "")


def records_as_data(folder: Path) -> list[Any]:
    records = read_batch_files(build_batch(folder))
    return [
        [
            r.sample_id,
            r.scenario,
            r.prompt,
            r.model,
            r.output,
            r.file.replace(str(folder), "<folder>"),
            r.line,
            r.reference,
            r.criteria,
            [[i.digest, i.ext, i.width, i.height, i.stored_name] for i in r.images],
            r.metadata,
            r.repeat,
        ]
        for r in records
    ]


@pytest.fixture(params=["default chunks", "tiny chunks"])
def chunking(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """The default chunk sizes (the whole test batch in one chunk), or chunks of two outputs and spill blocks
    of three records, so that samples, pairs and gold items straddle chunk boundaries."""
    if request.param == "tiny chunks":
        monkeypatch.setattr(load_rows, "CHUNK_OUTPUTS", 2)
        monkeypatch.setattr(load_rows, "CHUNK_CHARS", 60)
        monkeypatch.setattr(check_pass.Spill, "BLOCK_RECORDS", 3)
    return str(request.param)


@pytest.mark.parametrize("case", list(CASES))
def test_the_stored_batch_is_what_the_whole_file_load_stored(
    engine: Engine, tmp_path: Path, case: str, chunking: str
) -> None:
    stored, lines = load_case(engine, tmp_path / "in", case)
    # The summary's "outputs per model" line came after 0c7315f (issue 8, point 13; its own test is in
    # tests/cli/test_load_summary_models.py): every other line is compared with what that commit printed.
    per_model = [line for line in lines if line.startswith("  outputs per model: ")]
    assert len(per_model) == 1
    # So did the line saying who the batch is open to (issue 27, point 9; tests/batches/test_audience.py).
    audience = [line for line in lines if line.startswith("  Batch ")]
    assert audience == [f"  Batch {case!r} is open to every active reviewer."]
    lines = [line for line in lines if line not in per_model + audience]
    assert (digest(stored), digest(lines)) == STORED[case], json.dumps([stored, lines], indent=1, ensure_ascii=False)


def test_the_columns_added_since_are_filled_as_defined(engine: Engine, tmp_path: Path) -> None:
    from reviewer_app.domain.keyed_random import secret_bytes
    from storage.models import pool_key, text_counts

    load_case(engine, tmp_path / "in", "rating-mask")
    with read_session(engine) as s:
        batch = s.execute(select(Batch)).scalars().one()
        outputs = list(s.execute(select(Output)).scalars())
        items = list(s.execute(select(Item)).scalars())
    assert [(o.n_chars, o.n_words) for o in outputs] == [text_counts(o.text) for o in outputs]
    key = secret_bytes(batch.secret)
    assert [it.pool_key for it in items] == [pool_key(key, it.id) for it in items if it.id is not None]


def test_a_leak_after_chunks_were_written_rolls_the_whole_load_back(
    engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(load_rows, "CHUNK_OUTPUTS", 2)
    records = [
        {"sample_id": f"s{i}", "scenario": "qa", "prompt": f"Q{i}?", "model": m, "output": f"Answer {i}."}
        for i in range(5)
        for m in ("m1", "m2")
    ]
    records[-1]["output"] = "As a model trained by OpenAI, I think so."
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "b.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    (folder / "rubric.toml").write_text(RATING.split("[scenarios.support]")[0], encoding="utf-8")
    with pytest.raises(IdentityLeakError, match=r"^1 output\(s\) name a model or vendor \(.*b.jsonl:10 sample s4 / m2"):
        load_batch(engine, [folder / "b.jsonl"], folder / "rubric.toml", name="leaky", on_leak="fail", open_now=True)
    assert batch_list(engine) == []
    with read_session(engine) as s:
        assert s.execute(select(Output)).first() is None and s.execute(select(Sample)).first() is None
    assert load_batch(engine, [folder / "b.jsonl"], folder / "rubric.toml", name="leaky", open_now=True).outputs == 10


def test_bad_files_are_refused_with_the_same_problems(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BLIND_REVIEW_MAX_OUTPUT_MB", "1")
    text = refused_text(tmp_path / "bad")
    assert digest(text) == REFUSED, text


def test_read_batch_files_gives_the_same_records(tmp_path: Path) -> None:
    data = records_as_data(tmp_path / "in")
    assert digest(data) == RECORDS, json.dumps(data, indent=1, ensure_ascii=False)


def record_digests() -> None:
    """Print this module's digests for the code on ``sys.path`` (see the module docstring)."""
    import os

    from storage.migrate import migrate

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        os.environ["BLIND_REVIEW_DATA_DIR"] = str(root / "data")
        for case in CASES:
            engine = get_engine(f"sqlite:///{root / case}.db")
            migrate(engine)
            stored, lines = load_case(engine, root / case / "in", case)
            print(f'    "{case}": ("{digest(stored)}", "{digest(lines)}"),')
        os.environ["BLIND_REVIEW_MAX_OUTPUT_MB"] = "1"
        print(f'REFUSED = "{digest(refused_text(root / "bad"))}"')
        print(f'RECORDS = "{digest(records_as_data(root / "records"))}"')


@pytest.mark.parametrize("read_size", [1, 7, 1 << 20])
def test_utf8_is_checked_across_reads_and_a_bad_byte_is_located(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, read_size: int
) -> None:
    """Files are checked a read at a time: a character split between two reads is fine, and a bad byte is
    named with its line and its offset after any byte-order mark (the byte itself, also after a BOM)."""
    monkeypatch.setattr(ingest, "_READ_SIZE", read_size)
    rows = [
        {
            "sample_id": "s1",
            "scenario": "qa",
            "prompt": "\u00bfQu\u00e9?",
            "model": m,
            "output": "\u4e2d\u6587 \U0001f642",
        }
        for m in ("a", "b")
    ]
    good = tmp_path / "good.jsonl"
    good.write_bytes(b"\xef\xbb\xbf" + b"\n".join(_line(r) for r in rows) + b"\n")
    assert [r.output for r in read_batch_files([good])] == ["\u4e2d\u6587 \U0001f642"] * 2
    bad = tmp_path / "bad.jsonl"
    data = b"\xef\xbb\xbf" + _line(rows[0]) + b"\n\n" + _line(rows[1])[:-2] + b"\xe9\xff" + b'"}\n'
    bad.write_bytes(data)
    at = data.index(b"\xe9\xff")
    with pytest.raises(BatchValidationError) as err:
        read_batch_files([bad])
    (problem,) = err.value.problems
    assert (problem.line, problem.message) == (
        3,
        f"is not UTF-8 (byte 0xe9 at offset {at - 3}); re-save the file as UTF-8",
    )
