"""`compare_batches` and `blind-review compare` against real storage (SQLite and PostgreSQL): two batches
loaded with ``load_batch`` sharing samples, ratings through ``import_ratings``, a known regression found end to
end through the CLI, and every error a user can hit, in one line of our own words."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import numpy as np
import pandas as pd
import pytest
from sqlalchemy.engine import Engine

from reviewer_app.batches.loading import load_batch
from reviewer_app.cli.main import main
from reviewer_app.errors import NotFoundError, ReportError, ValidationError
from reviewer_app.ratings.files import import_ratings
from reviewer_app.reporting.compare import load_compare_schema
from reviewer_app.versions import batch_compare as service
from reviewer_app.versions.batch_compare import NO_ANCHORS_NOTE, compare_batches
from tests.helpers import write_batch
from tests.support.compare_chain import (
    N_SAMPLES,
    RUBRIC,
    SAMPLE_EFFECT,
    SCENARIOS,
    chain,
    load,
    rate_items,
    ratings,
    records,
)


def _rows(report: dict[str, Any]) -> dict[tuple[str, str, str], dict[str, Any]]:
    return {(b["scenario"], b["dimension"], m["model"]): m for b in report["scenarios"] for m in b["models"]}


def test_a_known_regression_is_found_end_to_end_through_the_cli(engine: Engine, tmp_path: Path, capsys) -> None:
    chain(engine, tmp_path)
    out = tmp_path / "out" / "v1-v2.json"
    code = main(["compare", "v1", "v2", "--match", "m1=m1-v2", "--format", "json", "--out", str(out)])
    said = capsys.readouterr()
    assert code == 0, said.err
    assert said.out.startswith(f"Wrote {out} (json): v2 against v1: ")
    assert "No anchors: verdicts allow for a new panel by the variance between reviewers" in said.out
    report = json.loads(out.read_text("utf-8"))
    jsonschema.validate(report, load_compare_schema())
    rows = _rows(report)
    hit = rows[("qa", "correctness", "m1-v2")]
    assert hit["baseline_model"] == "m1" and hit["verdict"] == "regression" and hit["n"] == 30
    assert hit["diff"] == pytest.approx(hit["candidate_score"] - hit["baseline_score"])
    assert hit["panel_shift"] is None and hit["corrected"] == hit["diff"]
    assert -1.3 < hit["diff"] < -0.7  # the simulated drop is 1 point, before rounding and clipping
    assert rows[("qa", "overall", "m1-v2")]["verdict"] == "regression"
    for (scen, _dim, model), row in rows.items():
        if (scen, model) != ("qa", "m1-v2"):
            assert row["verdict"] in ("no change", "inconclusive"), (scen, model, row)
    assert report["unpaired"] == {"baseline": [], "candidate": ["m3"]}
    assert report["samples"] == {"shared": N_SAMPLES, "baseline_only": 0, "candidate_only": 0}
    assert report["anchors"] is False and NO_ANCHORS_NOTE in report["notes"]
    refusal = {(d["scenario"], d["model"]): d for d in report["drift"] if d["metric"] == "refusal_rate"}
    assert refusal[("qa", "m1-v2")]["baseline"] == 0 and refusal[("qa", "m1-v2")]["candidate"] == pytest.approx(10 / 30)
    assert refusal[("qa", "m1-v2")]["flag"] is True
    assert refusal[("summaries", "m2")]["flag"] is False and refusal[("summaries", "m2")]["change"] == 0
    identical = {(d["scenario"], d["model"]): d for d in report["drift"] if d["metric"] == "identical_share"}
    assert identical[("summaries", "m2")]["candidate"] == 1.0
    assert identical[("qa", "m1-v2")]["candidate"] == pytest.approx(20 / 30)
    # Every other format from the same data, to standard output.
    for fmt, start in (("md", "# Blind Review comparison: v2 against v1"), ("csv", "section,"), ("html", "<!DOCTYPE")):
        assert main(["compare", "v1", "v2", "--match", "m1=m1-v2", "--format", fmt, "--out", "-"]) == 0
        text = capsys.readouterr().out
        assert text.startswith(start) and "regression" in text and "m3" in text


def test_verdicts_do_not_move_with_the_seed(engine: Engine, tmp_path: Path) -> None:
    chain(engine, tmp_path)
    runs = [compare_batches(engine, "v1", "v2", match=["m1=m1-v2"], rounds=200, seed=s) for s in (1, 2)]
    verdicts = [[(r.scenario, r.dimension, r.model, r.verdict) for r in run.comparison.rows] for run in runs]
    assert verdicts[0] == verdicts[1]
    assert [r.ci_low for r in runs[0].comparison.rows] != [r.ci_low for r in runs[1].comparison.rows]


def test_drift_is_there_before_anyone_reviews_the_candidate(engine: Engine, tmp_path: Path) -> None:
    chain(engine, tmp_path, rate_candidate=False)
    result = compare_batches(engine, "v1", "v2", match={"m1": "m1-v2"}, rounds=100)
    assert result.comparison.rows == ()
    assert any("No ratings yet in 'v2'" in n for n in result.notes) and NO_ANCHORS_NOTE in result.notes
    assert {(d.scenario, d.model) for d in result.drift} == {(s, m) for s in SCENARIOS for m in ("m1-v2", "m2")}
    jsonschema.validate(result.as_dict(), load_compare_schema())


def test_anchor_rows_correct_for_the_panel_and_drop_the_no_anchors_note(
    engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With a follow-up's ratings frame as ``frames`` will give it (``is_anchor`` rows naming the baseline's
    outputs), a panel 1 point stricter on everything leaves the unchanged m2 unchanged once corrected."""
    chain(engine, tmp_path)
    real = service.compare_ratings_frame
    seen: list[pd.DataFrame] = []

    def stricter_with_anchors(session: Any, batch_id: int) -> pd.DataFrame:
        frame = real(session, batch_id)
        if not seen:  # the baseline (read first) as it is
            seen.append(frame)
            return frame
        base = seen[0]
        anchors = base[base["sample_id"].isin([f"s{i}" for i in range(0, N_SAMPLES, 3)])].copy()
        both = pd.concat([frame.assign(is_anchor=False), anchors.assign(is_anchor=True)], ignore_index=True)
        both["value"] = (both["value"].astype(int) - 1).clip(lower=1).astype(str)
        return both

    monkeypatch.setattr(service, "compare_ratings_frame", stricter_with_anchors)
    result = compare_batches(engine, "v1", "v2", match=["m1=m1-v2"], rounds=200)
    assert result.has_anchors and NO_ANCHORS_NOTE not in result.notes
    m2 = {r.scenario: r for r in result.comparison.rows if r.model == "m2" and r.dimension == "correctness"}
    for row in m2.values():
        assert row.panel_shift is not None and row.panel_shift < -0.5
        assert row.diff is not None and row.diff < -0.5  # uncorrected, the stricter panel reads as a drop
        assert row.verdict != "regression"
    assert result.as_dict()["anchors"] is True


def test_a_stricter_panel_measured_on_real_anchors_is_not_a_regression(engine: Engine, tmp_path: Path) -> None:
    """A follow-up loaded with ``--follow-up`` and anchors (the other helper's load, through the real frames),
    its panel 1 point stricter on everything, anchors too: uncorrected every model reads as a drop; corrected
    by the measured shift nothing is a regression but m2 in summaries, which really is 1.5 points worse."""
    load(engine, tmp_path, "v1", records({"m1": "m1", "m2": "m2"}))
    import_ratings(
        engine, "v1", ratings(tmp_path / "v1.csv", {(s, m): 3.5 for s in SCENARIOS for m in ("m1", "m2")}, seed=1)
    )
    batch = write_batch(tmp_path / "v2", records({"m1": "m1", "m2": "m2"}, refuse=frozenset({("qa", "m2")})))
    summary = load_batch(
        engine, [batch], None, name="v2", follow_up="v1", anchor_share=0.5, on_leak="flag", open_now=True
    )
    assert summary.anchor_items > 0

    def stricter(i: int, model: str, anchor: bool) -> float:
        worse = 0.0 if anchor or (model, SCENARIOS[i % 2]) != ("m2", "summaries") else 1.5
        return 3.5 + SAMPLE_EFFECT[i] - 1.0 - worse

    rate_items(engine, summary.batch_id, stricter, seed=5)
    result = compare_batches(engine, "v1", "v2", rounds=200)
    assert result.has_anchors and NO_ANCHORS_NOTE not in result.notes
    rows = {(r.scenario, r.dimension, r.model): r for r in result.comparison.rows}
    for (scen, dim, model), row in rows.items():
        assert row.panel_shift is not None and row.n_anchors > 0
        if dim == "correctness":
            assert -1.3 < row.panel_shift < -0.7, row
        if (model, scen) == ("m2", "summaries"):
            assert row.verdict == "regression", row
        else:
            assert row.diff is not None and row.diff < 0  # the stricter panel, uncorrected
            assert row.verdict != "regression", row
    report = result.as_dict()
    jsonschema.validate(report, load_compare_schema())
    assert report["anchors"] is True


def _fails(argv: list[str], capsys) -> str:
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: ")
    return err


def test_each_error_is_ours_in_one_line(engine: Engine, tmp_path: Path, capsys) -> None:
    chain(engine, tmp_path, rate_candidate=False)
    err = _fails(["compare", "v1", "nope", "--out", str(tmp_path / "x.html")], capsys)
    assert "no batch named 'nope'" in err and err.count("\n") == 1
    err = _fails(["compare", "v1", "v1", "--out", str(tmp_path / "x.html")], capsys)
    assert "both 'v1'" in err
    err = _fails(["compare", "v1", "v2", "--match", "m9=m1-v2", "--out", "-"], capsys)
    assert "--match: 'm9' is not a model of baseline batch 'v1' (its models: m1, m2)" in err
    err = _fails(["compare", "v1", "v2", "--match", "m1=m7", "--out", "-"], capsys)
    assert "--match: 'm7' is not a model of candidate batch 'v2' (its models: m1-v2, m2, m3)" in err
    err = _fails(["compare", "v1", "v2", "--match", "m1", "--out", "-"], capsys)
    assert "--match: 'm1' is not OLD=NEW" in err
    err = _fails(["compare", "v1", "v2", "--tolerance", "-1", "--out", "-"], capsys)
    assert "must not be negative" in err
    assert not (tmp_path / "x.html").exists()


def test_batches_that_cannot_be_compared_say_why(engine: Engine, tmp_path: Path, capsys) -> None:
    load(engine, tmp_path, "v1", records({"m1": "m1"}))
    other_rubric = RUBRIC.replace('name = "correctness"', 'name = "accuracy"')
    load(engine, tmp_path, "renamed-dims", records({"m1": "m1"}), rubric=other_rubric)
    with pytest.raises(ReportError, match=r"correctness only in 'v1'.*accuracy only in 'renamed-dims'"):
        compare_batches(engine, "v1", "renamed-dims")
    pairwise = 'mode = "pairwise"\noverlap = 2\n'
    load(engine, tmp_path, "pairs", records({"m1": "m1", "m2": "m2"}), rubric=pairwise)
    with pytest.raises(ReportError, match=r"mode rating in 'v1' but pairwise in 'pairs'"):
        compare_batches(engine, "v1", "pairs")
    load(engine, tmp_path, "elsewhere", records({"m1": "m1"}, prefix="x"))
    err = _fails(["compare", "v1", "elsewhere", "--out", "-"], capsys)
    assert f"'v1' ({N_SAMPLES} samples) and 'elsewhere' ({N_SAMPLES} samples) share no sample id" in err
    assert err.count("\n") == 1
    load(engine, tmp_path, "strangers", records({"z1": "z1"}))
    with pytest.raises(ValidationError, match="no model of candidate batch 'strangers'"):
        compare_batches(engine, "v1", "strangers")
    with pytest.raises(NotFoundError):
        compare_batches(engine, "gone", "v1")


def _pairwise_ratings(path: Path, p_m1_wins: dict[str, float], seed: int) -> Path:
    """Three reviewers per sample judge m1 against ref; m1 wins with probability ``p_m1_wins[scenario]``."""
    rng = np.random.default_rng(seed)
    lines = ["reviewer,sample_id,model_a,model_b,dimension,winner"]
    for i in range(N_SAMPLES):
        p = p_m1_wins[SCENARIOS[i % 2]]
        for who in ("ana", "ben", "cleo"):
            lines.append(f"{who},s{i},m1,ref,overall,{'a' if rng.random() < p else 'b'}")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_pairwise_batches_compare_win_rates_against_the_common_opponent(engine: Engine, tmp_path: Path) -> None:
    pairwise = 'mode = "pairwise"\noverlap = 3\n'
    load(engine, tmp_path, "p1", records({"m1": "m1", "ref": "ref"}), rubric=pairwise)
    changed = records({"m1": "m1", "ref": "ref"}, refuse=frozenset({("qa", "m1")}))  # not the same content
    load(engine, tmp_path, "p2", changed, rubric=pairwise)
    import_ratings(engine, "p1", _pairwise_ratings(tmp_path / "p1.csv", {"qa": 0.5, "summaries": 0.5}, seed=3))
    import_ratings(engine, "p2", _pairwise_ratings(tmp_path / "p2.csv", {"qa": 0.05, "summaries": 0.5}, seed=4))
    result = compare_batches(engine, "p1", "p2", rounds=200)
    rows = {(r.scenario, r.dimension, r.model): r for r in result.comparison.rows}
    qa = rows[("qa", "overall", "m1")]
    assert qa.unit == "win rate against the common opponents" and qa.tolerance == 0.05
    assert qa.verdict == "regression" and qa.diff is not None and qa.diff < -0.3
    assert rows[("summaries", "overall", "m1")].verdict != "regression"
    assert NO_ANCHORS_NOTE in result.notes
    jsonschema.validate(result.as_dict(), load_compare_schema())


def test_the_default_file_name_is_one_file_here_whatever_the_batch_names(
    engine: Engine, tmp_path: Path, capsys, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Batch names are free text: "team/v1 (draft)" must not send the comparison into a folder "team", nor
    ".." out of the folder the command runs in."""
    from sqlalchemy import text

    chain(engine, tmp_path)
    with engine.begin() as conn:
        conn.execute(text("UPDATE batch SET name = 'team/v1 (draft)' WHERE name = 'v1'"))
        conn.execute(text("UPDATE batch SET name = '../v2' WHERE name = 'v2'"))
    here = tmp_path / "here"
    here.mkdir()
    monkeypatch.chdir(here)
    assert main(["compare", "team/v1 (draft)", "../v2", "--match", "m1=m1-v2", "--format", "md"]) == 0
    assert capsys.readouterr().out.startswith("Wrote team_v1_draft-vs-v2.md (md): ")
    assert [p.name for p in here.iterdir()] == ["team_v1_draft-vs-v2.md"]
    assert not (tmp_path / "v2.md").exists()


def test_file_stems_keep_plain_names_and_replace_the_rest() -> None:
    from reviewer_app.batches.output_files import file_stem

    assert file_stem("support-v1.2_final") == "support-v1.2_final"
    assert file_stem("a/b c", "Ünïcode: x") == "a_b_c-vs-Ünïcode_x"
    assert file_stem("отчёт\\v1") == "отчёт_v1"
    assert file_stem("..", fallback="model") == "model"
    assert file_stem("/etc/passwd") == "etc_passwd"
