"""A reader that stops early (``blind-review export-ratings b | head``) ends a command quietly, as it ends a
Unix tool: no trace on stderr, exit status 141 (a tool ended by SIGPIPE), for every command that writes to
standard output."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest
from sqlalchemy.engine import Engine

from reviewer_app.batches.loading import load_batch
from reviewer_app.cli.main import SIGPIPE_STATUS, main
from reviewer_app.ratings.files import import_ratings
from tests.helpers import RATING_RUBRIC, make_records, write_batch, write_rubric

ROOT = Path(__file__).resolve().parents[2]


def _rated_batch(engine: Engine, tmp_path: Path) -> None:
    records = make_records(3, ["m1", "m2"])
    records[0]["output"] = "I am ChatGPT, and the answer is 4."  # a line for `leaks`
    load_batch(
        engine,
        [write_batch(tmp_path, records)],
        write_rubric(tmp_path, RATING_RUBRIC.format(overlap=1)),
        name="b",
    )
    ratings = tmp_path / "r.csv"
    ratings.write_text(
        "reviewer,sample_id,model,dimension,score\n"
        + "".join(f"ann,s{i},m{m},correctness,{i + 2}\n" for i in range(3) for m in (1, 2)),
        encoding="utf-8",
    )
    import_ratings(engine, "b", ratings)


def _run_with_reader_gone(argv: list[str]) -> tuple[int, str]:
    """Run ``blind-review ARGV`` with standard output a pipe whose reading end is closed before the command
    writes (what ``| head`` does once it has its lines): its exit status and its stderr."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "reviewer_app.cli", *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=ROOT,
        env={**os.environ, "PYTHONWARNINGS": "default"},
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # the reader is gone before the first write
    with proc.stderr:
        err = proc.stderr.read().decode()
    return proc.wait(timeout=120), err


@pytest.mark.parametrize(
    "argv",
    [
        ["export-ratings", "b", "--format", "csv"],
        ["export-ratings", "b", "--format", "jsonl"],
        ["list-batches"],
        ["leaks", "b", "--format", "jsonl"],
        ["report", "b", "--format", "json", "--out", "-"],
        ["--help"],
    ],
    ids=lambda argv: " ".join(argv),
)
def test_a_reader_that_leaves_early_ends_the_command_quietly(engine: Engine, tmp_path: Path, argv: list[str]) -> None:
    _rated_batch(engine, tmp_path)
    status, err = _run_with_reader_gone(argv)
    assert "Traceback" not in err and "BrokenPipe" not in err and "Exception ignored" not in err, err
    # argparse drops a --help it cannot write and exits 0 itself; every command exits as a Unix tool would.
    assert status == (0 if argv == ["--help"] else SIGPIPE_STATUS)
    assert SIGPIPE_STATUS == 141


class _GonePipe(io.StringIO):
    def write(self, text: str) -> int:
        raise BrokenPipeError(32, "Broken pipe")


def test_main_answers_a_broken_pipe_with_the_sigpipe_status(
    engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _rated_batch(engine, tmp_path)
    monkeypatch.setattr(sys, "stdout", _GonePipe())
    assert main(["export-ratings", "b", "--format", "jsonl"]) == SIGPIPE_STATUS
