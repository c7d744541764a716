"""load_batch: arguments are checked first and worded by field; a load is logged with its counts."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from sqlalchemy.engine import Engine

from reviewer_app.batches.catalog import batch_list
from reviewer_app.batches.loading import load_batch
from reviewer_app.cli._common import flag_for
from reviewer_app.domain.enums import Mode, OnLeak
from reviewer_app.errors import BatchValidationError
from tests.helpers import RATING_RUBRIC, make_records, write_batch, write_rubric


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    return write_batch(tmp_path, make_records(3, ["m1", "m2"])), write_rubric(tmp_path, RATING_RUBRIC.format(overlap=1))


def test_bad_arguments_are_all_reported_by_field(engine: Engine, files: tuple[Path, Path]) -> None:
    with pytest.raises(BatchValidationError) as err:
        load_batch(engine, [], None, name=" ", on_leak="never", open_now=True)
    assert [(p.file, p.field) for p in err.value.problems] == [
        ("", "paths"),
        ("", "name"),
        ("", "on_leak"),
        ("", "rubric"),
    ]
    assert str(err.value).splitlines()[2] == "on_leak: must be mask, flag, exclude or fail, not 'never'"
    assert err.value.worded(flag_for).splitlines() == [
        "PATH: no batch files given",
        "--name: a batch needs a non-empty name",
        "--on-leak: must be mask, flag, exclude or fail, not 'never'",
        "--rubric: a rubric file is required",
    ]
    labels = {"on_leak": "Outputs that name a model"}
    worded = err.value.worded(lambda f: labels.get(f, f)).splitlines()
    assert worded[2] == "Outputs that name a model: must be mask, flag, exclude or fail, not 'never'"
    assert worded[1] == "name: a batch needs a non-empty name"
    assert batch_list(engine) == []


def test_a_taken_name_is_a_name_problem(engine: Engine, files: tuple[Path, Path], tmp_path: Path) -> None:
    batch, rubric = files
    load_batch(engine, [batch], rubric, name="b1", open_now=True)
    other = write_batch(tmp_path / "other", make_records(2, ["m1", "m2"]))
    with pytest.raises(BatchValidationError, match="already exists with different content") as err:
        load_batch(engine, [other], rubric, name="b1", open_now=True)
    (problem,) = err.value.problems
    assert problem.field == "name" and problem.is_argument
    assert err.value.worded(flag_for).startswith("--name: a batch named 'b1' already exists")


def test_the_policy_is_taken_as_text_or_as_an_enum(engine: Engine, files: tuple[Path, Path]) -> None:
    batch, rubric = files
    summary = load_batch(engine, [batch], rubric, name="b1", on_leak=OnLeak.EXCLUDE, open_now=True)
    assert summary.mode is Mode.RATING and summary.outputs == 6 and not summary.already_loaded


def test_a_load_is_logged_with_its_counts(
    engine: Engine, files: tuple[Path, Path], caplog: pytest.LogCaptureFixture
) -> None:
    batch, rubric = files
    caplog.set_level(logging.INFO, logger="reviewer_app")
    load_batch(engine, [batch], rubric, name="b1", open_now=True)
    load_batch(engine, [batch], rubric, name="b1", open_now=True)
    loaded = [r.getMessage() for r in caplog.records if r.name == "reviewer_app.batches.loading"]
    assert loaded[0].startswith("loaded batch 'b1' (id ")
    assert "3 samples, 6 outputs from 2 models, 6 items, 0 images, 0 leaks (mask)" in loaded[0]
    assert loaded[1].startswith("batch content already loaded as 'b1'")
