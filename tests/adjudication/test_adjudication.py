"""Adjudication end to end on both databases: the queue holds exactly the disputes, shows them blind, takes a
ruling with a reason on the adjudicator's own sides, and the report lists it and (asked to) ranks with it."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select
from sqlalchemy.engine import Engine

from reviewer_app.adjudication import adjudicable_batches, case_view, queue, rule
from reviewer_app.batches.loading import load_batch
from reviewer_app.domain.enums import Role
from reviewer_app.domain.views import Person
from reviewer_app.errors import AdjudicationError, AuthError
from reviewer_app.people.people import add_reviewer, get_person
from reviewer_app.ratings.files import import_ratings
from reviewer_app.results.batch_reports import batch_report
from storage.engine import read_session
from storage.models import Batch, Item, Model, Output, Sample
from tests.helpers import write_batch, write_rubric

PANEL = ("rev-ana", "rev-ben", "rev-cleo")
RATED = "mx-round"  # a batch name that names a model: reviewers (and adjudicators) see "Batch <id>"
RATING_RUBRIC = """
mode = "rating"
overlap = 3
seed = 5
[[dimensions]]
name = "correctness"
description = "Is every fact right?"
scale = "likert"
min = 1
max = 5
level = "ordinal"

[adjudication]
adjudicators = ["senior"]
"""
PAIRWISE_RUBRIC = """
mode = "pairwise"
overlap = 3
seed = 5
"""


def _records(n: int, models: tuple[str, ...]) -> list[dict[str, Any]]:
    return [
        {"sample_id": f"smp{i}", "scenario": "qa", "prompt": f"Question {i}?", "model": m,
         "output": f"Answer {i}, version {k}."}
        for i in range(n)
        for k, m in enumerate(models)
    ]  # fmt: skip


def _csv(path: Path, header: list[str], rows: list[list[Any]]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows(rows)
    return path


def _rating_batch(engine: Engine, tmp_path: Path) -> None:
    """Six samples, models mx and my; on smp0 the panel says 1, 5, 5 for mx (disputed), on smp1 2, 3, 4 (not)."""
    batch = write_batch(tmp_path / "r", _records(6, ("mx", "my")))
    load_batch(engine, [batch], write_rubric(tmp_path / "r", RATING_RUBRIC), name=RATED, on_leak="flag")
    scores = {("smp0", "mx"): (1, 5, 5), ("smp1", "mx"): (2, 3, 4)}
    rows = []
    for i in range(6):
        for m in ("mx", "my"):
            for who, score in zip(PANEL, scores.get((f"smp{i}", m), (4, 4, 4)), strict=True):
                comment = "Wrong date in the second line." if score == 1 else ""
                rows.append([who, f"smp{i}", m, "correctness", score, comment])
    header = ["reviewer", "sample_id", "model", "dimension", "score", "comment"]
    import_ratings(engine, RATED, _csv(tmp_path / "r.csv", header, rows))


def _person(engine: Engine, name: str, role: str) -> Person:
    add_reviewer(engine, name, role)
    return get_person(engine, name)


def _batch_id(engine: Engine, name: str) -> int:
    with read_session(engine) as session:
        return int(session.execute(select(Batch.id).where(Batch.name == name)).scalar_one())


def test_the_queue_holds_the_disputes_blind(engine: Engine, tmp_path: Path) -> None:
    _rating_batch(engine, tmp_path)
    lead = _person(engine, "boss", "lead")
    batch_id = _batch_id(engine, RATED)
    q = queue(engine, lead, batch_id)
    assert (len(q.tokens), q.open, q.ruled) == (1, 1, 0)
    assert q.rule == "correctness: scores 3 or more points apart"
    case = case_view(engine, lead, batch_id, q.tokens[0])
    assert sorted(line.answer for line in case.panel) == ["1", "5", "5"]
    assert [line.reviewer for line in case.panel] == ["Reviewer 1", "Reviewer 2", "Reviewer 3"]
    assert [line.comment for line in case.panel if line.comment] == ["Wrong date in the second line."]
    assert case.item.outputs[0].text == "Answer 0, version 0."
    # Blind: no reviewer, model, sample id or item id in anything the page gets.
    shown = repr(case) + repr(q)
    for secret in (*PANEL, "mx", "my", "smp0"):
        assert secret not in shown, secret
    with read_session(engine) as session:
        item_ids = {str(i) for i in session.execute(select(Item.id)).scalars()}
    assert q.tokens[0] not in item_ids and len(q.tokens[0]) == 24
    assert q.title == f"Batch {batch_id}"
    # A new answer that disagrees is in the queue at the next look (the disputes are kept per ratings revision).
    header = ["reviewer", "sample_id", "model", "dimension", "score"]
    import_ratings(engine, RATED, _csv(tmp_path / "more.csv", header, [["rev-dan", "smp2", "my", "correctness", 1]]))
    assert len(queue(engine, lead, batch_id).tokens) == 2


def test_a_ruling_needs_a_reason_and_an_answer_the_question_takes(engine: Engine, tmp_path: Path) -> None:
    _rating_batch(engine, tmp_path)
    lead = _person(engine, "boss", "lead")
    batch_id = _batch_id(engine, RATED)
    token = queue(engine, lead, batch_id).tokens[0]
    with pytest.raises(AdjudicationError, match="reason"):
        rule(engine, lead, batch_id, token, "4", "   ")
    with pytest.raises(AdjudicationError, match="not an answer"):
        rule(engine, lead, batch_id, token, "7", "the date is right")
    with pytest.raises(AdjudicationError, match="not in your queue"):
        rule(engine, lead, batch_id, "0" * 24, "4", "the date is right")
    rule(engine, lead, batch_id, token, "4", "The date is right; one reviewer misread it.")
    q = queue(engine, lead, batch_id)
    assert (q.open, q.ruled) == (0, 1)
    case = case_view(engine, lead, batch_id, token)
    assert (case.ruled_value, case.ruled_by, case.reason) == ("4", "you", "The date is right; one reviewer misread it.")
    rule(engine, lead, batch_id, token, "5", "On a second look, fully right.")  # a new ruling replaces the first
    assert case_view(engine, lead, batch_id, token).ruled_value == "5"


def test_only_leads_and_named_senior_reviewers_adjudicate(engine: Engine, tmp_path: Path) -> None:
    _rating_batch(engine, tmp_path)
    batch_id = _batch_id(engine, RATED)
    senior = _person(engine, "senior", "reviewer")
    plain = _person(engine, "plain", "reviewer")
    assert [b for b, _ in adjudicable_batches(engine, senior)] == [batch_id]
    assert adjudicable_batches(engine, plain) == []
    with pytest.raises(AuthError):
        queue(engine, plain, batch_id)
    assert len(queue(engine, senior, batch_id).tokens) == 1
    # Nobody rules on a disagreement they are part of: a panel member named adjudicator sees none of theirs.
    member = get_person(engine, PANEL[0])
    assert member.role == Role.REVIEWER
    lead_member = Person(member.id, member.name, Role.LEAD)
    assert queue(engine, lead_member, batch_id).tokens == ()


def test_the_report_lists_rulings_and_ranks_with_them_only_when_asked(engine: Engine, tmp_path: Path) -> None:
    _rating_batch(engine, tmp_path)
    lead = _person(engine, "boss", "lead")
    batch_id = _batch_id(engine, RATED)
    before = batch_report(engine, batch=RATED, rounds=200)
    assert before.adjudication is not None
    assert (before.adjudication.disputed, before.adjudication.ruled, before.adjudication.items) == (1, 0, ())
    rule(engine, lead, batch_id, queue(engine, lead, batch_id).tokens[0], "3", "Half right.")
    panel = batch_report(engine, batch=RATED, rounds=200)
    ruled = batch_report(engine, batch=RATED, rounds=200, adjudicated=True)
    assert panel.adjudication is not None and ruled.adjudication is not None
    (item,) = panel.adjudication.items
    assert (item.sample_id, item.models, item.panel, item.ruling, item.reason, item.adjudicator) == (
        "smp0",
        ("mx",),
        "1, 5, 5",
        "3",
        "Half right.",
        "boss",
    )
    assert not panel.adjudication.used and ruled.adjudication.used
    score = {(r.dimension, r.model): r.score for r in panel.scenarios[0].ranking}
    score_ruled = {(r.dimension, r.model): r.score for r in ruled.scenarios[0].ranking}
    assert score == {(r.dimension, r.model): r.score for r in before.scenarios[0].ranking}
    # mx's mean correctness over six samples: (11/3 + 3 + 4 * 4) / 6 as rated, (3 + 3 + 4 * 4) / 6 as ruled.
    assert score[("correctness", "mx")] == pytest.approx((11 / 3 + 3 + 16) / 6)
    assert score_ruled[("correctness", "mx")] == pytest.approx((3 + 3 + 16) / 6)
    assert score_ruled[("correctness", "my")] == score[("correctness", "my")]
    # Agreement describes the panel as it answered, whichever ranking.
    assert ruled.scenarios[0].agreement == panel.scenarios[0].agreement
    assert any("use 1 ruling" in w for w in ruled.overall.warnings)


def test_a_pairwise_ruling_is_stored_in_the_items_own_order(engine: Engine, tmp_path: Path) -> None:
    batch = write_batch(tmp_path / "p", _records(4, ("mx", "my")))
    load_batch(engine, [batch], write_rubric(tmp_path / "p", PAIRWISE_RUBRIC), name="paired", on_leak="flag")
    rows = [[who, f"smp{i}", "mx", "my", "overall", "a"] for i in range(4) for who in PANEL]
    rows[1][-1] = "b"  # smp0: a, b, a: opposite verdicts
    header = ["reviewer", "sample_id", "model_a", "model_b", "dimension", "winner"]
    import_ratings(engine, "paired", _csv(tmp_path / "p.csv", header, rows))
    batch_id = _batch_id(engine, "paired")
    lead = _person(engine, "boss", "lead")
    q = queue(engine, lead, batch_id)
    assert len(q.tokens) == 1 and q.rule.startswith("opposite verdicts")
    case = case_view(engine, lead, batch_id, q.tokens[0])
    with read_session(engine) as session:
        item = session.execute(
            select(Item)
            .join(Sample, Sample.id == Item.sample_id)
            .where(Sample.batch_id == batch_id, Sample.key == "smp0")
        ).scalar_one()
        out_a, out_b = (session.get(Output, i) for i in (item.output_a_id, item.output_b_id))
        assert out_a is not None and out_b is not None
        first, second = (session.get(Model, o.model_id).name for o in (out_a, out_b))  # type: ignore[union-attr]
    a_on_left = case.item.outputs[0].text == out_a.text
    word = {first: "A is better" if a_on_left else "B is better", second: "B is better" if a_on_left else "A is better"}
    votes = [line.answer for line in case.panel]
    assert sorted(votes) == sorted([word["mx"], word["mx"], word["my"]])
    rule(engine, lead, batch_id, q.tokens[0], "left", "The left one answers the question.")
    report = batch_report(engine, batch="paired", rounds=200)
    assert report.adjudication is not None
    (ruled,) = report.adjudication.items
    assert ruled.ruling == (first if a_on_left else second)
    assert (ruled.models, ruled.panel) == (
        ("mx", "my"),
        "mx 2, my 1",
    )  # the report's pairs: in the models' names' order


def test_the_cli_lists_disputes_and_reports_with_rulings(
    engine: Engine, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    import jsonschema

    from reviewer_app.cli.main import main
    from reviewer_app.reporting.formats import load_schema

    _rating_batch(engine, tmp_path)
    assert main(["disputes", RATED]) == 0
    said = capsys.readouterr().out
    assert "Disputed when: correctness: scores 3 or more points apart." in said
    assert "qa / smp0 / mx / correctness: panel 1, 5, 5; open" in said
    lead = _person(engine, "boss", "lead")
    batch_id = _batch_id(engine, RATED)
    rule(engine, lead, batch_id, queue(engine, lead, batch_id).tokens[0], "3", "Half right.")
    assert main(["disputes", RATED, "--out", str(tmp_path / "d.csv")]) == 0
    assert "1 disagreement(s), 1 ruled." in capsys.readouterr().out
    with (tmp_path / "d.csv").open(encoding="utf-8") as f:
        (row,) = list(csv.DictReader(f))
    assert (row["models"], row["panel"], row["ruling"], row["reason"], row["adjudicator"]) == (
        "mx", "1, 5, 5", "3", "Half right.", "boss"
    )  # fmt: skip
    for flags, used in (([], False), (["--adjudicated"], True)):
        out = tmp_path / f"r{used}.json"
        assert main(["report", RATED, "--format", "json", "--rounds", "100", "--out", str(out), *flags]) == 0
        report = json.loads(out.read_text("utf-8"))
        jsonschema.validate(report, load_schema())
        assert report["adjudication"]["used"] is used and report["adjudication"]["ruled"] == 1
    prefs = tmp_path / "prefs.jsonl"
    assert main(["export-preferences", RATED, "--out", str(prefs), "--adjudicated"]) == 0
    assert "Adjudicated: 1 record(s) read an adjudicator's ruling in the panel's place" in capsys.readouterr().out
    capsys.readouterr()
    assert main(["disputes", "no-such-batch"]) == 1
    assert "no batch named 'no-such-batch'" in capsys.readouterr().err


def test_the_api_reports_with_rulings_when_asked(engine: Engine, tmp_path: Path) -> None:
    from reviewer_app.client import BlindReview
    from tests.support.api_server import role_tokens, running_api

    _rating_batch(engine, tmp_path)
    lead = _person(engine, "boss", "lead")
    batch_id = _batch_id(engine, RATED)
    rule(engine, lead, batch_id, queue(engine, lead, batch_id).tokens[0], "3", "Half right.")
    tokens = role_tokens(engine)
    with running_api(engine) as url, BlindReview(url, tokens.lead) as br:
        assert br.report(RATED, rounds=100)["adjudication"]["used"] is False
        ruled = br.report(RATED, rounds=100, adjudicated=True)
        (dispute,) = br.disputes(RATED)
        as_answered = br.preferences_frame(RATED).set_index("sample_id")
        with_rulings = br.preferences_frame(RATED, adjudicated=True).set_index("sample_id")
        with BlindReview(url, tokens.reviewer) as reviewer, pytest.raises(AuthError):
            reviewer.disputes(RATED)
    assert ruled["adjudication"]["used"] is True
    assert ruled["adjudication"]["items"][0]["reason"] == "Half right."
    assert (dispute.sample_id, dispute.models, dispute.panel, dispute.ruling, dispute.adjudicator) == (
        "smp0", "mx", "1, 5, 5", "3", "boss"
    )  # fmt: skip
    # smp0: my (4, 4, 4) over mx (1, 5, 5) by one reviewer of three; the ruling gives mx 3 in each one's place.
    cols = ["chosen_model", "chosen_votes", "rejected_votes", "agreement", "adjudicated"]
    assert tuple(as_answered.loc["smp0", cols]) == ("my", 1, 2, pytest.approx(1 / 3), False)
    assert tuple(with_rulings.loc["smp0", cols]) == ("my", 3, 0, 1.0, True)
    assert not with_rulings.drop(index="smp0")["adjudicated"].any()
