"""generate's SAMPLES reader, build-eval-set's log reader and load-batch's reader apply one set of rules
(reviewer_app.domain.input_rules): the same bad input is refused by each, in the same words."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from reviewer_app.batches.checked_batch import read_batch_files
from reviewer_app.errors import ValidationError
from reviewer_app.generation.eval_set import build_eval_set
from reviewer_app.generation.samples_file import build_messages, read_samples


def png() -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (2, 2), "white").save(buffer, "PNG")
    return buffer.getvalue()


def write_jsonl(path: Path, records: list[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


SAMPLE = {"sample_id": "s1", "scenario": "qa", "prompt": "What is shown?"}
OUTPUT = {"model": "m", "output": "A dot."}


def refusals(error: pytest.ExceptionInfo[ValidationError]) -> set[tuple[int | None, str | None, str]]:
    return {(p.line, p.field, p.message) for p in error.value.problems}


@pytest.mark.parametrize(
    ("change", "field", "message"),
    [
        (
            {"images": ["../outside.png"]},
            "images",
            "'../outside.png' points outside this file's folder; copy the image next to this file",
        ),
        ({"images": ["nowhere.png"]}, "images", "'nowhere.png' does not exist next to this file"),
        ({"images": ["notes.png"]}, "images", "'notes.png' is not a readable PNG, JPEG, GIF or WebP image"),
        (
            {"prompt": [{"role": "wizard", "content": "x"}]},
            "prompt[0].role",
            "must be system, user, assistant or tool, not 'wizard'",
        ),
        ({"prompt": [{"role": "user"}]}, "prompt[0]", 'each message needs a text "role" and a text "content"'),
        ({"prompt": "  "}, "prompt", "is only whitespace"),
        ({"sample_id": 1.5}, "sample_id", "must be text, not float"),
        ({"scenario": ""}, "scenario", "missing"),
        ({"reference": 3}, "reference", "must be text"),
    ],
)
def test_generate_and_load_batch_refuse_alike(tmp_path: Path, change: dict[str, Any], field: str, message: str) -> None:
    (tmp_path / "outside.png").write_bytes(png())
    folder = tmp_path / "work"
    folder.mkdir()
    (folder / "notes.png").write_text("not an image", encoding="utf-8")
    samples = write_jsonl(folder / "samples.jsonl", [dict(SAMPLE, **change)])
    batch = write_jsonl(folder / "batch.jsonl", [dict(SAMPLE, **OUTPUT, **change)])
    with pytest.raises(ValidationError) as by_generate:
        read_samples(samples)
    with pytest.raises(ValidationError) as by_load_batch:
        read_batch_files([batch])
    assert refusals(by_generate) == refusals(by_load_batch) == {(1, field, message)}


def test_build_eval_set_refuses_an_image_outside_the_logs_folder_in_the_same_words(tmp_path: Path) -> None:
    (tmp_path / "outside.png").write_bytes(png())
    logs = write_jsonl(
        tmp_path / "logs" / "logs.jsonl", [{"prompt": "hi", "scenario": "a", "images": ["../outside.png"]}]
    )
    with pytest.raises(ValidationError) as error:
        build_eval_set(logs, tmp_path / "out" / "samples.jsonl", n=1)
    assert refusals(error) == {
        (1, "images", "'../outside.png' points outside this file's folder; copy the image next to this file")
    }


def test_inline_images_in_logs_are_checked_and_named_by_content(tmp_path: Path) -> None:
    import base64

    def message(data: bytes, mime: str) -> dict[str, Any]:
        url = f"data:{mime};base64,{base64.b64encode(data).decode()}"
        return {
            "role": "user",
            "content": [{"type": "text", "text": "look"}, {"type": "image_url", "image_url": {"url": url}}],
        }

    good = write_jsonl(tmp_path / "good.jsonl", [{"messages": [message(png(), "image/jpeg")], "scenario": "v"}])
    out = tmp_path / "eval" / "samples.jsonl"
    build_eval_set(good, out, n=1)
    (sample,) = read_samples(out)
    assert sample.images[0].endswith(".png")  # the data URL said JPEG; the bytes are PNG
    bad = write_jsonl(tmp_path / "bad.jsonl", [{"messages": [message(b"garbage", "image/png")], "scenario": "v"}])
    with pytest.raises(ValidationError) as error:
        build_eval_set(bad, tmp_path / "eval2" / "samples.jsonl", n=1)
    assert refusals(error) == {
        (1, "messages", "an inline image (data URL) is not a readable PNG, JPEG, GIF or WebP image")
    }


def test_samples_accept_what_load_batch_accepts(tmp_path: Path) -> None:
    (tmp_path / "img").mkdir()
    (tmp_path / "img" / "dot.webp").write_bytes(png())  # type by content, not by name
    record = dict(
        SAMPLE,
        sample_id=7,
        prompt=[{"role": "system", "content": "Be brief."}, {"role": "user", "content": "hi", "name": "ann"}],
        images=["img/dot.webp"],
        reference="",
    )
    (sample,) = read_samples(write_jsonl(tmp_path / "samples.jsonl", [record]))
    (loaded,) = read_batch_files([write_jsonl(tmp_path / "batch.jsonl", [dict(record, **OUTPUT)])])
    assert sample.sample_id == loaded.sample_id == "7"
    assert sample.prompt == loaded.prompt and sample.reference == loaded.reference == ""
    messages = build_messages(sample, tmp_path)
    assert messages[1]["content"][1]["image_url"]["url"].startswith("data:image/png;base64,")


def test_unknown_sample_fields_and_reused_ids_are_refused(tmp_path: Path) -> None:
    samples = write_jsonl(tmp_path / "samples.jsonl", [SAMPLE, dict(SAMPLE, refrence="typo")])
    with pytest.raises(ValidationError) as error:
        read_samples(samples)
    assert refusals(error) == {
        (2, "refrence", "unknown field (known: sample_id, scenario, prompt, reference, criteria, images, checks)"),
        (2, "sample_id", "'s1' already used on line 1"),
    }


def test_generate_refuses_an_image_outside_the_samples_folder_before_any_request(tmp_path: Path) -> None:
    from reviewer_app.generation.runner import generate_batch
    from reviewer_app.generation.specs import SamplingParams, parse_model_spec

    (tmp_path / "outside.png").write_bytes(png())
    samples = write_jsonl(tmp_path / "work" / "samples.jsonl", [dict(SAMPLE, images=["../outside.png"])])
    out = tmp_path / "work" / "batch.jsonl"
    with pytest.raises(ValidationError) as error:  # nothing listens on port 9: no request is made
        generate_batch(samples, out, [parse_model_spec("m=http://127.0.0.1:9/v1")], params=SamplingParams())
    assert "samples.jsonl:1: images: '../outside.png' points outside this file's folder" in str(error.value)
    assert not out.exists() and not (tmp_path / "work" / "images").exists()
