"""Loads that must be refused or recognised: image bombs (too many pixels for their bytes), files with no
records, and a reload whose image bytes changed (not "already loaded")."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from PIL import Image
from sqlalchemy.engine import Engine

from reviewer_app.batches.catalog import batch_list
from reviewer_app.batches.images import DISPLAY_MAX_SIDE
from reviewer_app.batches.loading import load_batch
from reviewer_app.errors import BatchValidationError, ConfigError
from reviewer_app.people.people import add_reviewer
from reviewer_app.review.reviews import image_bytes, next_item
from reviewer_app.settings import max_image_pixels
from tests.helpers import RATING_RUBRIC, write_batch, write_rubric


def _with_image(folder: Path, name: str, batch_name: str = "batch.jsonl") -> Path:
    record = {"sample_id": "s1", "scenario": "qa", "prompt": "What is shown?", "model": "m1", "output": "A form."}
    return write_batch(folder, [{**record, "images": [name]}], batch_name)


@pytest.fixture(scope="module")
def bombs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 12000x12000 and a 20000x20000 PNG: one colour, so a few dozen kilobytes each."""
    folder = tmp_path_factory.mktemp("bombs")
    Image.new("1", (12000, 12000)).save(folder / "big.png")
    Image.new("1", (20000, 20000)).save(folder / "huge.png")
    return folder


@pytest.mark.parametrize(
    ("name", "said"),
    [
        ("big.png", "'big.png' is 12000x12000 pixels (144 megapixels), over the 50-megapixel limit"),
        ("huge.png", "'huge.png' has too many pixels (400 megapixels), over the 50-megapixel limit"),
    ],
)
def test_an_image_with_too_many_pixels_is_a_located_problem(
    sqlite_engine: Engine, bombs: Path, name: str, said: str
) -> None:
    batch = _with_image(bombs, name, name.replace(".png", ".jsonl"))
    rubric = write_rubric(bombs, RATING_RUBRIC.format(overlap=1))
    with pytest.raises(BatchValidationError) as err:
        load_batch(sqlite_engine, [batch], rubric, name="bomb", open_now=True)
    (problem,) = err.value.problems
    assert (problem.file, problem.line, problem.field) == (str(batch), 1, "images")
    assert problem.message.startswith(said) and "BLIND_REVIEW_MAX_IMAGE_PIXELS" in problem.message
    assert batch_list(sqlite_engine) == []


def test_the_pixel_limit_is_a_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    assert max_image_pixels() == 50_000_000
    monkeypatch.setenv("BLIND_REVIEW_MAX_IMAGE_PIXELS", "0.5")
    assert max_image_pixels() == 500_000
    for bad in ("lots", "0", "-3", "nan"):
        monkeypatch.setenv("BLIND_REVIEW_MAX_IMAGE_PIXELS", bad)
        with pytest.raises(ConfigError, match="BLIND_REVIEW_MAX_IMAGE_PIXELS"):
            max_image_pixels()


def test_a_large_image_within_the_limit_is_stored_and_served_display_sized(engine: Engine, tmp_path: Path) -> None:
    Image.new("RGB", (3000, 1000), "navy").save(tmp_path / "wide.png")
    summary = load_batch(
        engine,
        [_with_image(tmp_path, "wide.png")],
        write_rubric(tmp_path, RATING_RUBRIC.format(overlap=1)),
        name="w",
        open_now=True,
    )
    ann = add_reviewer(engine, "ann")[0]
    view = next_item(engine, summary.batch_id, ann.id)
    assert view is not None
    with Image.open(io.BytesIO(image_bytes(view.images[0]))) as served:
        assert served.format == "PNG" and served.size == (DISPLAY_MAX_SIDE, 683)


def test_a_file_with_no_records_is_refused(sqlite_engine: Engine, tmp_path: Path) -> None:
    bom_only = tmp_path / "bom.jsonl"
    bom_only.write_bytes(b"\xef\xbb\xbf\n\n  \n")
    header_only = tmp_path / "header.csv"
    header_only.write_text("sample_id,scenario,prompt,model,output\n", encoding="utf-8")
    rubric = write_rubric(tmp_path, RATING_RUBRIC.format(overlap=1))
    with pytest.raises(BatchValidationError) as err:
        load_batch(sqlite_engine, [bom_only, header_only], rubric, name="empty", open_now=True)
    assert [(p.file, p.message.split(";")[0]) for p in err.value.problems] == [
        (str(bom_only), "is empty"),
        (str(header_only), "has no records (only blank lines, a header or a byte-order mark)"),
    ]
    assert batch_list(sqlite_engine) == []


def test_a_reload_with_changed_image_bytes_is_new_content(engine: Engine, tmp_path: Path) -> None:
    Image.new("RGB", (40, 30), "white").save(tmp_path / "scan.png")
    batch = _with_image(tmp_path, "scan.png")
    rubric = write_rubric(tmp_path, RATING_RUBRIC.format(overlap=1))
    first = load_batch(engine, [batch], rubric, name="scans", open_now=True)
    assert load_batch(engine, [batch], rubric, name="scans", open_now=True).already_loaded  # same bytes: recognised
    Image.new("RGB", (40, 30), "black").save(tmp_path / "scan.png")  # same file names, other image
    with pytest.raises(BatchValidationError, match="already exists with different content"):
        load_batch(engine, [batch], rubric, name="scans", open_now=True)
    second = load_batch(engine, [batch], rubric, name="scans-2", open_now=True)
    assert not second.already_loaded and second.batch_id != first.batch_id


def test_a_batch_whose_text_mentions_images_reloads_as_already_loaded(engine: Engine, tmp_path: Path) -> None:
    record = {"sample_id": "s1", "scenario": "qa", "prompt": 'Open the "images" tab.', "model": "m1", "output": "ok"}
    batch = write_batch(tmp_path, [record])
    rubric = write_rubric(tmp_path, RATING_RUBRIC.format(overlap=1))
    first = load_batch(engine, [batch], rubric, name="mentions", open_now=True)
    again = load_batch(engine, [batch], rubric, name="mentions", open_now=True)
    assert again.already_loaded and again.batch_id == first.batch_id
