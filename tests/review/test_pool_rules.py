"""Pool claims: sides counterbalanced with a private coin per reviewer, slots only for the reviewer role (a
lead or an admin only when an admin names them, and then marked), the first answer wins a contested slot,
and comments have a length limit."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import func, select
from sqlalchemy.engine import Engine
from sqlmodel import col

from reviewer_app.batches.load_summary import LoadSummary
from reviewer_app.batches.loading import load_batch
from reviewer_app.domain.enums import AssignmentStatus
from reviewer_app.errors import BatchClosedError, ConfigError, ValidationError
from reviewer_app.people.people import add_reviewer
from reviewer_app.results.batch_reports import batch_report
from reviewer_app.review.assignment import assign
from reviewer_app.review.reviews import next_item, submit_review
from reviewer_app.settings import max_comment_chars
from storage.engine import read_session
from storage.models import Assignment
from storage.repositories.demo import shown_models
from storage.repositories.results.frames import ratings_frame
from tests.helpers import PAIRWISE_RUBRIC, RATING_RUBRIC, expire_reservations, make_records, write_batch, write_rubric
from tests.support.fixed_secrets import fixed_batch_secrets

ANSWER = {"correctness": "4", "follows_format": "1"}


def _rating_batch(engine: Engine, tmp_path: Path, *, samples: int, overlap: int) -> LoadSummary:
    return load_batch(
        engine,
        [write_batch(tmp_path, make_records(samples, ["m1"]))],
        write_rubric(tmp_path, RATING_RUBRIC.format(overlap=overlap)),
        name="pool",
        open_now=True,
    )


def _done(engine: Engine) -> int:
    with read_session(engine) as s:
        return int(s.execute(select(func.count()).where(col(Assignment.status) == AssignmentStatus.DONE)).scalar_one())


def test_pool_sides_are_counterbalanced_with_a_private_coin_per_reviewer(
    sqlite_engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A fixed batch secret: with a fresh one, all six reviewers' first coins fell the same way in 1 run of 32
    # (a fresh-clone CI failure, December 2026); the coins' spread is test_seed_blindness's.
    fixed_batch_secrets(monkeypatch, "pool-sides")
    summary = load_batch(
        sqlite_engine,
        [write_batch(tmp_path, make_records(12, ["alpha", "beta"]))],
        write_rubric(tmp_path, PAIRWISE_RUBRIC.format(overlap=6)),
        name="pairs",
        open_now=True,
    )
    sequences = []
    for i in range(6):
        person = add_reviewer(sqlite_engine, f"r{i}")[0]
        lefts = []
        while (view := next_item(sqlite_engine, summary.batch_id, person.id)) is not None:
            with read_session(sqlite_engine) as s:
                lefts.append(shown_models(s, view.assignment_id)[0])
            submit_review(sqlite_engine, person.id, view.assignment_id, {"overall": "tie"})
        assert len(lefts) == 12
        assert abs(lefts.count("alpha") - lefts.count("beta")) <= 1  # counterbalanced
        sequences.append("".join("a" if m == "alpha" else "b" for m in lefts))
    # Ties are settled by each reviewer's own coin: not "abab..." for everyone.
    assert len(set(sequences)) > 1
    assert {s[0] for s in sequences} == {"a", "b"}


def test_only_people_with_the_reviewer_role_take_pool_slots(engine: Engine, tmp_path: Path) -> None:
    summary = _rating_batch(engine, tmp_path, samples=3, overlap=1)
    lead = add_reviewer(engine, "lee", "lead")[0]
    admin = add_reviewer(engine, "ada", "admin")[0]
    ann = add_reviewer(engine, "ann")[0]
    assert next_item(engine, summary.batch_id, lead.id) is None
    assert next_item(engine, summary.batch_id, admin.id) is None
    assert next_item(engine, summary.batch_id, ann.id) is not None


def test_a_lead_takes_slots_only_when_named_and_the_ratings_frame_marks_them(engine: Engine, tmp_path: Path) -> None:
    summary = _rating_batch(engine, tmp_path, samples=4, overlap=2)
    for name in ("ann", "bob"):
        add_reviewer(engine, name)
    lead = add_reviewer(engine, "lee", "lead")[0]
    plan = assign(engine, "pool")
    assert set(plan.per_reviewer) == {"ann", "bob"}  # the default: the reviewer role only
    other = load_batch(
        engine,
        [write_batch(tmp_path / "b", make_records(4, ["m2"]))],
        write_rubric(tmp_path / "b", RATING_RUBRIC.format(overlap=2)),
        name="with-lead",
        open_now=True,
    )
    assert assign(engine, "with-lead", ["ann", "lee"]).per_reviewer == {"ann": 4, "lee": 4}
    view = next_item(engine, other.batch_id, lead.id)
    assert view is not None
    submit_review(engine, lead.id, view.assignment_id, ANSWER)
    with read_session(engine) as s:
        frame = ratings_frame(s, other.batch_id)
        assert ratings_frame(s, summary.batch_id).empty
    assert set(frame["rater_role"]) == {"lead"} and list(frame["reviewer"].unique()) == ["lee"]
    report = batch_report(engine, batch="with-lead", rounds=100)
    marked = [w for block in (*report.scenarios, report.overall) for w in block.warnings if "unblinded" in w]
    assert len(marked) == 2  # the scenario rated and "All scenarios"
    assert all("1 of 1 judgements come from lee, who can see unblinded results" in w for w in marked)


def test_the_first_answer_wins_a_slot_whose_reservation_expired(engine: Engine, tmp_path: Path) -> None:
    summary = _rating_batch(engine, tmp_path, samples=1, overlap=1)
    slow, fast = add_reviewer(engine, "slow")[0], add_reviewer(engine, "fast")[0]
    held = next_item(engine, summary.batch_id, slow.id)
    assert held is not None
    expire_reservations(engine, held.assignment_id)
    opened = next_item(engine, summary.batch_id, fast.id)  # fast merely opens the item
    assert opened is not None
    submit_review(engine, slow.id, held.assignment_id, ANSWER)  # slow finished first: kept
    with pytest.raises(BatchClosedError, match="another reviewer submitted their answer to it first"):
        submit_review(engine, fast.id, opened.assignment_id, ANSWER)
    assert _done(engine) == 1
    with read_session(engine) as s:  # fast's released slot is gone; nothing else changed
        rows = s.execute(select(col(Assignment.reviewer_id), col(Assignment.status))).all()
    assert rows == [(slow.id, AssignmentStatus.DONE)]
    assert next_item(engine, summary.batch_id, fast.id) is None


def test_an_answer_after_can_t_judge_never_takes_the_item_past_k(engine: Engine, tmp_path: Path) -> None:
    summary = _rating_batch(engine, tmp_path, samples=1, overlap=1)
    ann, bob = add_reviewer(engine, "ann")[0], add_reviewer(engine, "bob")[0]
    first = next_item(engine, summary.batch_id, ann.id)
    assert first is not None
    submit_review(engine, ann.id, first.assignment_id, {}, cant_judge="not my field")
    taken = next_item(engine, summary.batch_id, bob.id)
    assert taken is not None
    submit_review(engine, bob.id, taken.assignment_id, ANSWER)
    with pytest.raises(BatchClosedError, match="since you said you could not judge it"):
        submit_review(engine, ann.id, first.assignment_id, ANSWER)
    assert _done(engine) == 1


def test_comments_have_a_length_limit(engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    summary = _rating_batch(engine, tmp_path, samples=1, overlap=1)
    ann = add_reviewer(engine, "ann")[0]
    view = next_item(engine, summary.batch_id, ann.id)
    assert view is not None
    with pytest.raises(ValidationError, match="Your comment is 5,001 characters long; the limit is 5,000"):
        submit_review(engine, ann.id, view.assignment_id, ANSWER, comment="x" * 5001)
    monkeypatch.setenv("BLIND_REVIEW_MAX_COMMENT_CHARS", "10")
    with pytest.raises(ValidationError, match="Your reason is 11 characters long"):
        submit_review(engine, ann.id, view.assignment_id, {}, cant_judge="y" * 11)
    submit_review(engine, ann.id, view.assignment_id, ANSWER, comment="  fine.  ")
    assert _done(engine) == 1


def test_the_comment_limit_is_a_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    assert max_comment_chars() == 5000
    for bad in ("many", "0", "-1", "2.5"):
        monkeypatch.setenv("BLIND_REVIEW_MAX_COMMENT_CHARS", bad)
        with pytest.raises(ConfigError, match="BLIND_REVIEW_MAX_COMMENT_CHARS"):
            max_comment_chars()
