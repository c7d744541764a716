"""`blind-review report` against real storage: our errors are one line and exit 1."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema

from reviewer_app.batches.loading import load_batch
from reviewer_app.cli.main import main
from reviewer_app.demo.seed import seed_demo
from reviewer_app.reporting.formats import load_schema
from tests.helpers import make_records, write_batch, write_rubric

RUBRIC = """
mode = "rating"
overlap = 2
[[dimensions]]
name = "correctness"
description = "Is it right?"
scale = "likert"
min = 1
max = 5
"""


def test_unknown_batch_is_one_line_and_exit_1(engine, tmp_path: Path, capsys):
    code = main(["report", "no-such-batch", "--format", "json", "--out", str(tmp_path / "r.json")])
    err = capsys.readouterr().err
    assert code == 1
    assert err.count("\n") == 1 and "no batch named 'no-such-batch'" in err


def test_batch_without_ratings_is_one_line_and_exit_1(engine, tmp_path: Path, capsys):
    batch = write_batch(tmp_path, make_records(3, ["m1", "m2"]))
    load_batch(
        engine, [batch], write_rubric(tmp_path, RUBRIC), name="fresh", on_leak="flag", progress=False, open_now=True
    )
    code = main(["report", "fresh", "--out", str(tmp_path / "r.html")])
    err = capsys.readouterr().err
    assert code == 1 and "has no ratings yet" in err and err.count("\n") == 1
    assert not (tmp_path / "r.html").exists()


def test_report_writes_each_format_and_says_what_it_holds(engine, tmp_path: Path, capsys):
    seed_demo(engine)
    out = tmp_path / "demo.json"
    assert main(["report", "demo", "--format", "json", "--rounds", "100", "--out", str(out)]) == 0
    said = capsys.readouterr().out
    report = json.loads(out.read_text("utf-8"))
    jsonschema.validate(report, load_schema())
    assert said.startswith(f"Wrote {out} (json): {len(report['scenarios'])} scenario(s), ")
    assert f"{len(report['models'])} model(s), 100 bootstrap rounds" in said
    assert main(["report", "demo-pairwise", "--format", "md", "--rounds", "100", "--out", "-"]) == 0
    assert capsys.readouterr().out.startswith("# Blind Review report: demo-pairwise\n")
