"""``Item.is_open``, kept by the database (migration 0012), on SQLite and PostgreSQL: after every way the app
writes assignments (claims, submits, "can't judge", changed answers, an import, a deleted batch) and after
raw inserts, updates and deletes, each item's flag equals a recount of its done first showings against the
overlap; and a Next that finds nothing left reads no item of a full batch (the walk's windows see none, and
the set-based rest of the walk is never reached)."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import delete, func, select, update
from sqlalchemy.engine import Engine
from sqlmodel import col

from reviewer_app.batches.admin import delete_batch
from reviewer_app.batches.loading import load_batch
from reviewer_app.domain.enums import AssignmentStatus
from reviewer_app.people.people import add_reviewer
from reviewer_app.ratings.export import export_ratings
from reviewer_app.ratings.files import import_ratings
from reviewer_app.review.reviews import next_item, submit_review
from storage.engine import read_session, write_session
from storage.models import Assignment, Batch, Item, Rating
from storage.repositories.ratings import imports as ratings_repo
from storage.repositories.review import assignments as assignment_repo
from storage.repositories.review import claims as claim_repo
from tests.helpers import RATING_RUBRIC, first_showings, make_records, write_batch, write_rubric

ANSWER = {"correctness": "4", "follows_format": "1"}


def _load(engine: Engine, tmp_path: Path, name: str, n: int, overlap: int, seed: int = 11) -> int:
    batch = write_batch(tmp_path, make_records(n, ["m1", "m2"]), name=f"{name}.jsonl")
    text = RATING_RUBRIC.format(overlap=overlap).replace("seed = 11", f"seed = {seed}")
    rubric = write_rubric(tmp_path, text, name=f"{name}.toml")
    return load_batch(engine, [batch], rubric, name=name, on_leak="flag", progress=False, open_now=True).batch_id


def _mismatches(engine: Engine) -> list[tuple[int, bool, int, int]]:
    """Items whose flag is not what a recount says: (item, flag, done first showings, overlap)."""
    done = (
        select(col(Assignment.item_id), func.count().label("n"))
        .where(col(Assignment.occurrence) == 0, col(Assignment.status) == AssignmentStatus.DONE)
        .group_by(col(Assignment.item_id))
        .subquery()
    )
    stmt = (
        select(col(Item.id), col(Item.is_open), func.coalesce(done.c.n, 0), col(Batch.overlap))
        .join(Batch, col(Batch.id) == col(Item.batch_id))
        .outerjoin(done, done.c.item_id == col(Item.id))
    )
    with read_session(engine) as s:
        rows = [(int(i), bool(o), int(n), int(k)) for i, o, n, k in s.execute(stmt)]
    assert rows, "no items: the check would pass vacuously"
    return [r for r in rows if r[1] != (r[2] < r[3])]


def _open_items(engine: Engine, batch_id: int) -> int:
    with read_session(engine) as s:
        stmt = select(func.count()).where(col(Item.batch_id) == batch_id, col(Item.is_open))
        return int(s.execute(stmt).scalar_one())


def test_the_flag_follows_every_way_assignments_are_written(
    engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    batch_id = _load(engine, tmp_path, "b", 6, overlap=2)
    other = _load(engine, tmp_path, "other", 3, overlap=1)
    people = [add_reviewer(engine, f"r{i}")[0].id for i in range(4)]
    assert _open_items(engine, batch_id) == 12 and not _mismatches(engine)

    # Claims (pending: nothing closes), then submits and a "can't judge" (frees its slot).
    claimed = {p: next_item(engine, batch_id, p) for p in people}
    assert _open_items(engine, batch_id) == 12 and not _mismatches(engine)
    for p, item in list(claimed.items())[:3]:
        assert item is not None
        submit_review(engine, p, item.assignment_id, ANSWER)
    last = claimed[people[3]]
    assert last is not None
    submit_review(engine, people[3], last.assignment_id, {}, cant_judge="not my field")
    assert not _mismatches(engine)
    # Reviewers work until nothing is left: every item closes at k = 2.
    for _ in range(40):
        for p in people:
            item = next_item(engine, batch_id, p)
            if item is not None:
                submit_review(engine, p, item.assignment_id, ANSWER)
    assert _open_items(engine, batch_id) == 0 and not _mismatches(engine)
    assert all(next_item(engine, batch_id, p) is None for p in people)

    # A changed answer stays done; an answer turned into "can't judge" reopens its item.
    with read_session(engine) as s:
        done = s.execute(
            select(col(Assignment.id), col(Assignment.reviewer_id), col(Assignment.item_id)).where(
                col(Assignment.batch_id) == batch_id, col(Assignment.status) == AssignmentStatus.DONE
            )
        ).first()
    assert done is not None
    submit_review(engine, int(done[1]), int(done[0]), {"correctness": "2", "follows_format": "0"})
    assert _open_items(engine, batch_id) == 0
    submit_review(engine, int(done[1]), int(done[0]), {}, cant_judge="on second thought")
    assert _open_items(engine, batch_id) == 1 and not _mismatches(engine)

    # Raw writes: an update of many rows, a delete, an insert of done rows in one statement.
    with write_session(engine) as s:
        s.execute(
            update(Assignment)
            .where(col(Assignment.batch_id) == batch_id, col(Assignment.reviewer_id) == people[0])
            .values(status=AssignmentStatus.PENDING)
        )
    assert not _mismatches(engine)
    with write_session(engine) as s:
        theirs = select(col(Assignment.id)).where(col(Assignment.reviewer_id) == people[1])
        s.execute(delete(Rating).where(col(Rating.assignment_id).in_(theirs)))
        s.execute(delete(Assignment).where(col(Assignment.reviewer_id) == people[1]))
    assert not _mismatches(engine)
    with write_session(engine) as s:
        items = [int(i) for i in s.execute(select(col(Item.id)).where(col(Item.batch_id) == other)).scalars()]
        rows = first_showings(other, people[2], items, AssignmentStatus.DONE, "L")
        assignment_repo.insert_assignments(s, rows)
    assert _open_items(engine, other) == 0 and not _mismatches(engine)

    # An export imported back into a fresh batch (the bulk path), then a batch deleted.
    exported = tmp_path / "ratings.csv"
    export_ratings(engine, "b", "csv", exported)
    again = _load(engine, tmp_path, "again", 6, overlap=2, seed=12)  # same samples, another batch
    import_ratings(engine, "again", exported)
    assert not _mismatches(engine)
    assert _open_items(engine, again) < 12  # the imported answers closed items

    # The import counts the flags once at its end (SQLite: its triggers set aside meanwhile, in its own
    # transaction); they are back after it, and after an import that fails halfway through its writes.
    def broken(*args: object, **kwargs: object) -> int:
        raise RuntimeError("disk full")

    with monkeypatch.context() as m:
        m.setattr(ratings_repo, "upsert_rating_rows", broken)
        with pytest.raises(RuntimeError):
            import_ratings(engine, "again", exported)
    with write_session(engine) as s:
        s.execute(
            update(Assignment)
            .where(col(Assignment.batch_id) == again, col(Assignment.status) == AssignmentStatus.DONE)
            .values(status=AssignmentStatus.SKIPPED)
        )
    assert _open_items(engine, again) == 12 and not _mismatches(engine)
    delete_batch(engine, "other", confirm="other")
    assert not _mismatches(engine)


def test_nothing_left_reads_no_item_of_a_full_batch(
    engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before migration 0012 a batch with nothing left cost the windows' bound of items (2,048) and then one
    grouped pass over all of its assignments; now the open-item index is empty for it: no window finds an
    item and the rest of the walk never runs. A batch bigger than the bound, so the old walk would reach it."""
    from storage.repositories import query

    size = claim_repo._WALK_BOUND + 100
    batch_id = _load(engine, tmp_path, "full", size // 2, overlap=1)
    reviewer = add_reviewer(engine, "late")[0].id
    filler = add_reviewer(engine, "early")[0].id
    with write_session(engine) as s:
        items = [int(i) for i in s.execute(select(col(Item.id)).where(col(Item.batch_id) == batch_id)).scalars()]
        rows = first_showings(batch_id, filler, items, AssignmentStatus.DONE, "F")
        query.bulk_insert(s, "assignment", rows)
    assert len(items) > claim_repo._WALK_BOUND and _open_items(engine, batch_id) == 0

    walked: list[str] = []
    real_exec = claim_repo.Session.exec

    def spy(self, statement, *args, **kwargs):  # type: ignore[no-untyped-def]
        if statement is claim_repo._POOL_REST:
            walked.append("rest")
        elif statement is claim_repo._POOL_WINDOW:
            walked.append("window")
        return real_exec(self, statement, *args, **kwargs)

    monkeypatch.setattr(claim_repo.Session, "exec", spy)
    assert next_item(engine, batch_id, reviewer) is None
    assert walked == ["window", "window"]  # from the start to the end, then around: both empty
    assert not _mismatches(engine)
