"""The CLI keeps the services' rules (the last admin stays) and names bad arguments by their flags."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy.engine import Engine

from reviewer_app.cli.main import main
from reviewer_app.people.people import authenticate
from tests.helpers import RATING_RUBRIC, make_records, write_batch, write_rubric


@pytest.fixture(autouse=True)
def app_logger() -> Iterator[None]:
    """main() configures the process-wide ``reviewer_app`` logger; put it back for the tests that follow."""
    logger = logging.getLogger("reviewer_app")
    level, handlers = logger.level, list(logger.handlers)
    yield
    logger.setLevel(level)
    logger.handlers[:] = handlers


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_revoke_cannot_lock_every_admin_out(engine: Engine, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "add-reviewer", "root", "--role", "admin")
    assert code == 0
    token = out.strip().splitlines()[-1].split("token=")[-1]
    code, out, err = run(capsys, "revoke", "root")
    assert code == 1 and out == ""
    assert err.startswith("error: cannot revoke 'root': they are the last active admin")
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert authenticate(engine, token).name == "root"
    assert run(capsys, "add-reviewer", "deputy", "--role", "admin")[0] == 0
    code, out, _ = run(capsys, "revoke", "root")
    assert code == 0 and "Revoked 'root'" in out
    assert run(capsys, "revoke", "deputy")[0] == 1


def test_a_taken_name_is_refused_with_a_hint(engine: Engine, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "add-reviewer", "ann")[0] == 0
    code, _, err = run(capsys, "add-reviewer", "ann", "--role", "lead")
    assert code == 1
    assert err.strip() == (
        "error: a person named 'ann' already exists; use `blind-review new-link ann` for a new sign-in link"
    )


def test_bad_load_arguments_are_named_by_their_flags(
    engine: Engine, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    batch = str(write_batch(tmp_path, make_records(2, ["m1", "m2"])))
    rubric = str(write_rubric(tmp_path, RATING_RUBRIC.format(overlap=1)))
    code, _, err = run(capsys, "load-batch", batch, "--rubric", rubric, "--name", " ")
    assert code == 1 and err.strip() == "error: --name: a batch needs a non-empty name"
    assert run(capsys, "load-batch", batch, "--rubric", rubric, "--name", "b1")[0] == 0
    other = str(write_batch(tmp_path / "other", make_records(3, ["m1", "m2"])))
    code, _, err = run(capsys, "load-batch", other, "--rubric", rubric, "--name", "b1")
    assert code == 1
    assert err.strip() == (
        "error: --name: a batch named 'b1' already exists with different content; choose another name"
    )


def test_a_bad_number_in_the_environment_names_the_variable(
    engine: Engine, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    batch = str(write_batch(tmp_path, make_records(2, ["m1", "m2"])))
    rubric = str(write_rubric(tmp_path, RATING_RUBRIC.format(overlap=1)))
    monkeypatch.setenv("BLIND_REVIEW_MAX_OUTPUT_MB", "five")
    code, _, err = run(capsys, "load-batch", batch, "--rubric", rubric, "--name", "b1")
    assert code == 1
    assert (
        err.strip() == "error: BLIND_REVIEW_MAX_OUTPUT_MB must be a number of megabytes such as 10 or 0.5, not 'five'"
    )


def test_a_bad_log_level_is_a_config_error(
    engine: Engine, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BLIND_REVIEW_LOG_LEVEL", "chatty")
    code, _, err = run(capsys, "list-batches")
    assert code == 1 and err.startswith("error: BLIND_REVIEW_LOG_LEVEL must be one of DEBUG, INFO, WARNING")


def test_info_logging_tells_what_happened_and_never_a_token(
    engine: Engine, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BLIND_REVIEW_LOG_LEVEL", "INFO")
    batch = str(write_batch(tmp_path, make_records(2, ["m1", "m2"])))
    rubric = str(write_rubric(tmp_path, RATING_RUBRIC.format(overlap=1)))
    code, _, err = run(capsys, "load-batch", batch, "--rubric", rubric, "--name", "b1")
    assert code == 0 and "INFO reviewer_app.batches.loading: loaded batch 'b1'" in err
    code, out, err = run(capsys, "add-reviewer", "ann")
    token = out.strip().splitlines()[-1].split("token=")[-1]
    assert code == 0 and "added reviewer 'ann'" in err and token not in err
    code, _, err = run(capsys, "revoke", "ann")
    assert code == 0 and "revoked 'ann'" in err


def test_warning_is_the_default_so_commands_print_only_their_own_lines(
    engine: Engine, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("BLIND_REVIEW_LOG_LEVEL", raising=False)
    batch = str(write_batch(tmp_path, make_records(2, ["m1", "m2"])))
    rubric = str(write_rubric(tmp_path, RATING_RUBRIC.format(overlap=1)))
    code, out, err = run(capsys, "load-batch", batch, "--rubric", rubric, "--name", "b1")
    assert code == 0 and out.startswith("Loaded batch 'b1'") and err == ""
