"""Batch housekeeping: deleting a batch with everything that is its own, archiving it out of the lists and
out of review, the identity-leak list in full, and uploads that share a name."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func
from sqlalchemy.engine import Engine
from sqlmodel import SQLModel, select

from reviewer_app.batches.admin import (
    DeleteConfirmationError,
    archive_batch,
    batch_table,
    delete_batch,
    restore_batch,
)
from reviewer_app.batches.leak_list import batch_leaks, leaks_for, write_leaks
from reviewer_app.batches.loading import load_batch
from reviewer_app.batches.uploads import Upload, load_uploads, unpack_uploads
from reviewer_app.errors import AuthError, BatchClosedError, BatchValidationError, ConflictError
from reviewer_app.people.people import add_reviewer
from reviewer_app.review.assignment import assign
from reviewer_app.review.reviews import next_item, submit_review
from reviewer_app.settings import data_dir
from storage.engine import read_session
from storage.models import Batch, Model
from tests.helpers import RATING_RUBRIC, make_records, write_batch, write_rubric

ANSWER = {"correctness": "4", "follows_format": "1"}


def _load(engine: Engine, folder: Path, name: str, records: list[dict[str, Any]], **kw: Any) -> int:
    summary = load_batch(
        engine,
        [write_batch(folder / name, records)],
        write_rubric(folder / name, RATING_RUBRIC.format(overlap=1)),
        name=name,
        **{"open_now": True, **kw},
    )
    return summary.batch_id


def _rows_per_table(engine: Engine, batch_id: int) -> dict[str, int]:
    with read_session(engine) as session:
        return {
            t.name: int(session.exec(select(func.count()).select_from(t).where(t.c.batch_id == batch_id)).one())
            for t in SQLModel.metadata.sorted_tables
            if "batch_id" in t.columns
        }


def _with_images(records: list[dict[str, Any]], folder: Path, picture: str) -> list[dict[str, Any]]:
    from PIL import Image

    folder.mkdir(parents=True, exist_ok=True)
    Image.new("RGB", (4, 4), picture).save(folder / f"{picture}.png")
    return [{**r, "images": [f"{picture}.png"]} for r in records]


def test_delete_takes_the_batch_with_everything_of_its_own_and_nothing_else(engine: Engine, tmp_path: Path) -> None:
    keep = _load(engine, tmp_path, "keep", _with_images(make_records(3, ["m-one", "m-two"]), tmp_path / "keep", "red"))
    gone_records = make_records(4, ["m-one", "m-three"])
    gone_records = _with_images(gone_records[:4], tmp_path / "gone", "red") + _with_images(
        gone_records[4:], tmp_path / "gone", "blue"
    )
    gone = _load(engine, tmp_path, "gone", gone_records)
    add_reviewer(engine, "ann")
    assign(engine, "gone", ["ann"])
    assign(engine, "keep", ["ann"])
    for batch_id in (keep, gone):
        view = next_item(engine, batch_id, 1)
        assert view is not None
        submit_review(engine, 1, view.assignment_id, ANSWER)
    before_keep = _rows_per_table(engine, keep)
    images = sorted(p.name for p in (data_dir() / "images").iterdir())
    assert len(images) == 2  # red (both batches) and blue (only "gone")

    with pytest.raises(DeleteConfirmationError, match="type the batch's name, 'gone', to delete it"):
        delete_batch(engine, "gone", confirm="keep")
    reviewer = add_reviewer(engine, "rita")[0]
    with pytest.raises(AuthError):
        delete_batch(engine, "gone", confirm="gone", by=reviewer)
    assert _rows_per_table(engine, gone)["rating"] == 2

    summary = delete_batch(engine, "gone", confirm="gone")
    assert summary.rows["rating"] == 2 and summary.rows["output"] == 8 and summary.images == 1
    assert "with 2 rating(s)" in summary.lines()[0]
    assert set(_rows_per_table(engine, gone).values()) == {0}
    assert _rows_per_table(engine, keep) == before_keep
    with read_session(engine) as session:
        assert [b.name for b in session.exec(select(Batch))] == ["keep"]
        assert "m-three" in {m.name for m in session.exec(select(Model))}  # models are shared names, kept
    left = sorted(p.name for p in (data_dir() / "images").iterdir())
    assert len(left) == 1 and left[0] in images  # the red picture "keep" still shows


def test_an_archived_batch_leaves_the_lists_takes_no_ratings_and_comes_back(engine: Engine, tmp_path: Path) -> None:
    batch_id = _load(engine, tmp_path, "oops", make_records(2, ["m-one", "m-two"]))
    _load(engine, tmp_path, "fine", make_records(2, ["m-one", "m-two"], scenarios=("other",)))
    add_reviewer(engine, "ann")
    view = next_item(engine, batch_id, 1)
    assert view is not None
    archive_batch(engine, "oops")
    assert [r.batch.name for r in batch_table(engine)] == ["fine"]
    assert [r.batch.name for r in batch_table(engine, archived=True)] == ["oops"]
    with pytest.raises(BatchClosedError):
        submit_review(engine, 1, view.assignment_id, ANSWER)
    with pytest.raises(BatchClosedError):
        next_item(engine, batch_id, 1)
    with pytest.raises(ConflictError, match="archived already"):
        archive_batch(engine, "oops")
    restored = restore_batch(engine, "oops")
    assert restored.status == "closed" and restored.archived_at is None
    assert [r.batch.name for r in batch_table(engine)] == ["oops", "fine"]
    with pytest.raises(ConflictError, match="is not archived"):
        restore_batch(engine, "oops")


def test_the_batches_table_counts_outputs_per_model(engine: Engine, tmp_path: Path) -> None:
    records = make_records(3, ["m-one", "m-two"]) + make_records(5, ["m-three"])[3:]
    _load(engine, tmp_path, "lopsided", records)
    (row,) = batch_table(engine)
    assert row.per_model == {"m-one": 3, "m-three": 2, "m-two": 3}
    assert row.models_text == "m-one 3, m-three 2, m-two 3"


def _leaky(n: int) -> list[dict[str, Any]]:
    records = make_records(n, ["gpt-4", "claude-2"])
    for r in records:
        r["output"] = f"As {r['model']}, I answer {r['sample_id']}."
    return records


def test_the_leak_list_has_every_flagged_output_and_only_admins_read_it(engine: Engine, tmp_path: Path) -> None:
    records = _leaky(15) + [{**make_records(1, ["gpt-4"])[0], "sample_id": "=cmd", "output": "=HYPERLINK gpt-4"}]
    batch_id = _load(engine, tmp_path, "leaky", records, on_leak="flag")
    entries = batch_leaks(engine, "leaky")
    assert len(entries) == 31  # more than the 20 the load summary shows
    assert {(e.model, e.handling) for e in entries} == {("gpt-4", "flagged"), ("claude-2", "flagged")}
    assert {e.words for e in entries} == {"GPT-4", "Claude 2"}
    admin = add_reviewer(engine, "root", "admin")[0]
    assert leaks_for(engine, admin, batch_id) == entries
    for role in ("reviewer", "lead"):
        with pytest.raises(AuthError):
            leaks_for(engine, add_reviewer(engine, f"x-{role}", role)[0], batch_id)
    with pytest.raises(AuthError):
        leaks_for(engine, None, batch_id)

    out = io.StringIO()
    write_leaks(entries, "csv", out)
    lines = out.getvalue().splitlines()
    assert lines[0] == "scenario,sample_id,model,repeat,words,handling" and len(lines) == 32
    assert any(line.split(",")[1] == "'=cmd" for line in lines)  # a formula cell is made inert
    out = io.StringIO()
    write_leaks(entries, "jsonl", out)
    assert [json.loads(line)["sample_id"] for line in out.getvalue().splitlines()] == [e.sample_id for e in entries]
    with pytest.raises(BatchValidationError):
        write_leaks(entries, "xml", io.StringIO())


def test_masked_and_excluded_outputs_are_listed_as_such(engine: Engine, tmp_path: Path) -> None:
    _load(engine, tmp_path, "masked", _leaky(2), on_leak="mask")
    _load(engine, tmp_path, "excluded", _leaky(3), on_leak="exclude")
    assert {e.handling for e in batch_leaks(engine, "masked")} == {"masked"}
    assert {e.handling for e in batch_leaks(engine, "excluded")} == {"excluded"}


ALPACA = Path(__file__).resolve().parents[1] / "fixtures" / "alpaca_eval"


def test_uploads_with_the_same_name_are_all_kept(engine: Engine, tmp_path: Path) -> None:
    files = [
        Upload("model_outputs.json", (ALPACA / m / "model_outputs.json").read_bytes())
        for m in ("claude-2", "vicuna-13b")
    ]
    rubric = Upload("rubric.toml", RATING_RUBRIC.format(overlap=1).encode())
    loaded = load_uploads(engine, files, rubric, name="alpaca", on_leak="flag")
    assert loaded.per_model == {"claude-2": 9, "vicuna-13b": 9}
    assert loaded.renamed == [("model_outputs.json", "model_outputs (2).json")]
    text = "\n".join(loaded.lines())
    assert "18 outputs from 2 model(s)" in text and "outputs per model: claude-2 9, vicuna-13b 9" in text
    assert "'model_outputs.json' was read as 'model_outputs (2).json'" in text


def _zip(members: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for name, data in members.items():
            z.writestr(name, data)
    return buf.getvalue()


def test_a_zip_that_would_overwrite_an_upload_gets_a_folder_of_its_own(tmp_path: Path) -> None:
    one = "".join(json.dumps(r) + "\n" for r in make_records(1, ["a"])).encode()
    two = "".join(json.dumps(r) + "\n" for r in make_records(1, ["b"])).encode()
    unpacked = unpack_uploads(
        tmp_path, [Upload("batch.jsonl", one), Upload("set.zip", _zip({"batch.jsonl": two, "pics/x.png": b"x"}))]
    )
    assert [p.relative_to(tmp_path.resolve()).as_posix() for p in unpacked.paths] == ["batch.jsonl", "set/batch.jsonl"]
    assert unpacked.renamed == [("set.zip", "set/")]
    assert (tmp_path / "set" / "pics" / "x.png").exists()
    assert (tmp_path / "batch.jsonl").read_bytes() == one


def test_a_zip_with_two_entries_of_one_name_is_refused(tmp_path: Path) -> None:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z, pytest.warns(UserWarning, match="Duplicate name"):
        z.writestr("batch.jsonl", b"{}")
        z.writestr("batch.jsonl", b"{}")
    with pytest.raises(BatchValidationError, match="holds two entries named batch.jsonl"):
        unpack_uploads(tmp_path, [Upload("set.zip", buf.getvalue())])
