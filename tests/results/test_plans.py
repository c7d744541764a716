"""``blind-review plan``: samples per scenario for a gap, from stated components or a pilot batch, through the
report's own simulated test."""

from __future__ import annotations

import json

import pytest
from sqlalchemy.engine import Engine

from reviewer_app.analysis.power import Components
from reviewer_app.cli.main import main
from reviewer_app.errors import ReportError
from reviewer_app.results.plans import parse_components, parse_ks, plan_from_assumptions, plan_from_pilot


def test_stated_components_parse_and_bad_ones_say_what_to_write() -> None:
    assert parse_components("output=0.4,reviewer=0.1,residual=0.6") == Components(0.0, 0.4, 0.1, 0.6)
    assert parse_components("sample=1, output=0.4,reviewer=0.1,residual=0.6").sample == 1.0
    with pytest.raises(ReportError, match="NAME=VARIANCE"):
        parse_components("output=-1,reviewer=0.1,residual=0.6")
    with pytest.raises(ReportError, match="needs residual"):
        parse_components("output=0.4,reviewer=0.1")
    assert parse_ks("1, 3") == [1, 3]
    with pytest.raises(ReportError, match="--k"):
        parse_ks("0,2")


def test_more_reviewers_help_where_rating_noise_dominates_and_not_where_outputs_vary() -> None:
    noisy = plan_from_assumptions(
        Components(0.0, 0.05, 0.1, 0.9), scenarios=["noisy ratings"], models=4, gap=0.5, ks=[1, 3]
    )
    varied = plan_from_assumptions(
        Components(0.0, 0.9, 0.01, 0.09), scenarios=["varied outputs"], models=4, gap=0.5, ks=[1, 3]
    )
    n = {r.k: r.samples for r in noisy.rows}
    v = {r.k: r.samples for r in varied.rows}
    assert n[1] is not None and n[3] is not None and n[3] < 0.5 * n[1]  # k divides the noise: far fewer samples
    assert v[1] is not None and v[3] is not None and v[3] > 0.8 * v[1]  # it cannot divide the outputs' own spread
    assert "the fewest judgements at k = 1" in varied.sentences[0]
    row = varied.rows[0]
    assert row.judgements == row.samples * 4 * 1  # type: ignore[operator]
    powers = [p.power for p in varied.curve]
    assert powers == sorted(powers) or max(abs(a - b) for a, b in zip(powers, sorted(powers), strict=True)) < 0.03
    below = [p for p in varied.curve if v[1] is not None and p.samples < v[1]]
    assert below and all(p.power < 0.8 + 3 * p.mc_se for p in below)
    again = plan_from_assumptions(
        Components(0.0, 0.9, 0.01, 0.09), scenarios=["varied outputs"], models=4, gap=0.5, ks=[1, 3]
    )
    assert again == varied  # a fixed seed: the same plan every time


def test_a_pilot_batch_plans_each_of_its_scenarios(engine: Engine, demo: dict[str, str]) -> None:
    plan = plan_from_pilot(engine, "demo", gap=0.15, ks=[1, 2])
    assert plan.models == 4 and {r.scenario for r in plan.rows} == {"code", "data", "support"}
    assert plan.source == "pilot batch demo, overall"
    assert all(set(c) == {"sample", "output", "reviewer", "residual"} for c in plan.components.values())
    with pytest.raises(ReportError, match="not a numeric question"):
        plan_from_pilot(engine, "demo", gap=0.15, ks=[1], dimension="nope")
    with pytest.raises(ReportError, match="pairwise"):
        plan_from_pilot(engine, "demo-pairwise", gap=0.15, ks=[1])
    with pytest.raises(ReportError, match="above 0"):
        plan_from_pilot(engine, "demo", gap=0.0, ks=[1])


def test_the_command_prints_the_plan_and_its_json(
    engine: Engine, demo: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["plan", "--pilot", "demo", "--dimension", "correctness", "--gap", "0.5", "--k", "1"]) == 0
    out = capsys.readouterr().out
    assert "Plan for 4 models, a gap of 0.5, 80% power; components from pilot batch demo, correctness." in out
    assert "samples needed" in out and "Power curve" in out
    argv = ["plan", "--assume", "output=0.4,reviewer=0.1,residual=0.6", "--models", "3", "--gap", "0.5"]
    assert main([*argv, "--format", "json", "--k", "2", "--scenarios", "qa,code"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [r["scenario"] for r in data["rows"]] == ["qa", "code"] and data["rows"][0]["k"] == 2
    assert main(["plan", "--gap", "0.5"]) == 1
    assert "either --pilot BATCH or --assume" in capsys.readouterr().err
    assert main(["plan", "--assume", "output=0.4,reviewer=0.1,residual=0.6", "--gap", "0.5"]) == 1
    assert "--models" in capsys.readouterr().err
