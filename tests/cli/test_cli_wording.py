"""What the CLI prints reads as one text: `list-batches` says that its answered column counts item showings (each
item is shown to k reviewers), and `load-batch`'s summary is not interrupted by a timestamped log line."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy.engine import Engine

from reviewer_app.cli.main import main
from tests.helpers import RATING_RUBRIC, make_records, write_batch, write_rubric


def test_list_batches_says_it_counts_showings_not_items(
    engine: Engine, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["load-batch", str(write_batch(tmp_path, make_records(2, ["m1", "m2"])))]
    assert main([*argv, "--rubric", str(write_rubric(tmp_path, RATING_RUBRIC.format(overlap=2))), "--name", "b"]) == 0
    ratings = tmp_path / "r.csv"
    rows = [f"{who},s{i},m{m},correctness,4\n" for who in ("ann", "bob") for i in range(2) for m in (1, 2)]
    ratings.write_text("reviewer,sample_id,model,dimension,score\n" + "".join(rows), encoding="utf-8")
    assert main(["import-ratings", "b", str(ratings)]) == 0
    capsys.readouterr()
    assert main(["list-batches"]) == 0
    out, err = capsys.readouterr()
    header, row = out.splitlines()
    columns = header.split()
    assert "done" not in columns  # it read as items done: 8 of 4 items
    cells = dict(zip(columns, row.split(), strict=False))
    assert (cells["items"], cells["answered"], cells["ratings"]) == ("4", "8", "8")  # 2 reviewers x 4 items
    assert err == "answered: item showings answered (each item is shown to k reviewers: k x items when all are done)\n"


def test_the_load_summary_is_not_interrupted_by_a_log_line(
    engine: Engine, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    records = make_records(2, ["claude-2", "vicuna-13b"], scenarios=("vicuna", "koala"))
    argv = ["load-batch", str(write_batch(tmp_path, records))]
    argv += ["--rubric", str(write_rubric(tmp_path, RATING_RUBRIC.format(overlap=1))), "--name", "claude-vs-vicuna"]
    assert main(argv) == 0
    out, err = capsys.readouterr()
    assert "WARNING" not in err and err.strip() == "", err
    # The summary says it in its own words.
    assert "the batch's name names a model or vendor" in out
    assert "'vicuna' (Vicuna): shown as 'Scenario" in out
