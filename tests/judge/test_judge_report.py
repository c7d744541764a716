"""The report's "Judge vs panel" section end to end: a batch, a panel that rated a random third of the samples,
a judge on loopback that rated everything (a good one, and one that favours a model), and the report."""

from __future__ import annotations

import csv
import json
import random
from pathlib import Path

import jsonschema
import pytest
from sqlalchemy.engine import Engine

from reviewer_app.cli.main import main
from reviewer_app.domain.report import report_to_dict
from reviewer_app.errors import NotFoundError
from reviewer_app.generation.specs import parse_model_spec
from reviewer_app.judge.runs import judge_batch
from reviewer_app.ratings.files import import_ratings
from reviewer_app.reporting.formats import load_schema, render
from reviewer_app.results.batch_reports import batch_report
from tests.generation.test_runner import FAST
from tests.helpers import write_batch, write_rubric
from tests.support.fake_judge import JudgeBehaviour, fake_judge
from tests.support.fake_openai import Behaviour, running_server

RUBRIC = """
mode = "rating"
overlap = 2
seed = 3
[[dimensions]]
name = "quality"
description = "How good is it?"
scale = "likert"
min = 1
max = 5
level = "ordinal"
"""
MODELS = {"alpha": 0.0, "beta": 0.5, "gamma": 1.0}  # each model's shift on the 1-5 scale
SAMPLES = 30
RATED = 12


def _quality(sample: int, model: str) -> int:
    """Each output's quality, written into its text (the fake judge reads it): a sample effect plus the model's."""
    base = 1.5 + 2.5 * random.Random(f"sample:{sample}").random() + MODELS[model]
    return max(1, min(5, round(base)))


def _batch(engine: Engine, tmp_path: Path) -> None:
    records = [
        {
            "sample_id": f"s{i:02d}",
            "scenario": "qa",
            "prompt": f"Question {i}?",
            "model": model,
            "output": f"Answer {i} from {'favourite ' if model == 'alpha' else ''}team: quality {_quality(i, model)}.",
        }
        for i in range(SAMPLES)
        for model in MODELS
    ]
    batch = write_batch(tmp_path, records)
    from reviewer_app.batches.loading import load_batch

    load_batch(engine, [batch], write_rubric(tmp_path, RUBRIC), name="b")
    rated = random.Random(7).sample(range(SAMPLES), RATED)  # the panel's random subset
    path = tmp_path / "panel.csv"
    with path.open("w", encoding="utf-8", newline="") as f:
        out = csv.writer(f)
        out.writerow(["reviewer", "sample_id", "model", "dimension", "score"])
        for reviewer, noise in (("ann", 1), ("bob", 2)):
            rng = random.Random(reviewer)
            for i in rated:
                for model in MODELS:
                    score = max(1, min(5, _quality(i, model) + rng.choice([0, 0, 0, noise, -noise]) // 2))
                    out.writerow([reviewer, f"s{i:02d}", model, "quality", score])
    import_ratings(engine, "b", path)


def _judge(engine: Engine, name: str, behaviour: JudgeBehaviour | None = None) -> None:
    with running_server(Behaviour(reply=fake_judge(behaviour))) as server:
        report = judge_batch(engine, "b", parse_model_spec(f"{name}={server.base_url}"), policy=FAST, progress=False)
    assert report.failed == 0


def test_a_good_judge_narrows_the_panels_intervals_and_the_section_renders(engine: Engine, tmp_path: Path) -> None:
    _batch(engine, tmp_path)
    before = batch_report(engine, batch="b", rounds=200)
    assert before.judge is None and "judge" not in report_to_dict(before)  # no judge yet: no section
    _judge(engine, "good")
    report = batch_report(engine, batch="b", rounds=200)
    section = report.judge
    assert section is not None
    assert section.run.judge.startswith("judge:good@") and section.run.items == section.run.items_judged == 90
    overall = [a for a in section.assisted if a.dimension == "quality"]
    assert len(overall) == 1
    assisted = overall[0]
    assert assisted.width_ratio is not None and assisted.width_ratio < 0.8  # a judge that tracks the panel
    for row in assisted.models:
        assert row.judged_samples == SAMPLES and row.panel_samples == RATED
        assert row.judge_weight is not None and row.judge_weight > 0.5
        assert row.effective_ratings is not None and row.effective_ratings > row.panel_ratings
    assert [r.model for r in assisted.ranking][0] == "gamma"
    data = report_to_dict(report)
    jsonschema.validate(data, load_schema())
    for fmt in ("html", "md"):
        text = render(report, fmt)
        assert "Judge vs panel" in text and "Judge-assisted rankings" in text and "judge:good@" in text
    # The panel's own sections do not read the judge: the same as before it judged.
    for key in ("scenarios", "overall", "reviewers", "beside"):
        assert json.dumps(data[key]) == json.dumps(report_to_dict(before)[key]), key


def test_a_judge_that_favours_a_model_does_not_move_its_judge_assisted_score(engine: Engine, tmp_path: Path) -> None:
    _batch(engine, tmp_path)
    _judge(engine, "fair")
    _judge(engine, "partial", JudgeBehaviour(favour="favourite", bias=2.0))
    fair = batch_report(engine, batch="b", rounds=200, judge="fair").judge
    partial = batch_report(engine, batch="b", rounds=200).judge  # the latest judge by default
    assert fair is not None and partial is not None and partial.run.judge.startswith("judge:partial@")

    def alpha(section: object) -> tuple[float, float, float]:
        (a,) = [a for a in section.assisted if a.dimension == "quality"]  # type: ignore[attr-defined]
        (row,) = [r for r in a.ranking if r.model == "alpha"]
        (panel,) = [m for m in a.models if m.model == "alpha"]
        assert row.score is not None and panel.panel_score is not None and panel.panel_ci_high is not None
        return row.score, panel.panel_score, panel.panel_ci_high

    score, panel, _ = alpha(partial)
    fair_score, _, _ = alpha(fair)
    # The judge adds 2 points to alpha's answers; corrected by its error where the panel rated, alpha's
    # judge-assisted score stays with the panel's, within half a point, not 2 above it.
    assert abs(score - panel) < 0.5 and abs(score - fair_score) < 0.5


def test_report_judge_names_an_unknown_judge_and_lists_the_ones_there_are(
    engine: Engine, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _batch(engine, tmp_path)
    _judge(engine, "good")
    with pytest.raises(NotFoundError, match="judge:good@"):
        batch_report(engine, batch="b", rounds=200, judge="nobody")
    assert main(["report", "b", "--judge", "good", "--format", "md", "--out", str(tmp_path / "r.md")]) == 0
    assert "## Judge vs panel" in (tmp_path / "r.md").read_text(encoding="utf-8")
