"""`load-batch` names each model with its outputs and where the full leak list is, and an archived batch
cannot be opened without restoring it. (Needs the LoadSummary and set_batch_open changes in
``reviewer_app/batches/loading.py`` described in the issue-8 admin notes.)"""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy.engine import Engine

from reviewer_app.cli.main import main
from tests.helpers import RATING_RUBRIC, make_records, write_batch, write_rubric


def test_the_load_summary_counts_outputs_per_model_and_points_to_the_leak_list(
    engine: Engine, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    records = make_records(12, ["gpt-4", "claude-2"]) + make_records(3, ["m-three"])
    for r in records:
        r["output"] = f"I am {r['model']}."
    argv = ["load-batch", str(write_batch(tmp_path, records)), "--rubric"]
    argv += [str(write_rubric(tmp_path, RATING_RUBRIC.format(overlap=1))), "--name", "lopsided", "--on-leak", "flag"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "  outputs per model: claude-2 12, gpt-4 12, m-three 3" in out
    assert "... and 7 more: `blind-review leaks lopsided` lists all" in out  # 27 outputs name their model


def test_an_archived_batch_is_restored_before_it_opens(
    engine: Engine, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["load-batch", str(write_batch(tmp_path, make_records(2, ["m1", "m2"]))), "--rubric"]
    argv += [str(write_rubric(tmp_path, RATING_RUBRIC.format(overlap=1))), "--name", "b1"]
    assert main(argv) == 0
    assert main(["archive-batch", "b1"]) == 0
    capsys.readouterr()
    assert main(["open-batch", "b1"]) == 1
    assert "batch 'b1' is archived; restore it before opening it" in capsys.readouterr().err
    assert main(["restore-batch", "b1"]) == 0
    assert main(["open-batch", "b1"]) == 0
