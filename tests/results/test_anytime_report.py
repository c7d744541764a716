"""The report's anytime-valid verdicts from a real batch: samples count once every item has its k ratings, in
the order they were completed, and the state shows on the report."""

from __future__ import annotations

import csv
from pathlib import Path

from sqlalchemy.engine import Engine

from reviewer_app.batches.loading import load_batch
from reviewer_app.ratings.files import import_ratings
from reviewer_app.reporting.formats import render
from reviewer_app.results.batch_reports import batch_report
from storage.engine import read_session
from storage.repositories.results.completions import sample_completions
from tests.helpers import write_batch, write_rubric

RUBRIC = """
mode = "rating"
overlap = 2
seed = 3
[[dimensions]]
name = "quality"
scale = "likert"
min = 1
max = 5
level = "ordinal"
"""


def _batch(engine: Engine, tmp_path: Path, samples: int) -> None:
    records = [
        {"sample_id": f"s{i:02d}", "scenario": "qa", "prompt": f"Q{i}?", "model": m, "output": f"{m} answer {i}"}
        for i in range(samples)
        for m in ("good", "poor")
    ]
    load_batch(engine, [write_batch(tmp_path, records)], write_rubric(tmp_path, RUBRIC), name="b")


def _import(engine: Engine, tmp_path: Path, rows: list[tuple[str, int, str, int]], name: str) -> None:
    path = tmp_path / name
    with path.open("w", encoding="utf-8", newline="") as f:
        out = csv.writer(f)
        out.writerow(["reviewer", "sample_id", "model", "dimension", "score"])
        out.writerows([(r, f"s{i:02d}", m, "quality", score) for r, i, m, score in rows])
    import_ratings(engine, "b", path)


def test_samples_count_once_complete_and_a_clear_gap_settles(engine: Engine, tmp_path: Path) -> None:
    _batch(engine, tmp_path, 30)
    # ann rates everything; bob only the first 25 samples: the last 5 are not complete (k = 2)
    rows = [("ann", i, m, (5 if m == "good" else 2) - (i % 2)) for i in range(30) for m in ("good", "poor")]
    rows += [("bob", i, m, (5 if m == "good" else 2) - (i % 3 == 0)) for i in range(25) for m in ("good", "poor")]
    _import(engine, tmp_path, rows, "panel.csv")
    with read_session(engine) as session:
        done = sample_completions(session, 1, 2)
    assert [key for key, _ in done] == [f"s{i:02d}" for i in range(25)]
    report = batch_report(engine, batch="b", rounds=200)
    assert report.anytime is not None
    (qa,) = report.anytime
    assert qa.samples == 25 and qa.state == "settled"
    (pair,) = qa.pairs
    assert (pair.model_a, pair.model_b, pair.state) == ("good", "poor", "separated")
    assert pair.cs_low is not None and pair.cs_low > 0
    assert "Anytime-valid verdicts" in render(report, "md") and "settled" in render(report, "html")


def test_before_the_burn_in_the_report_says_how_many_more(engine: Engine, tmp_path: Path) -> None:
    _batch(engine, tmp_path, 12)
    rows = [(r, i, m, 3) for r in ("ann", "bob") for i in range(12) for m in ("good", "poor")]
    _import(engine, tmp_path, rows, "panel.csv")
    (qa,) = batch_report(engine, batch="b", rounds=200).anytime or ()
    assert qa.samples == 12 and qa.state == "more_samples" and qa.more_samples == 8
    assert "start after 20, 8 more" in qa.sentence
