"""Loading a batch in the browser: the same checks and the same messages as `blind-review load-batch`."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import pytest
from sqlalchemy.engine import Engine

from reviewer_app.batches.catalog import batch_list
from reviewer_app.cli.main import main
from reviewer_app.people.people import add_reviewer
from tests.helpers import RATING_RUBRIC, make_records
from tests.support.apptest import app_for

GOOD = "".join(json.dumps(r) + "\n" for r in make_records(3, ["m-one", "m-two"])).encode()
BAD = GOOD + b'{"sample_id": "s9", "scenario": "qa", "prompt": "Q?", "model": "m-one"}\n{not json\n'


def _upload(at, files: list[tuple[str, bytes]], name: str) -> None:  # type: ignore[no-untyped-def]
    at.file_uploader[0].set_value([(n, data, "application/octet-stream") for n, data in files])
    at.file_uploader[1].set_value(("rubric.toml", RATING_RUBRIC.format(overlap=1).encode(), "application/toml"))
    next(t for t in at.text_input if t.label == "Batch name").input(name)
    next(b for b in at.button if b.label == "Check and load").click()
    at.run()


@pytest.fixture
def admin_link(engine: Engine) -> str:
    return add_reviewer(engine, "root", "admin")[1]


def test_upload_loads_a_batch(engine: Engine, admin_link: str) -> None:
    at = app_for(admin_link)
    at.run()
    _upload(at, [("batch.jsonl", GOOD)], "uploaded")
    assert not at.exception
    assert any(s.value.startswith("Loaded batch 'uploaded'") for s in at.success)
    assert [b.name for b in batch_list(engine)] == ["uploaded"]


def test_upload_errors_read_like_the_cli(
    engine: Engine, admin_link: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    Path("batch.jsonl").write_bytes(BAD)
    Path("rubric.toml").write_text(RATING_RUBRIC.format(overlap=1), encoding="utf-8")
    assert main(["load-batch", "batch.jsonl", "--rubric", "rubric.toml", "--name", "bad"]) == 1
    cli_message = capsys.readouterr().err.removeprefix("error: ").strip()
    assert "batch.jsonl:7: output: missing" in cli_message and "batch.jsonl:8: not valid JSON" in cli_message
    at = app_for(admin_link)
    at.run()
    _upload(at, [("batch.jsonl", BAD)], "bad")
    shown = at.error[0].value + "\n" + at.code[0].value
    # The same problems with the same file:line detail; only the last line is worded for the page.
    assert shown.strip() == cli_message.replace("Fix these and run the command again.", "Fix these and load again.")
    assert batch_list(engine) == []


def test_a_zip_brings_its_images(engine: Engine, admin_link: str) -> None:
    from PIL import Image

    png = io.BytesIO()
    Image.new("RGB", (8, 8), "red").save(png, format="PNG")
    records = make_records(2, ["m-one", "m-two"])
    for r in records:
        r["images"] = ["pics/red.png"]
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("set/batch.jsonl", "".join(json.dumps(r) + "\n" for r in records))
        z.writestr("set/pics/red.png", png.getvalue())
        z.writestr("../escape.jsonl", "{}")  # ignored: outside the upload folder
    at = app_for(admin_link)
    at.run()
    _upload(at, [("set.zip", archive.getvalue())], "zipped")
    assert any("1 image(s)" in c.value for c in at.code), [e.value for e in at.error]


def test_bad_fields_are_named_by_their_labels(engine: Engine, admin_link: str) -> None:
    at = app_for(admin_link)
    at.run()
    _upload(at, [("batch.jsonl", GOOD)], "taken")
    other = "".join(json.dumps(r) + "\n" for r in make_records(4, ["m-one", "m-two"])).encode()
    _upload(at, [("batch.jsonl", other)], "taken")
    assert at.error[0].value.startswith("Batch name: a batch named 'taken' already exists with different content")
    _upload(at, [("batch.jsonl", GOOD)], "  ")
    assert at.error[0].value == "Batch name: a batch needs a non-empty name"


def test_an_uploaded_batch_is_closed_unless_opened_and_takes_its_reviewers(engine: Engine, admin_link: str) -> None:
    """Issue 27, point 9, on the page: loaded closed by default, the summary says how to open it; with the
    box ticked and reviewers chosen it is open to them alone."""
    from reviewer_app.batches.audience import batch_audience

    add_reviewer(engine, "ann")
    add_reviewer(engine, "bob")
    at = app_for(admin_link)
    at.run()
    _upload(at, [("batch.jsonl", GOOD)], "later")
    assert "Batch 'later' is not open yet: nobody sees it until you open it (the Batches tab, Open batch)" in (
        at.code[0].value
    )
    assert batch_audience(engine, "later").status == "closed"
    other = GOOD.replace(b"m-one", b"m-three")  # other content: a second batch
    at.multiselect(key="load_reviewers").set_value(["ann"])  # the load form's (the Batches tab has one too)
    at.checkbox(key="load_open_now").check()
    _upload(at, [("batch.jsonl", other)], "now")
    assert "Batch 'now' is open to its reviewers: ann." in at.code[0].value
    audience = batch_audience(engine, "now")
    assert audience.status == "open" and audience.reviewers == ("ann",)
