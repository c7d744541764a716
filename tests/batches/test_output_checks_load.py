"""Automatic checks at load: run on every output and stored per output; bad definitions are located load
errors and nothing is written; the rubric's scenario checks join the samples' own; reviewers see results only
when the rubric says ``show_checks``; follow-ups and ``rerun`` keep a sample's checks."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, select
from sqlalchemy.engine import Engine

from reviewer_app.batches.loading import load_batch
from reviewer_app.errors import BatchValidationError, RubricError
from reviewer_app.people.people import add_reviewer
from reviewer_app.review.reviews import next_item
from storage.engine import read_session
from storage.models import Batch, Output, Sample
from storage.repositories.results.outputs import checks_frame
from tests.helpers import RATING_RUBRIC, make_records, write_batch, write_rubric

JSON_AND_SHORT = [{"type": "json"}, {"type": "max_words", "value": 3, "name": "short"}]
SCENARIO_CHECK = """
[scenarios.qa]
checks = [{ type = "contains", text = "ANSWER", name = "says answer" }]
"""


def _records(n: int = 6) -> list[dict[str, Any]]:
    """m1 answers in JSON; m2 in prose, except on even samples."""
    out = []
    for rec in make_records(n, ["m1", "m2"]):
        i = int(rec["sample_id"][1:])
        good = rec["model"] == "m1" or i % 2 == 0
        text = json.dumps({"answer": i}) if good else f"The answer is {i}, I think."
        out.append({**rec, "output": text, "checks": JSON_AND_SHORT})
    return out


def _results(engine: Engine) -> dict[tuple[str, str, str], bool]:
    with read_session(engine) as session:
        frame = checks_frame(session, 1)
    return {(r.sample_id, r.model, r.check): bool(r.passed) for r in frame.itertuples()}


def test_every_output_goes_through_its_sample_and_scenario_checks(engine: Engine, tmp_path: Path) -> None:
    rubric = write_rubric(tmp_path, RATING_RUBRIC.format(overlap=1) + SCENARIO_CHECK)
    summary = load_batch(engine, [write_batch(tmp_path, _records())], rubric, name="b", open_now=True)
    results = _results(engine)
    # qa holds the even samples (make_records alternates qa, summaries): three checks there, two elsewhere.
    assert len(results) == 3 * 3 * 2 + 3 * 2 * 2
    assert results[("s1", "m2", "json")] is False and results[("s1", "m1", "json")] is True
    assert results[("s0", "m2", "json")] is True
    assert results[("s1", "m2", "short")] is False  # "The answer is 1, I think." is 6 words
    assert results[("s0", "m1", "says answer")] is True  # case-insensitive by default
    assert ("s1", "m1", "says answer") not in results  # s1 is in "summaries": no scenario check there
    assert summary.checks == {"json": (9, 12), "short": (9, 12), "says answer": (6, 6)}
    assert any("automatic checks (passed / run): json 9/12" in line for line in summary.lines())
    with read_session(engine) as session:
        stored = session.execute(select(Sample.checks_json).where(Sample.key == "s0")).scalar_one()
        stored_results = [json.loads(r) for r in session.execute(select(Output.check_results)).scalars() if r]
    failed = [(name, detail) for results in stored_results for name, ok, detail in results if not ok]
    assert ("short", "6 words, over 3") in failed
    assert all(detail for _name, detail in failed)  # a failed check says why
    assert json.loads(stored) == JSON_AND_SHORT  # the sample's own checks, as written


def test_a_bad_check_definition_is_a_located_error_and_nothing_is_written(engine: Engine, tmp_path: Path) -> None:
    records = _records()
    records[3] = {**records[3], "checks": [{"type": "regex", "pattern": "(["}]}
    records[5] = {**records[5], "checks": [{"type": "max_words"}]}
    with pytest.raises(BatchValidationError) as caught:
        load_batch(engine, [write_batch(tmp_path, records)], write_rubric(tmp_path, RATING_RUBRIC.format(overlap=1)),
                   name="b", open_now=True)  # fmt: skip
    problems = [(p.line, p.field) for p in caught.value.problems]
    assert (4, "checks[0].pattern") in problems and (6, "checks[0].value") in problems
    with read_session(engine) as session:
        assert session.execute(select(func.count()).select_from(Batch)).scalar() == 0


def test_outputs_of_one_sample_must_carry_the_same_checks(engine: Engine, tmp_path: Path) -> None:
    records = _records()
    records[1] = {**records[1], "checks": [{"type": "json"}]}  # s0's second output
    with pytest.raises(BatchValidationError) as caught:
        load_batch(engine, [write_batch(tmp_path, records)], write_rubric(tmp_path, RATING_RUBRIC.format(overlap=1)),
                   name="b", open_now=True)  # fmt: skip
    [problem] = caught.value.problems
    assert problem.line == 2 and "checks" in problem.message


def test_a_sample_check_named_like_its_scenarios_is_refused_whole(engine: Engine, tmp_path: Path) -> None:
    records = [{**r, "checks": [{"type": "json", "name": "says answer"}]} for r in _records()]
    rubric = write_rubric(tmp_path, RATING_RUBRIC.format(overlap=1) + SCENARIO_CHECK)
    with pytest.raises(BatchValidationError) as caught:
        load_batch(engine, [write_batch(tmp_path, records)], rubric, name="b", open_now=True)
    assert {p.field for p in caught.value.problems} == {"checks"}
    assert "'says answer'" in caught.value.problems[0].message
    with read_session(engine) as session:
        assert session.execute(select(func.count()).select_from(Batch)).scalar() == 0


def test_a_bad_scenario_check_in_the_rubric_is_a_rubric_error(engine: Engine, tmp_path: Path) -> None:
    bad = RATING_RUBRIC.format(overlap=1) + '\n[scenarios.qa]\nchecks = [{ type = "one_of" }]\n'
    with pytest.raises(RubricError) as caught:
        load_batch(engine, [write_batch(tmp_path, _records())], write_rubric(tmp_path, bad), name="b", open_now=True)
    assert caught.value.problems[0].field == "scenarios.qa.checks[0].values"


def test_checks_come_from_a_csv_cell_holding_json(engine: Engine, tmp_path: Path) -> None:
    path = tmp_path / "b.csv"
    path.write_text(
        "sample_id,scenario,prompt,model,output,checks\n"
        's1,qa,Give JSON,m1,"{""a"": 1}","[{""type"": ""json""}]"\n'
        's1,qa,Give JSON,m2,not json,"[{""type"": ""json""}]"\n'
    )
    load_batch(engine, [path], write_rubric(tmp_path, RATING_RUBRIC.format(overlap=1)), name="b", open_now=True)
    assert _results(engine) == {("s1", "m1", "json"): True, ("s1", "m2", "json"): False}
    bad = tmp_path / "bad.csv"
    bad.write_text("sample_id,scenario,prompt,model,output,checks\ns1,qa,Q,m1,x,[{type: json}]\n")
    with pytest.raises(BatchValidationError) as caught:
        load_batch(engine, [bad], write_rubric(tmp_path, RATING_RUBRIC.format(overlap=1)), name="c", open_now=True)
    assert [(p.line, p.field) for p in caught.value.problems] == [(2, "checks")]


@pytest.mark.parametrize("show", [False, True])
def test_reviewers_see_check_results_only_when_the_rubric_says_so(engine: Engine, tmp_path: Path, show: bool) -> None:
    text = RATING_RUBRIC.format(overlap=1).replace("seed = 11", f"seed = 11\nshow_checks = {str(show).lower()}")
    load_batch(engine, [write_batch(tmp_path, _records())], write_rubric(tmp_path, text), name="b", open_now=True)
    reviewer, _link = add_reviewer(engine, "ann")
    view = next_item(engine, 1, reviewer.id)
    assert view is not None
    [output] = view.outputs
    if show:
        assert [c.name for c in output.checks] == ["json", "short"]
    else:
        assert output.checks == ()
