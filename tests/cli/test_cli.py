"""The admin CLI: one line of error and exit 1 on bad input, an example in every --help, README coverage."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from sqlalchemy.engine import Engine

from reviewer_app.cli.main import build_parser, main
from tests.helpers import RATING_RUBRIC, make_records, write_batch, write_rubric

ROOT = Path(__file__).resolve().parents[2]


def commands() -> list[str]:
    sub = next(a for a in build_parser()._actions if a.dest == "command")
    return sorted(sub.choices)  # type: ignore[arg-type]


def _help(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """What ``blind-review ARGV --help`` prints, run in this process (argparse exits 0 after printing)."""
    with pytest.raises(SystemExit) as exited:
        main([*argv, "--help"])
    assert exited.value.code == 0
    return capsys.readouterr().out


def test_every_command_has_an_example_in_help_and_a_place_in_the_readme(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "100")  # argparse wraps to the terminal; make it the same everywhere
    readme = (ROOT / "README.md").read_text()
    assert "blind-review" in _help([], capsys)
    for name in commands():
        out = _help([name], capsys)
        example = re.search(r"^examples?:\s*\n\s+blind-review " + re.escape(name) + r"\b", out, re.I | re.M)
        assert example, f"`blind-review {name} --help` shows no example"
        assert f"blind-review {name}" in readme, f"README does not show `blind-review {name}`"


def test_full_admin_flow(engine: Engine, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    batch = write_batch(tmp_path, make_records(3, ["m1", "m2"]))
    rubric = write_rubric(tmp_path, RATING_RUBRIC.format(overlap=2))
    assert main(["init"]) == 0
    assert main(["load-batch", str(batch), "--rubric", str(rubric), "--name", "b1"]) == 0
    assert "6 outputs from 2 models" in capsys.readouterr().out
    assert main(["load-batch", str(batch), "--rubric", str(rubric), "--name", "b1"]) == 0
    assert "Already loaded" in capsys.readouterr().out
    for name in ("ann", "bob"):
        assert main(["add-reviewer", name, "--role", "reviewer"]) == 0
        assert re.search(r"http://\S+/\?token=[\w-]{20,}", capsys.readouterr().out)
    assert main(["assign", "b1", "--reviewers", "ann,bob"]) == 0
    assert "Assigned 12 item showings" in capsys.readouterr().out
    assert main(["open-batch", "b1"]) == 0  # loaded closed: opened once planned
    assert capsys.readouterr().out == "Batch 'b1' is open to its reviewers: ann and bob.\n"
    assert main(["list-batches"]) == 0
    assert re.search(r"b1\s+rating\s+open\s+2\s+3\s+6\s+6", capsys.readouterr().out)
    ratings = tmp_path / "r.csv"
    ratings.write_text("reviewer,sample_id,model,dimension,score\ncarol,s0,m1,correctness,5\n")
    assert main(["import-ratings", "b1", str(ratings)]) == 0
    assert "New reviewers (no sign-in link): carol" in capsys.readouterr().out
    assert main(["export-ratings", "b1", "--format", "csv"]) == 0
    assert "carol,m1,0,correctness,5" in capsys.readouterr().out
    assert main(["close-batch", "b1"]) == 0 and "closed" in capsys.readouterr().out


@pytest.mark.parametrize(
    "argv,message",
    [
        (["assign", "nope"], "error: no batch named 'nope'"),
        (["load-batch", "missing.jsonl", "--rubric", "missing.toml", "--name", "x"], "missing.toml: cannot be read"),
        (["add-reviewer", "ann", "--role", "reviewer"], "already exists"),
    ],
)
def test_errors_are_one_clear_message_and_exit_1(
    engine: Engine, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    if argv[0] == "add-reviewer":
        main(argv)
        capsys.readouterr()
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
