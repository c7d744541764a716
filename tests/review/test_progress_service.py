"""The lead's progress numbers and the reviewer's bounded history, on both databases."""

from __future__ import annotations

from sqlalchemy.engine import Engine

from reviewer_app.batches.catalog import find_batch
from reviewer_app.people.people import get_person
from reviewer_app.review import reviews
from reviewer_app.review.progress import batch_progress, recent_finished

PER_REVIEWER = 144 * 2 // 3  # k = 2 over three reviewers; the two scripted colleagues finish all of theirs


def test_progress_counts_done_skipped_remaining_and_median(engine: Engine, demo: dict[str, str]) -> None:
    batch = find_batch(engine, "demo")
    assert batch.id is not None
    me = get_person(engine, "demo-reviewer")
    first = reviews.next_item(engine, batch.id, me.id)
    assert first is not None
    before = batch_progress(engine, batch.id).total.skipped  # the scripted colleagues' "can't judge" answers
    assert before > 0
    reviews.submit_review(engine, me.id, first.assignment_id, {}, cant_judge="not my field")
    report = batch_progress(engine, batch.id)
    assert report.total.assigned == 144 * 2  # k = 2 over three reviewers
    assert report.total.done == 2 * PER_REVIEWER + 1 and report.total.skipped == before + 1
    assert report.total.remaining == report.total.assigned - report.total.done
    rows = {r.group: r for r in report.by_reviewer}
    assert rows["demo-reviewer"].done == 1 and rows["demo-reviewer"].median_seconds is None  # a skip has no time
    assert rows["demo-colleague-1"].done == PER_REVIEWER and rows["demo-colleague-1"].median_seconds is not None
    assert sum(r.assigned for r in report.by_scenario) == report.total.assigned
    assert {r.group for r in report.by_scenario} == {"support", "data", "code"}


def test_recent_finished_is_newest_first_and_bounded(engine: Engine, demo: dict[str, str]) -> None:
    batch = find_batch(engine, "demo")
    assert batch.id is not None
    colleague = get_person(engine, "demo-colleague-1")
    entries = recent_finished(engine, batch.id, colleague.id, limit=5)
    assert len(entries) == 5 and all(e.status in ("done", "skipped") for e in entries)
    assert [e.position for e in entries] == sorted((e.position for e in entries), reverse=True)
    everything = recent_finished(engine, batch.id, colleague.id, limit=100)
    assert len(everything) == PER_REVIEWER


def test_progress_is_read_again_after_every_change_that_shows_in_it(engine: Engine, demo: dict[str, str]) -> None:
    """batch_progress keeps a batch's progress until its revision changes: each change below must show at once
    (a claim, a submit, a can't-judge, a revision of it back to scores, a release, a renamed person)."""
    from sqlalchemy import update

    from reviewer_app.people.people import revoke
    from storage.engine import write_session
    from storage.models import Reviewer

    batch = find_batch(engine, "demo")
    assert batch.id is not None
    me = get_person(engine, "demo-reviewer")

    def total() -> tuple[int, int, int]:
        t = batch_progress(engine, batch.id).total  # type: ignore[arg-type]
        return t.done, t.skipped, t.assigned

    done, skipped, assigned = total()
    assert total() == (done, skipped, assigned)  # unchanged: the same numbers (kept)
    view = reviews.next_item(engine, batch.id, me.id)
    assert view is not None
    reviews.submit_review(engine, me.id, view.assignment_id, {}, cant_judge="not my field")
    assert total() == (done + 1, skipped + 1, assigned)
    answers = {d.name: d.allowed_values()[0] for d in view.dimensions}
    reviews.submit_review(engine, me.id, view.assignment_id, answers)
    assert total() == (done + 1, skipped, assigned)
    with write_session(engine) as session:
        session.execute(update(Reviewer).where(Reviewer.name == "demo-reviewer").values(name="dana"))  # type: ignore[arg-type]
    assert "dana" in {r.group for r in batch_progress(engine, batch.id).by_reviewer}
    revoke(engine, "dana")  # their unfinished items go back to the pool
    assert total()[2] < assigned
