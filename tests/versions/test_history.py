"""``model_history`` / ``blind-review history``: a model over a chain of three follow-up rounds (SQLite and
PostgreSQL), its regression marked where it happened, renames followed with ``--also``, and our own errors."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from sqlalchemy.engine import Engine

from reviewer_app.cli.main import main
from reviewer_app.errors import NotFoundError, ReportError
from reviewer_app.reporting.history import render_history
from reviewer_app.versions.history import model_history
from tests.support.history_chain import history_chain


def test_history_marks_the_regression_of_round_three_and_nowhere_else(engine: Engine, tmp_path: Path) -> None:
    history_chain(engine, tmp_path)
    h = model_history(engine, "m1b", also=["m1"], rounds=200)
    assert [(b.name, b.model, b.follow_up_of, b.linked, b.rated) for b in h.batches] == [
        ("r1", "m1", None, False, True),
        ("r2", "m1", "r1", True, True),
        ("r3", "m1b", "r2", True, True),
    ]
    points = {(p.batch, p.scenario, p.dimension): p for p in h.points}
    assert {k[0] for k in points} == {"r1", "r2", "r3"} and {k[2] for k in points} == {"correctness", "overall"}
    for (batch, scen, _dim), p in points.items():
        assert p.score is not None and p.ci_low is not None and p.ci_high is not None
        assert p.ci_low <= p.score <= p.ci_high and p.n > 0
        # this panel's score, and the wider interval of the score another group of reviewers would give
        assert p.panel_ci_low is not None and p.panel_ci_high is not None
        assert p.panel_ci_low <= p.ci_low and p.ci_high <= p.panel_ci_high
        if batch == "r1":
            assert p.verdict is None and p.against is None  # a chain's start has nothing to be compared with
        else:
            assert p.against == ("r1" if batch == "r2" else "r2") and p.verdict is not None
            assert p.change_low is not None and p.change_high is not None
        if (batch, scen) == ("r3", "qa"):
            assert p.verdict == "regression", p
            assert p.against_model == "m1" and p.change_high is not None and p.change_high < 0
        else:
            assert p.verdict != "regression", p
    # The drop shows in the scores too: qa's correctness falls by about the drop from r2 to r3.
    fall = points[("r2", "qa", "correctness")].score - points[("r3", "qa", "correctness")].score  # type: ignore[operator]
    assert 1.0 < fall < 2.0
    assert {(p.batch, p.scenario, p.dimension) for p in h.regressions} == {
        ("r3", "qa", "correctness"),
        ("r3", "qa", "overall"),
    }
    assert any("A score is this panel's" in n for n in h.notes)
    data = json.loads(render_history(h, "json"))
    assert data["points"][0]["panel_ci_low"] is not None
    assert data["model"] == "m1b" and data["also"] == ["m1"] and data["regressions"] == 2
    assert [b["name"] for b in data["batches"]] == ["r1", "r2", "r3"]
    # Without the old name, the renamed version's past is not there, and r3 starts a chain of its own.
    alone = model_history(engine, "m1b", rounds=200)
    assert [b.name for b in alone.batches] == ["r3"] and not alone.regressions
    assert any("no outputs of this model" in n for n in alone.batches[0].notes)
    # m2 never changed: three rounds, no regression.
    m2 = model_history(engine, "m2", rounds=200)
    assert [b.name for b in m2.batches] == ["r1", "r2", "r3"] and not m2.regressions


def test_errors_are_ours_and_say_what_there_is(engine: Engine, tmp_path: Path) -> None:
    history_chain(engine, tmp_path, rate=False)
    with pytest.raises(NotFoundError, match=r"no batch has outputs of 'gpt-9'; models with outputs: m1, m1b, m2"):
        model_history(engine, "gpt-9")
    with pytest.raises(NotFoundError, match="'m0'"):
        model_history(engine, "m1b", also=["m0"])
    with pytest.raises(ReportError, match=r"'m1' has no ratings yet in any batch; its batches: r1 \(m1\), r2 \(m1\)"):
        model_history(engine, "m1")


def test_history_cli_writes_json_and_csv_and_says_the_regression(
    engine: Engine, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    history_chain(engine, tmp_path)
    out = tmp_path / "h.json"
    argv = ["history", "m1b", "--also", "m1", "--rounds", "200"]
    assert main([*argv, "--format", "json", "--out", str(out)]) == 0
    said = capsys.readouterr().out
    assert f"Wrote {out} (json)" in said and "2 regression(s): qa (correctness) in r3; qa (overall) in r3" in said
    data = json.loads(out.read_text(encoding="utf-8"))
    assert [p["verdict"] for p in data["points"] if p["batch"] == "r3" and p["scenario"] == "qa"] == [
        "regression",
        "regression",
    ]
    assert main([*argv, "--format", "csv", "--out", "-"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert len(rows) == len(data["points"]) and {r["follow_up_of"] for r in rows} == {"", "r1", "r2"}
    assert {(r["batch"], r["scenario"], r["dimension"]) for r in rows if r["verdict"] == "regression"} == {
        ("r3", "qa", "correctness"),
        ("r3", "qa", "overall"),
    }
    for fmt in ("md", "html"):
        assert main([*argv, "--format", fmt, "--out", str(tmp_path / f"h.{fmt}")]) == 0
    html = (tmp_path / "h.html").read_text(encoding="utf-8")
    assert html.count("<svg") == 2 and "<title>regression against r2</title>" in html
    assert main(["history", "nobody"]) == 1
    assert capsys.readouterr().err.startswith("error: no batch has outputs of 'nobody'; models with outputs:")
    assert main(["list-batches"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].endswith("follow-up of") and [line.rsplit(None, 1)[-1] for line in lines[1:]] == ["-", "r1", "r2"]


def test_rating_and_pairwise_scores_never_share_a_chart() -> None:
    # A model in a rating batch and a pairwise batch: 0-1 means and Bradley-Terry strengths are different
    # measures, so each mode is its own series (the demo's cirrus-mini is in demo, demo-pairwise and demo-v2).
    from datetime import datetime

    from reviewer_app.domain.versions import HistoryBatch, HistoryPoint, ModelHistory
    from reviewer_app.reporting.history import history_chart

    when = datetime(2026, 11, 30)
    batches = tuple(
        HistoryBatch(name=n, batch_id=i, loaded_at=when, mode=m, follow_up_of=None, linked=False, model="m", rated=True)
        for i, (n, m) in enumerate((("a", "rating"), ("b", "pairwise"), ("c", "rating")))
    )
    points = tuple(
        HistoryPoint(batch=b, loaded_at=when, model="m", scenario="qa", dimension="overall", score=s, ci_low=None,
                     ci_high=None, n=10)
        for b, s in (("a", 0.7), ("b", -0.4), ("c", 0.6))
    )  # fmt: skip
    mixed = ModelHistory(model="m", also=(), batches=batches, points=points)
    assert mixed.dimensions() == ["overall (rating)", "overall (pairwise)"]
    assert [p.batch for p in mixed.series("overall (rating)")] == ["a", "c"]
    assert [p.batch for p in mixed.series("overall (pairwise)")] == ["b"]
    assert "-0.4" not in history_chart(mixed, "overall (rating)")
    rating_only = ModelHistory(model="m", also=(), batches=batches, points=(points[0], points[2]))
    assert rating_only.dimensions() == ["overall"]
    assert [p.batch for p in rating_only.series("overall")] == ["a", "c"]
