"""Uploads (the Admin page): unpacked inside their folder only, then loaded like `blind-review load-batch`."""

from __future__ import annotations

import io
import json
import stat
import zipfile
from pathlib import Path

import pytest
from sqlalchemy.engine import Engine

from reviewer_app.batches.catalog import batch_list
from reviewer_app.batches.uploads import Upload, extract_uploads, load_uploaded_batch
from reviewer_app.errors import BatchValidationError, RubricError
from tests.helpers import RATING_RUBRIC, make_records

GOOD = "".join(json.dumps(r) + "\n" for r in make_records(2, ["m-one", "m-two"])).encode()
RUBRIC = Upload("rubric.toml", RATING_RUBRIC.format(overlap=1).encode())


def zipped(members: dict[str, bytes], links: dict[str, str] | None = None) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)
        for name, target in (links or {}).items():
            info = zipfile.ZipInfo(name)
            info.external_attr = (stat.S_IFLNK | 0o777) << 16
            archive.writestr(info, target)
    return buf.getvalue()


def test_a_zip_cannot_write_outside_its_folder(tmp_path: Path) -> None:
    folder = tmp_path / "upload"
    folder.mkdir()
    archive = zipped(
        {
            "set/batch.jsonl": GOOD,
            "../escape.jsonl": b"{}",
            "/abs/evil.jsonl": b"{}",
            "set/../../up.jsonl": b"{}",
            "..\\win.jsonl": b"{}",
        },
        links={"set/link.jsonl": "/etc/passwd"},
    )
    paths = extract_uploads(folder, [Upload("set.zip", archive)])
    assert paths == [(folder / "set" / "batch.jsonl").resolve()]
    written = sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file())
    assert written == ["set/batch.jsonl"]
    assert not (tmp_path / "escape.jsonl").exists() and not (tmp_path / "up.jsonl").exists()


def test_plain_uploads_keep_only_their_file_name(tmp_path: Path) -> None:
    paths = extract_uploads(tmp_path, [Upload("../../batch.jsonl", GOOD), Upload("C:\\data\\more.csv", b"x")])
    assert [p.name for p in paths] == ["batch.jsonl", "more.csv"]
    assert all(p.parent == tmp_path.resolve() for p in paths)


def test_no_batch_file_or_a_broken_zip_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(BatchValidationError, match="no .jsonl, .csv or .json batch file among the uploaded files"):
        extract_uploads(tmp_path, [Upload("picture.png", b"\x89PNG")])
    with pytest.raises(BatchValidationError, match="set.zip: is not a readable .zip file"):
        extract_uploads(tmp_path, [Upload("set.zip", b"not a zip")])


def test_a_zip_that_unpacks_too_big_is_refused_before_unpacking(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BLIND_REVIEW_MAX_UNPACKED_MB", "0.0001")
    with pytest.raises(BatchValidationError, match="would unpack to more than"):
        extract_uploads(tmp_path, [Upload("set.zip", zipped({"batch.jsonl": b"x" * 200}))])
    assert list(tmp_path.iterdir()) == []


def test_uploaded_batch_loads_and_its_errors_name_the_uploaded_files(engine: Engine) -> None:
    summary = load_uploaded_batch(engine, [Upload("batch.jsonl", GOOD)], RUBRIC, name="up")
    assert summary.outputs == 4 and [b.name for b in batch_list(engine)] == ["up"]
    bad = GOOD + b"{not json\n"
    with pytest.raises(BatchValidationError) as err:
        load_uploaded_batch(engine, [Upload("set.zip", zipped({"set/batch.jsonl": bad}))], RUBRIC, name="bad")
    assert "  set/batch.jsonl:5: not valid JSON" in str(err.value)
    assert "br-upload-" not in str(err.value) and all("br-upload-" not in p.file for p in err.value.problems)


def test_a_rubric_that_is_not_utf8_is_a_rubric_problem(engine: Engine) -> None:
    with pytest.raises(RubricError, match="rubric.toml:2: is not UTF-8 text; save it as UTF-8"):
        load_uploaded_batch(engine, [Upload("batch.jsonl", GOOD)], Upload("rubric.toml", b"a = 1\n\xff"), name="x")
    assert batch_list(engine) == []
