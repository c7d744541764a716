"""The files an export writes: Parquet reads back as the JSONL records, the hf folder is what `datasets` loads
(its data file where the card's front matter says, the card's features the file's columns), the command line
writes them and says what it did, and every mistake a lead can make gets a message saying what to do."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml
from sqlalchemy.engine import Engine

from reviewer_app.cli.main import main
from reviewer_app.errors import ExportError, NotFoundError
from reviewer_app.exports import export_preferences
from tests.exports.builders import pairwise_batch, rating_batch


@pytest.fixture(autouse=True)
def app_logger() -> Iterator[None]:
    """main() configures the process-wide ``reviewer_app`` logger; put it back for the tests that follow."""
    logger = logging.getLogger("reviewer_app")
    level, handlers = logger.level, list(logger.handlers)
    yield
    logger.setLevel(level)
    logger.handlers[:] = handlers


def jsonl(path: Path) -> list[dict[str, Any]]:
    return [orjson.loads(line) for line in path.read_bytes().splitlines()]


def front_matter(card: str) -> dict[str, Any]:
    assert card.startswith("---\n")
    parsed: dict[str, Any] = yaml.safe_load(card.split("---\n")[1])
    return parsed


@pytest.mark.parametrize("ties", ["leave-out", "mark"])
def test_parquet_reads_back_as_the_jsonl_records(engine: Engine, tmp_path: Path, ties: str) -> None:
    pairwise_batch(engine, tmp_path)
    rating_batch(engine, tmp_path)  # conversations: the prompt is a list of message structs
    for batch in ("pairs", "scores"):
        export_preferences(engine, batch, tmp_path / "p.jsonl", ties=ties)
        export_preferences(engine, batch, tmp_path / "p.parquet", fmt="parquet", ties=ties)
        table = pq.read_table(tmp_path / "p.parquet")
        assert table.to_pylist() == jsonl(tmp_path / "p.jsonl") and table.num_rows > 0
        assert str(table.schema.field("agreement").type) == "double"
        assert str(table.schema.field("chosen_votes").type) == "int64"
    prompt = table.schema.field("prompt").type
    assert pa.types.is_list(prompt) and [f.name for f in prompt.value_type] == ["role", "content"]


def test_an_export_with_no_records_keeps_its_columns_and_types(engine: Engine, tmp_path: Path) -> None:
    pairwise_batch(engine, tmp_path)
    summary = export_preferences(engine, "pairs", tmp_path / "none.parquet", fmt="parquet", min_agreement=1.0)
    table = pq.read_table(tmp_path / "none.parquet")
    assert table.num_rows == summary.records == 1  # s3, all three for beta
    summary = export_preferences(engine, "pairs", tmp_path / "none.parquet", fmt="parquet", ties="mark",
                                 min_agreement=1.0)  # fmt: skip
    assert summary.records == 1 and summary.below_agreement == 3
    export_preferences(engine, "pairs", tmp_path / "empty.jsonl", source="pairwise", min_agreement=1.0)
    assert len(jsonl(tmp_path / "empty.jsonl")) == 1


def test_the_hf_folder_is_what_datasets_loads(engine: Engine, tmp_path: Path) -> None:
    pairwise_batch(engine, tmp_path)
    folder = tmp_path / "hf"
    summary = export_preferences(engine, "pairs", folder, fmt="hf", ties="mark")
    assert sorted(str(p.relative_to(folder)) for p in folder.rglob("*")) == [
        "README.md",
        "data",
        "data/train-00000-of-00001.parquet",
    ]
    table = pq.read_table(folder / "data" / "train-00000-of-00001.parquet")
    assert table.num_rows == summary.records == 4
    card = (folder / "README.md").read_text(encoding="utf-8")
    meta = front_matter(card)
    assert meta["license"] == "other"
    assert meta["configs"] == [
        {"config_name": "default", "data_files": [{"split": "train", "path": "data/train-00000-of-00001.parquet"}]}
    ]
    features = meta["dataset_info"]["features"]
    assert [f["name"] for f in features] == table.column_names
    assert {f["name"]: f["dtype"] for f in features}["agreement"] == "float64"
    assert {f["name"]: f["dtype"] for f in features}["tie"] == "bool"
    assert meta["dataset_info"]["splits"] == [{"name": "train", "num_examples": 4}]
    assert "Model names are revealed" in card and "batch `pairs`" in card
    assert "are kept with `tie: true`" in card and "records: 4 (2 tie(s) kept" in card
    assert "models: alpha, beta" in card
    # An earlier export in the folder is replaced; with the conversations' prompts, a list of message fields.
    rating_batch(engine, tmp_path)
    export_preferences(engine, "scores", folder, fmt="hf")
    meta = front_matter((folder / "README.md").read_text(encoding="utf-8"))
    prompt = meta["dataset_info"]["features"][0]
    assert prompt == {
        "name": "prompt",
        "list": [{"name": "role", "dtype": "string"}, {"name": "content", "dtype": "string"}],
    }
    assert pq.read_table(folder / "data" / "train-00000-of-00001.parquet").num_rows == 5  # the tie left out


def test_mistakes_get_a_message_saying_what_to_do(engine: Engine, tmp_path: Path) -> None:
    pairwise_batch(engine, tmp_path)
    rating_batch(engine, tmp_path, name="unrated", rated=False)
    with pytest.raises(NotFoundError, match="no batch named 'nope'.*list-batches"):
        export_preferences(engine, "nope", tmp_path / "p.jsonl")
    with pytest.raises(ExportError, match="'unrated' has no panel ratings yet.*import-ratings"):
        export_preferences(engine, "unrated", tmp_path / "p.jsonl")
    with pytest.raises(ExportError, match="from: batch 'pairs' is a pairwise batch.*use --from pairwise"):
        export_preferences(engine, "pairs", tmp_path / "p.jsonl", source="ratings")
    with pytest.raises(ExportError, match="min_agreement: must be a share of the panel from 0 to 1"):
        export_preferences(engine, "pairs", tmp_path / "p.jsonl", min_agreement=1.5)
    with pytest.raises(ExportError, match=r"is a folder; give a file to write"):
        export_preferences(engine, "pairs", tmp_path, fmt="parquet")
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("x")
    with pytest.raises(ExportError, match="is a file; --format hf writes a folder"):
        export_preferences(engine, "pairs", mine / "notes.txt", fmt="hf")
    with pytest.raises(ExportError, match=r"mine holds other files \(notes.txt\); give a new or empty folder"):
        export_preferences(engine, "pairs", mine, fmt="hf")
    assert not (tmp_path / "p.jsonl").exists() and sorted(p.name for p in mine.iterdir()) == ["notes.txt"]


def test_the_command_writes_each_format_and_names_bad_options_by_flag(
    engine: Engine, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pairwise_batch(engine, tmp_path)
    out = tmp_path / "prefs.jsonl"
    assert main(["export-preferences", "pairs", "--out", str(out), "--ties", "mark", "--min-agreement", "0.6"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines == [
        f"Wrote 3 preference record(s) from batch 'pairs' (pairwise) to {out} (jsonl); 2 tie(s) marked tie: true.",
        "Left out 1 below --min-agreement 0.6.",
        "Unblinded: every record names its models (chosen_model, rejected_model).",
    ]
    assert [r["sample_id"] for r in jsonl(out)] == ["s0", "s2", "s3"]
    assert main(["export-preferences", "pairs", "--out", str(tmp_path / "p.parquet"), "--format", "parquet"]) == 0
    assert pq.read_table(tmp_path / "p.parquet").num_rows == 2
    assert main(["export-preferences", "pairs", "--out", str(tmp_path / "hf"), "--format", "hf", "--from", "auto"]) == 0
    assert (tmp_path / "hf" / "README.md").is_file()
    capsys.readouterr()
    assert main(["export-preferences", "pairs", "--out", str(out), "--min-agreement", "-1"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: --min-agreement: must be a share of the panel from 0 to 1") and "Traceback" not in err
    assert main(["export-preferences", "pairs", "--out", str(out), "--from", "ratings"]) == 1
    assert capsys.readouterr().err.startswith("error: --from: batch 'pairs' is a pairwise batch")
