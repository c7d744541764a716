"""Races the database must settle: a submit on an expired reservation while a claim of the same item is in
progress (PostgreSQL: the submit waits for the claim and counts it), and two loads of the same content at
the same moment (one batch, and the same message on both databases)."""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, select, text
from sqlalchemy.engine import Engine
from sqlmodel import Session, col

from reviewer_app.batches import loading as batch_service
from reviewer_app.batches.catalog import batch_list
from reviewer_app.batches.load_summary import LoadSummary
from reviewer_app.batches.loading import load_batch
from reviewer_app.domain.enums import AssignmentStatus
from reviewer_app.errors import BatchClosedError, BlindReviewError, ConflictError
from reviewer_app.people.people import add_reviewer
from reviewer_app.review.reviews import next_item, submit_review
from storage.engine import read_session
from storage.models import Assignment
from storage.repositories.review import assignments as assignment_repo
from tests.helpers import RATING_RUBRIC, expire_reservations, make_records, write_batch, write_rubric

ANSWER = {"correctness": "4", "follows_format": "1"}


def _in_thread(work: Callable[[], Any], outcome: dict[str, Any], key: str) -> threading.Thread:
    def run() -> None:
        try:
            outcome[key] = work()
        except BaseException as exc:  # noqa: BLE001 - the test reads it
            outcome[key] = exc

    thread = threading.Thread(target=run)
    thread.start()
    return thread


def _lock_waiters(engine: Engine) -> int:
    with engine.connect() as conn:
        return int(
            conn.execute(
                text(
                    "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                    "AND wait_event_type = 'Lock'"
                )
            ).scalar_one()
        )


@pytest.mark.parametrize("database", ["postgres"], indirect=True)
def test_a_submit_on_an_expired_reservation_counts_a_claim_in_progress(
    engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    summary = load_batch(
        engine,
        [write_batch(tmp_path, make_records(1, ["m1"]))],
        write_rubric(tmp_path, RATING_RUBRIC.format(overlap=1)),
        name="one",
        open_now=True,
    )
    slow, fast = add_reviewer(engine, "slow")[0], add_reviewer(engine, "fast")[0]
    held = next_item(engine, summary.batch_id, slow.id)
    assert held is not None
    expire_reservations(engine)  # the hold runs out

    # Hold fast's claim open at its last step (its row inserted, the item locked, nothing committed).
    claimed, proceed = threading.Event(), threading.Event()
    real_assignment_id_for = assignment_repo.assignment_id_for

    def paused(session: Session, item_id: int, reviewer_id: int, occurrence: int = 0) -> int:
        if reviewer_id == fast.id:
            claimed.set()
            assert proceed.wait(30)
        return real_assignment_id_for(session, item_id, reviewer_id, occurrence)

    monkeypatch.setattr(assignment_repo, "assignment_id_for", paused)
    outcome: dict[str, Any] = {}
    claim = _in_thread(lambda: next_item(engine, summary.batch_id, fast.id), outcome, "claim")
    assert claimed.wait(30)
    late = _in_thread(lambda: submit_review(engine, slow.id, held.assignment_id, ANSWER), outcome, "late")
    # The late submit must wait for the claim's lock rather than count without it.
    for _ in range(3000):
        if _lock_waiters(engine) > 0 or not late.is_alive():
            break
        threading.Event().wait(0.01)
    waited = late.is_alive()
    proceed.set()
    claim.join(30)
    late.join(30)
    assert waited, "the submit did not wait for the claim in progress"
    assert outcome["late"] is None  # slow finished first: the answer is kept
    view = outcome["claim"]
    assert view is not None  # fast's claim went through ...
    with pytest.raises(BatchClosedError, match="submitted their answer to it first"):
        submit_review(engine, fast.id, view.assignment_id, ANSWER)  # ... and was released when slow won
    with read_session(engine) as s:
        done = s.execute(select(func.count()).where(col(Assignment.status) == AssignmentStatus.DONE)).scalar_one()
    assert done == 1  # never past k


def test_two_loads_of_the_same_content_at_once_make_one_batch(
    engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = [write_batch(tmp_path, make_records(20, ["m1", "m2"]))]
    rubric = write_rubric(tmp_path, RATING_RUBRIC.format(overlap=1))
    both_checked = threading.Barrier(2, timeout=30)
    real_write = batch_service._write_batch

    def write_after_both_checked(*args: Any) -> tuple[int, int]:
        both_checked.wait()  # both loads have passed every check before either writes
        return real_write(*args)

    monkeypatch.setattr(batch_service, "_write_batch", write_after_both_checked)
    outcome: dict[str, Any] = {}
    threads = [
        _in_thread(functools.partial(load_batch, engine, files, rubric, name=n), outcome, n)
        for n in ("first", "second")
    ]
    for t in threads:
        t.join(60)
    loaded = [v for v in outcome.values() if isinstance(v, LoadSummary)]
    refused = [v for v in outcome.values() if isinstance(v, BaseException)]
    assert len(loaded) == 1 and len(refused) == 1, outcome
    (error,) = refused
    assert isinstance(error, ConflictError) and isinstance(error, BlindReviewError)
    assert str(error) == (
        f"this content was loaded as batch {loaded[0].batch_name!r} (id {loaded[0].batch_id}) by another load at "
        "the same moment; nothing was written by this one (see `blind-review list-batches`)"
    )
    assert [b.name for b in batch_list(engine)] == [loaded[0].batch_name]
