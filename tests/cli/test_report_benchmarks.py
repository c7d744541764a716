"""`blind-review report BATCH --benchmarks scores.csv`: the section in every format, JSON valid by schema.json,
and a bad file or margin as one located error with exit 1."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
from sqlalchemy.engine import Engine

from reviewer_app.cli.main import main
from reviewer_app.reporting.formats import load_schema
from tests.support.report_panels import MODELS, build_panel_db

# The simulated panel ranks dune > cedar > birch > aurora; this benchmark says the opposite, and names a model
# the batch does not have.
SCORES = "model,benchmark,score\n" + "".join(f"{m},MMLU,{90 - 10 * i}\n" for i, m in enumerate(MODELS))
SCORES += "zephyr,MMLU,99\n" + "".join(f"{m},Arena,{1000 + 50 * i}\n" for i, m in enumerate(MODELS))


def _scores(tmp_path: Path, text: str = SCORES) -> Path:
    path = tmp_path / "scores.csv"
    path.write_text(text, encoding="utf-8")
    return path


def test_json_has_a_section_per_scenario_and_overall_valid_by_the_schema(engine: Engine, tmp_path: Path, capsys):
    build_panel_db(engine, tmp_path / "panel", mode="rating", n_samples=20, seed=3, name="panel")
    out = tmp_path / "r.json"
    argv = ["report", "panel", "--format", "json", "--rounds", "200", "--out", str(out)]
    assert main([*argv, "--benchmarks", str(_scores(tmp_path)), "--benchmark-margin", "5"]) == 0
    assert capsys.readouterr().out.startswith(f"Wrote {out} (json)")
    report = json.loads(out.read_text("utf-8"))
    jsonschema.Draft202012Validator(load_schema()).validate(report)
    for block in [*report["scenarios"], report["overall"]]:
        mmlu, arena = block["benchmarks"]
        assert mmlu["benchmark"] == "MMLU" and arena["benchmark"] == "Arena" and mmlu["margin"] == 5
        assert mmlu["spearman"] < 0 < arena["spearman"]
        assert "Not in this batch, so left out: zephyr." in mmlu["notes"] and arena["notes"] == []
        assert {m["model"] for m in mmlu["models"]} == set(MODELS)
        assert all(line.startswith("The benchmark puts ") for line in mmlu["disagreements"])
    assert any("reversed (significant)" in line for line in report["overall"]["benchmarks"][0]["disagreements"])
    # Without --benchmarks: no section at all.
    assert main(argv) == 0
    plain = json.loads(out.read_text("utf-8"))
    assert "benchmarks" not in plain["overall"] and all("benchmarks" not in s for s in plain["scenarios"])


def test_markdown_and_html_show_the_section(engine: Engine, tmp_path: Path, capsys):
    build_panel_db(engine, tmp_path / "panel", mode="rating", n_samples=12, seed=3, name="panel")
    scores = str(_scores(tmp_path))
    assert main(["report", "panel", "--format", "md", "--rounds", "100", "--out", "-", "--benchmarks", scores]) == 0
    md = capsys.readouterr().out
    assert md.count("### Public benchmarks beside the blind ranking") == 4  # three scenarios and all of them
    assert "MMLU against the blind overall score on extraction: Spearman's rho" in md
    html_out = tmp_path / "r.html"
    assert main(["report", "panel", "--rounds", "100", "--out", str(html_out), "--benchmarks", scores]) == 0
    html = html_out.read_text("utf-8")
    assert html.count('<svg class="chart benchmark"') == 8  # two benchmarks, four rankings


def test_a_bad_file_is_one_located_error_and_nothing_is_written(engine: Engine, tmp_path: Path, capsys):
    build_panel_db(engine, tmp_path / "panel", mode="rating", n_samples=6, seed=3, name="panel")
    out = tmp_path / "r.json"
    bad = _scores(tmp_path, "model,benchmark,score\naurora,MMLU,70\naurora,MMLU,71\nbirch,MMLU,n/a\n")
    assert main(["report", "panel", "--format", "json", "--out", str(out), "--benchmarks", str(bad)]) == 1
    err = capsys.readouterr().err
    assert "2 problem(s) in the benchmark scores file" in err
    assert f"{bad}:3: aurora on MMLU again (first on line 2)" in err and f"{bad}:4: score: 'n/a'" in err
    assert not out.exists()
    good = str(_scores(tmp_path))
    assert main(["report", "panel", "--out", str(out), "--benchmarks", good, "--benchmark-margin", "-1"]) == 1
    assert capsys.readouterr().err.startswith("error: --benchmark-margin: -1.0 is not a number of benchmark points")
    assert main(["report", "panel", "--out", str(out), "--benchmarks", str(tmp_path / "none.csv")]) == 1
    assert "cannot read it" in capsys.readouterr().err
