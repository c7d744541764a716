"""The input rules shared by load-batch, generate and build-eval-set, on their own."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image

from reviewer_app.domain.input_rules import (
    FIELD_NAMES,
    ROLES,
    SAMPLE_FIELDS,
    Flaw,
    check_image,
    check_image_data,
    id_problem,
    prompt_flaw,
    record_flaws,
    record_passes,
    role_problem,
)

MB = 1024 * 1024


def image_bytes(kind: str, size: tuple[int, int] = (3, 2)) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", size, "white").save(buffer, kind)
    return buffer.getvalue()


def good_record(**changes: Any) -> dict[str, Any]:
    record: dict[str, Any] = {"sample_id": "s1", "scenario": "qa", "prompt": "Why?", "model": "m", "output": "So."}
    record.update(changes)
    return record


@pytest.mark.parametrize("role", ROLES)
def test_every_chat_role_is_accepted(role: str) -> None:
    assert role_problem(role) is None


@pytest.mark.parametrize("role", ["wizard", "User", "", None, 3])
def test_other_roles_are_refused_by_name(role: Any) -> None:
    assert role_problem(role) == f"must be system, user, assistant or tool, not {role!r}"


@pytest.mark.parametrize(
    ("prompt", "expected"),
    [
        ("Extract the total.", None),
        ([{"role": "user", "content": "hi"}], None),
        ([{"role": "system", "content": "Be brief."}, {"role": "user", "content": "hi", "name": "ann"}], None),
        ("", Flaw("", "missing")),
        ("   ", Flaw("", "is only whitespace")),
        ([], Flaw("", 'must be text or a non-empty list of messages {"role": ..., "content": ...}')),
        ({"x": 1}, Flaw("", 'must be text or a non-empty list of messages {"role": ..., "content": ...}')),
        (
            [{"role": "user", "content": "hi"}, {"role": "user"}],
            Flaw("[1]", 'each message needs a text "role" and a text "content"'),
        ),
        ([{"role": "user", "content": 5}], Flaw("[0]", 'each message needs a text "role" and a text "content"')),
        (
            [{"role": "wizard", "content": "x"}],
            Flaw("[0].role", "must be system, user, assistant or tool, not 'wizard'"),
        ),
        (
            [{"role": "system", "content": "Be brief."}],
            Flaw("", 'has no "user" message; a conversation needs at least one'),
        ),
    ],
)
def test_prompt_shape(prompt: Any, expected: Flaw | None) -> None:
    assert prompt_flaw(prompt) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("inv-017", None),
        (17, None),
        ("", "missing"),
        (" \t", "is only whitespace"),
        (True, "must be text, not bool"),
        (1.5, "must be text, not float"),
        (["a"], "must be text, not list"),
    ],
)
def test_sample_ids_and_scenarios(value: Any, expected: str | None) -> None:
    assert id_problem(value) == expected


def test_record_flaws_locate_each_problem() -> None:
    record = good_record(
        model=None,
        output=42,
        prompt=[{"role": "bot", "content": "x"}],
        repeat=-1,
        metadata=[],
        images="a.png",
        modle="typo",
    )
    assert record_flaws(record) == [
        ("prompt[0].role", "must be system, user, assistant or tool, not 'bot'"),
        ("model", "missing"),
        ("output", "must be text, not int"),
        ("images", "must be a list of image paths relative to this file"),
        ("metadata", "must be an object"),
        ("repeat", "must be a whole number >= 0, not -1"),
        ("modle", 'unknown field; put extra information under "metadata" (known: ' + ", ".join(FIELD_NAMES) + ")"),
    ]


def test_samples_have_the_record_fields_without_the_model_ones() -> None:
    assert [rule.name for rule in SAMPLE_FIELDS] == [
        "sample_id",
        "scenario",
        "prompt",
        "reference",
        "criteria",
        "images",
        "checks",
    ]
    assert record_flaws({"sample_id": "s", "scenario": "qa", "prompt": "hi", "model": "m"}, SAMPLE_FIELDS) == [
        ("model", "unknown field (known: sample_id, scenario, prompt, reference, criteria, images, checks)")
    ]


VALUES = st.one_of(
    st.none(),
    st.sampled_from(["", " ", "text", "user"]),
    st.integers(-2, 3),
    st.booleans(),
    st.floats(allow_nan=False, width=16),
    st.just({}),
    st.just({"latency_ms": 3}),
    st.just([]),
    st.just(["a.png"]),
    st.lists(
        st.fixed_dictionaries(
            {"role": st.sampled_from(["user", "system", "robot", 1]), "content": st.sampled_from(["hi", "", 2])}
        ),
        max_size=3,
    ),
)


@settings(max_examples=400, deadline=None)
@given(
    base=st.sampled_from([good_record(), good_record(reference="r", metadata={}, repeat=1)]),
    changes=st.dictionaries(st.sampled_from([*FIELD_NAMES, "extra"]), VALUES, max_size=4),
    dropped=st.sets(st.sampled_from(FIELD_NAMES), max_size=2),
)
def test_fast_and_full_validators_agree(base: dict[str, Any], changes: dict[str, Any], dropped: set[str]) -> None:
    record = {k: v for k, v in {**base, **changes}.items() if k not in dropped}
    # The fast path takes exactly the records the full check finds nothing wrong with, save those naming
    # images (always checked in full: files to open).
    assert record_passes(record) == (not record_flaws(record) and record.get("images") is None)


# -- images ----------------------------------------------------------------------------------------------------


def test_image_inside_the_folder_is_typed_by_content(tmp_path: Path) -> None:
    (tmp_path / "scans").mkdir()
    (tmp_path / "scans" / "a.jpg").write_bytes(image_bytes("PNG"))  # the name says JPEG, the bytes PNG
    checked = check_image(tmp_path, "scans/a.jpg", max_bytes=MB)
    assert not isinstance(checked, str)
    assert checked.ext == "png" and checked.mime == "image/png"
    assert checked.path == (tmp_path / "scans" / "a.jpg").resolve()
    assert checked.stored_name == f"{checked.digest}.png" and len(checked.digest) == 64


@pytest.mark.parametrize(("kind", "ext"), [("PNG", "png"), ("JPEG", "jpg"), ("GIF", "gif"), ("WEBP", "webp")])
def test_accepted_image_types(kind: str, ext: str) -> None:
    checked = check_image_data(image_bytes(kind), "'x'", max_bytes=MB)
    assert not isinstance(checked, str) and checked.ext == ext and checked.path is None


def test_image_path_rules(tmp_path: Path) -> None:
    batch = tmp_path / "batch"
    batch.mkdir()
    (tmp_path / "outside.png").write_bytes(image_bytes("PNG"))
    (batch / "notes.png").write_text("hello")
    (batch / "old.bmp").write_bytes(image_bytes("BMP"))
    (batch / "big.png").write_bytes(image_bytes("PNG", (600, 600)) + b"\0" * 2 * MB)
    assert check_image(batch, "../outside.png", max_bytes=MB) == (
        "'../outside.png' points outside this file's folder; copy the image next to this file"
    )
    assert check_image(batch, str(tmp_path / "outside.png"), max_bytes=MB) == (
        f"{str(tmp_path / 'outside.png')!r} is an absolute path; give paths relative to this file's folder"
    )
    assert check_image(batch, "gone.png", max_bytes=MB) == "'gone.png' does not exist next to this file"
    assert check_image(batch, "notes.png", max_bytes=MB) == "'notes.png' is not a readable PNG, JPEG, GIF or WebP image"
    assert check_image(batch, "old.bmp", max_bytes=MB) == "'old.bmp' is a BMP image; use PNG, JPEG, GIF or WebP"
    message = check_image(batch, "big.png", max_bytes=MB)
    assert isinstance(message, str) and message.startswith("'big.png' is 2.")
    assert message.endswith("MB, over the 1 MB limit (BLIND_REVIEW_MAX_IMAGE_MB)")


def test_a_link_out_of_the_folder_is_refused(tmp_path: Path) -> None:
    batch = tmp_path / "batch"
    batch.mkdir()
    (tmp_path / "secret.png").write_bytes(image_bytes("PNG"))
    (batch / "innocent.png").symlink_to(tmp_path / "secret.png")
    assert check_image(batch, "innocent.png", max_bytes=MB) == (
        "'innocent.png' points outside this file's folder; copy the image next to this file"
    )
