"""`leaks`, `archive-batch` / `restore-batch`, `delete-batch` and the models column of `list-batches`."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from sqlalchemy.engine import Engine

from reviewer_app.batches.admin import batch_table
from reviewer_app.cli.main import main
from tests.helpers import RATING_RUBRIC, make_records, write_batch, write_rubric

# "done" is "answered" since issue 27: it counts item showings answered, not items (its legend, on stderr, says so).
OLD_COLUMNS = ["id", "name", "mode", "status", "k", "samples", "outputs", "items", "answered", "ratings"]


def _load(tmp_path: Path, name: str, models: list[str], n: int = 3, **kw: str) -> None:
    records = make_records(n, models)
    for r in records:
        r["output"] = f"I am {r['model']} and this is my answer."
    folder = tmp_path / name
    argv = ["load-batch", str(write_batch(folder, records)), "--rubric"]
    argv += [str(write_rubric(folder, RATING_RUBRIC.format(overlap=1))), "--name", name]
    argv += [f"--{k.replace('_', '-')}={v}" for k, v in kw.items()]
    assert main(argv) == 0


def test_list_batches_keeps_its_columns_and_adds_the_models_at_the_end(
    engine: Engine, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _load(tmp_path, "b1", ["m1", "m2"])
    capsys.readouterr()
    assert main(["list-batches"]) == 0
    header, row = capsys.readouterr().out.splitlines()
    assert header.split()[: len(OLD_COLUMNS)] == OLD_COLUMNS
    assert header.endswith("models (outputs)  follow-up of")
    assert row.split()[1:10] == ["b1", "rating", "closed", "1", "3", "6", "6", "0", "0"]
    assert row.endswith("m1 3, m2 3  -")


def test_leaks_lists_every_flagged_output(engine: Engine, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _load(tmp_path, "leaky", ["gpt-4", "claude-2"], n=12, on_leak="flag")
    capsys.readouterr()
    assert main(["leaks", "leaky"]) == 0
    out = capsys.readouterr()
    rows = list(csv.DictReader(io.StringIO(out.out)))
    assert len(rows) == 24 and {r["handling"] for r in rows} == {"flagged"}
    assert {r["model"] for r in rows} == {"gpt-4", "claude-2"}
    assert "24 output(s) of 'leaky' name a model or vendor" in out.err
    assert main(["leaks", "leaky", "--format", "jsonl"]) == 0
    assert [json.loads(line)["sample_id"] for line in capsys.readouterr().out.splitlines()] == [
        r["sample_id"] for r in rows
    ]
    assert main(["leaks", "nope"]) == 1
    assert "no batch named 'nope'" in capsys.readouterr().err


def test_archive_restore_and_list_archived(engine: Engine, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _load(tmp_path, "b1", ["m1", "m2"])
    _load(tmp_path, "b2", ["m1", "m2"], n=4)
    capsys.readouterr()
    assert main(["archive-batch", "b1"]) == 0
    assert "Batch 'b1' is archived" in capsys.readouterr().out
    assert main(["list-batches"]) == 0
    assert [line.split()[1] for line in capsys.readouterr().out.splitlines()[1:]] == ["b2"]
    assert main(["list-batches", "--archived"]) == 0
    lines = capsys.readouterr().out.splitlines()[1:]
    assert [line.split()[1:4] for line in lines] == [["b1", "rating", "closed"]]
    assert main(["archive-batch", "b1"]) == 1
    assert "archived already" in capsys.readouterr().err
    assert main(["restore-batch", "b1"]) == 0
    assert "back in the lists, closed" in capsys.readouterr().out
    assert main(["list-batches", "--archived"]) == 0
    assert capsys.readouterr().out.strip() == "No archived batches."


def test_delete_batch_needs_yes_or_the_name(
    engine: Engine, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    _load(tmp_path, "b1", ["m1", "m2"])
    capsys.readouterr()
    monkeypatch.setattr("sys.stdin", io.StringIO(""))  # not a terminal: no prompt
    assert main(["delete-batch", "b1"]) == 1
    assert "add --confirm b1 (or --yes) to go on" in capsys.readouterr().err
    assert main(["delete-batch", "b1", "--confirm", "b"]) == 1
    assert capsys.readouterr().err.strip() == "error: --confirm: type the batch's name, 'b1', to delete it"
    assert [r.batch.name for r in batch_table(engine)] == ["b1"]

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.setattr("sys.stdin", Terminal("b2\n"))
    assert main(["delete-batch", "b1"]) == 1
    assert "type the batch's name, 'b1', to delete it" in capsys.readouterr().err
    monkeypatch.setattr("sys.stdin", Terminal("b1\n"))
    assert main(["delete-batch", "b1"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("This deletes batch 'b1' with all its ratings") and "Deleted batch 'b1'" in out
    assert batch_table(engine) == []
    _load(tmp_path, "b3", ["m1", "m2"])
    _load(tmp_path, "b4", ["m1", "m2"], n=4)
    assert main(["delete-batch", "b4", "--confirm", "b4"]) == 0
    capsys.readouterr()
    assert main(["delete-batch", "b3", "--yes"]) == 0
    assert capsys.readouterr().out.startswith("Deleted batch 'b3'")
    assert batch_table(engine) == []
