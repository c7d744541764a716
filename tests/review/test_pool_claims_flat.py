"""Pool claims walk the pool order from a private point: the item claimed is the one a plain reading of the
rules picks (every item's holders counted, the reviewer's history, gold left out, sorted by
``(pool_key, id)`` and turned to start at :func:`pool_start`), reproducibly and differently per reviewer;
the walk wraps around and passes ties on the key, so a nearly full batch still hands out its last free
items and every free item is claimable. The walk reads bounded windows of the order and, past a bound of
items examined, finishes with one set-based query: the tests lower those module constants to cover both paths
(and the hand-over between them) on small batches."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import delete, event, select, text, update
from sqlalchemy.engine import Engine
from sqlmodel import col

from reviewer_app.batches.load_summary import LoadSummary
from reviewer_app.batches.loading import load_batch
from reviewer_app.domain.enums import AssignmentStatus
from reviewer_app.domain.keyed_random import secret_bytes
from reviewer_app.errors import SlotTakenError
from reviewer_app.people.people import add_reviewer
from reviewer_app.review.assignment import assign, pool_start
from reviewer_app.review.reviews import next_item, submit_review
from storage.engine import read_session, write_session
from storage.models import Assignment, Batch, Item, Rating, utcnow
from storage.repositories.review import assignments as assignment_repo
from storage.repositories.review import claims as repo
from tests.helpers import (
    RATING_RUBRIC,
    expire_reservations,
    first_showings,
    make_records,
    write_batch,
    write_rubric,
)

ANSWER = {"correctness": "4", "follows_format": "1"}
GOLD = """
[[gold]]
sample_id = "s{n}"
model = "m1"
expected = {{ correctness = 5, follows_format = 1 }}
"""


def _batch(engine: Engine, tmp_path: Path, *, samples: int, overlap: int, gold: tuple[int, ...] = ()) -> LoadSummary:
    rubric = RATING_RUBRIC.format(overlap=overlap) + "".join(GOLD.format(n=n) for n in gold)
    return load_batch(
        engine,
        [write_batch(tmp_path, make_records(samples, ["m1"]))],
        write_rubric(tmp_path, rubric),
        name="flat",
        open_now=True,
    )


def _expected_claim(engine: Engine, batch_id: int, reviewer_id: int) -> int | None:
    """The reference: read every item and assignment, apply the rules in Python, turn the order at the start."""
    now = utcnow()
    with read_session(engine) as s:
        batch = s.get(Batch, batch_id)
        assert batch is not None
        items = s.execute(
            select(col(Item.id), col(Item.pool_key), col(Item.is_gold)).where(col(Item.batch_id) == batch_id)
        ).all()
        rows = s.execute(select(Assignment).where(col(Assignment.batch_id) == batch_id)).scalars().all()
        position = max((a.position for a in rows if a.reviewer_id == reviewer_id), default=-1) + 1
        secret, overlap = secret_bytes(batch.secret), batch.overlap
    held: dict[int, int] = {}
    had = {a.item_id for a in rows if a.reviewer_id == reviewer_id}
    for a in rows:
        reserved = a.reserved_until
        if reserved is not None and reserved.tzinfo is None:  # SQLite hands back naive UTC
            reserved = reserved.replace(tzinfo=now.tzinfo)
        live = a.status == AssignmentStatus.PENDING and (reserved is None or reserved > now)
        if a.occurrence == 0 and (a.status == AssignmentStatus.DONE or live):
            held[a.item_id] = held.get(a.item_id, 0) + 1
    free = sorted(
        (key, item_id)
        for item_id, key, gold in items
        if not gold and held.get(item_id, 0) < overlap and item_id not in had
    )
    start = pool_start(secret, reviewer_id, position)
    turned = [f for f in free if f[0] >= start] + [f for f in free if f[0] < start]
    return turned[0][1] if turned else None


def _secret(engine: Engine, batch_id: int) -> bytes:
    with read_session(engine) as s:
        batch = s.get(Batch, batch_id)
        assert batch is not None
        return secret_bytes(batch.secret)


def _reference_walk(engine: Engine, batch_id: int, reviewer_id: int, start: int) -> list[int]:
    """Every item the rules let this reviewer claim, in the walk's order from ``start`` (read in Python)."""
    now = utcnow()
    with read_session(engine) as s:
        batch = s.get(Batch, batch_id)
        assert batch is not None
        items = s.execute(
            select(col(Item.id), col(Item.pool_key), col(Item.is_gold)).where(col(Item.batch_id) == batch_id)
        ).all()
        rows = s.execute(select(Assignment).where(col(Assignment.batch_id) == batch_id)).scalars().all()
        overlap = batch.overlap
    held: dict[int, int] = {}
    for a in rows:
        reserved = a.reserved_until
        if reserved is not None and reserved.tzinfo is None:
            reserved = reserved.replace(tzinfo=now.tzinfo)
        live = a.status == AssignmentStatus.PENDING and (reserved is None or reserved > now)
        if a.occurrence == 0 and (a.status == AssignmentStatus.DONE or live):
            held[a.item_id] = held.get(a.item_id, 0) + 1
    had = {a.item_id for a in rows if a.reviewer_id == reviewer_id}
    free = sorted((k, i) for i, k, gold in items if not gold and held.get(i, 0) < overlap and i not in had)
    return [i for k, i in free if k >= start] + [i for k, i in free if k < start]


@contextmanager
def _walk_bounds(monkeypatch: pytest.MonkeyPatch, first: int, last: int, bound: int) -> Iterator[None]:
    """Smaller windows and a smaller bound, so a few dozen items cross every path of the walk."""
    monkeypatch.setattr(repo, "_FIRST_WINDOW", first)
    monkeypatch.setattr(repo, "_LAST_WINDOW", last)
    monkeypatch.setattr(repo, "_WALK_BOUND", bound)
    yield


@contextmanager
def _pool_queries(engine: Engine) -> Iterator[list[str]]:
    """The pool walk's statements as sent: windows (``pool_window``) and set-based rests (``GROUP BY``)."""
    sent: list[str] = []

    def capture(_c: Any, _cur: Any, statement: str, _p: Any, _ctx: Any, _many: bool) -> None:
        if "pool_window" in statement:
            sent.append("window")
        elif "pool_key" in statement and "GROUP BY" in statement:
            sent.append("rest")

    event.listen(engine, "before_cursor_execute", capture)
    try:
        yield sent
    finally:
        event.remove(engine, "before_cursor_execute", capture)


def _claimed_item(engine: Engine, assignment_id: int) -> int:
    with read_session(engine) as s:
        a = s.get(Assignment, assignment_id)
        assert a is not None
        return a.item_id


def _claim_all(engine: Engine, batch_id: int, reviewer_id: int) -> list[int]:
    """Claim and answer until nothing is left for the reviewer; the items in the order they came."""
    got = []
    while (view := next_item(engine, batch_id, reviewer_id)) is not None:
        got.append(_claimed_item(engine, view.assignment_id))
        submit_review(engine, reviewer_id, view.assignment_id, ANSWER)
    return got


def _forget_claims(engine: Engine) -> None:
    with write_session(engine) as s:
        s.execute(delete(Rating))
        s.execute(delete(Assignment))


def _set_keys(engine: Engine, keys: dict[int, int]) -> None:
    with write_session(engine) as s:
        for item_id, key in keys.items():
            s.execute(update(Item).where(col(Item.id) == item_id).values(pool_key=key))


def _item_ids(engine: Engine, batch_id: int) -> list[int]:
    with read_session(engine) as s:
        return list(
            s.execute(select(col(Item.id)).where(col(Item.batch_id) == batch_id).order_by(col(Item.id))).scalars()
        )


def test_each_claim_is_the_item_the_rules_pick_from_the_reviewer_s_start(engine: Engine, tmp_path: Path) -> None:
    summary = _batch(engine, tmp_path, samples=40, overlap=2, gold=(3, 17))
    people = [add_reviewer(engine, name)[0].id for name in ("ann", "bob", "cy")]
    seen: dict[int, list[int]] = {p: [] for p in people}
    for turn in range(60):
        person = people[turn % 3]
        expected = _expected_claim(engine, summary.batch_id, person)
        view = next_item(engine, summary.batch_id, person)
        assert (None if view is None else _claimed_item(engine, view.assignment_id)) == expected
        if view is None:
            continue
        assert expected is not None
        seen[person].append(expected)
        if turn % 7 == 3:  # "can't judge": the slot is free again, but never for this reviewer
            submit_review(engine, person, view.assignment_id, {}, cant_judge="not my field")
        elif turn % 11 == 5:  # walked away: the reservation runs out and the slot is free again
            expire_reservations(engine, view.assignment_id)
            submit_review(engine, person, view.assignment_id, ANSWER)  # nobody took it: kept
        else:
            submit_review(engine, person, view.assignment_id, ANSWER)
    for items in seen.values():
        assert len(items) == len(set(items))  # nobody got an item twice


def test_the_order_is_reproducible_for_the_seed_and_differs_between_reviewers(engine: Engine, tmp_path: Path) -> None:
    summary = _batch(engine, tmp_path, samples=30, overlap=2)
    ann, bob = add_reviewer(engine, "ann")[0].id, add_reviewer(engine, "bob")[0].id
    first = _claim_all(engine, summary.batch_id, ann)
    _forget_claims(engine)
    again = _claim_all(engine, summary.batch_id, ann)
    _forget_claims(engine)
    other = _claim_all(engine, summary.batch_id, bob)
    assert first == again
    assert sorted(first) == sorted(other) == _item_ids(engine, summary.batch_id)
    assert first != other
    assert first != sorted(first)  # not the load order either
    key, other_key = bytes(32), bytes([1] * 32)
    assert pool_start(key, ann, 0) == pool_start(key, ann, 0) != pool_start(other_key, ann, 0)
    assert len({pool_start(key, ann, p) for p in range(30)}) == 30  # a new start at each claim


def test_gold_is_never_pooled_and_every_other_item_is_claimable(engine: Engine, tmp_path: Path) -> None:
    summary = _batch(engine, tmp_path, samples=25, overlap=1, gold=(0, 9, 24))
    ann = add_reviewer(engine, "ann")[0].id
    with read_session(engine) as s:
        gold = set(s.execute(select(col(Item.id)).where(col(Item.is_gold).is_(True))).scalars())
    got = _claim_all(engine, summary.batch_id, ann)
    assert len(gold) == 3 and not gold & set(got)
    assert sorted(got) == sorted(set(_item_ids(engine, summary.batch_id)) - gold)
    bob = add_reviewer(engine, "bob")[0].id
    assert next_item(engine, summary.batch_id, bob) is None  # k = 1: all taken, and gold is not for the pool


def test_the_last_free_item_is_found_when_it_lies_before_the_start(engine: Engine, tmp_path: Path) -> None:
    summary = _batch(engine, tmp_path, samples=30, overlap=1)
    ids = _item_ids(engine, summary.batch_id)
    ann, bob = add_reviewer(engine, "ann")[0].id, add_reviewer(engine, "bob")[0].id
    start = pool_start(_secret(engine, summary.batch_id), bob, 0)  # bob has no assignment yet
    assert 0 < start
    last = ids[7]
    keys = dict.fromkeys(ids, start)  # everything at bob's start ...
    keys[last] = start - 1  # ... except the one item left free, just before it
    _set_keys(engine, keys)
    taken = _claim_all(engine, summary.batch_id, ann)
    assert len(taken) == len(ids)
    with write_session(engine) as s:  # give the last item back to the pool
        s.execute(delete(Rating).where(col(Rating.item_id) == last))
        s.execute(delete(Assignment).where(col(Assignment.item_id) == last))
    view = next_item(engine, summary.batch_id, bob)
    assert view is not None and _claimed_item(engine, view.assignment_id) == last
    assert next_item(engine, summary.batch_id, add_reviewer(engine, "cy")[0].id) is None


@pytest.mark.parametrize(
    "bounds",
    [None, (2, 4, 10_000), (2, 4, 7), (1, 1, 0)],
    ids=["default", "small-windows", "windows-then-rest", "rest-only"],
)
def test_ties_on_the_key_are_walked_past_across_windows(
    engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, bounds: tuple[int, int, int] | None
) -> None:
    if bounds is not None:  # windows of 2 then 4 items end inside a run of 15 equal keys, more than once
        monkeypatch.setattr(repo, "_FIRST_WINDOW", bounds[0])
        monkeypatch.setattr(repo, "_LAST_WINDOW", bounds[1])
        monkeypatch.setattr(repo, "_WALK_BOUND", bounds[2])
    summary = _batch(engine, tmp_path, samples=45, overlap=2)
    ids = _item_ids(engine, summary.batch_id)
    _set_keys(engine, {i: 1000 + (n % 3) for n, i in enumerate(ids)})  # 15 items on each of three keys
    ann, bob = add_reviewer(engine, "ann")[0].id, add_reviewer(engine, "bob")[0].id
    for start in (0, 999, 1000, 1001, 1002, 1003, 2**31 - 1):
        with read_session(engine) as s:
            walked = list(repo.pool_walk(s, summary.batch_id, ann, 2, utcnow(), start=start))
        order = sorted(ids, key=lambda i: (1000 + ids.index(i) % 3, i))
        turned = [i for i in order if 1000 + ids.index(i) % 3 >= start] + [
            i for i in order if 1000 + ids.index(i) % 3 < start
        ]
        assert walked == turned, start
    got = _claim_all(engine, summary.batch_id, ann)
    assert sorted(got) == ids
    half = [i for n, i in enumerate(ids) if n % 2 == 0]
    with write_session(engine) as s:  # bob already had half of them: the walk skips exactly those
        for n, item_id in enumerate(half):
            s.add(
                Assignment(
                    batch_id=summary.batch_id,
                    item_id=item_id,
                    reviewer_id=bob,
                    position=n,
                    label=f"HAD{n:02d}",
                    status=AssignmentStatus.SKIPPED,
                )
            )
    with read_session(engine) as s:
        walked = list(repo.pool_walk(s, summary.batch_id, bob, 2, utcnow(), start=0))
    assert sorted(walked) == sorted(set(ids) - set(half))
    assert sorted(_claim_all(engine, summary.batch_id, bob)) == sorted(set(ids) - set(half))


@contextmanager
def _holding_lock(engine: Engine, item_id: int) -> Iterator[None]:
    with engine.connect() as conn:
        conn.execute(text("SELECT id FROM item WHERE id = :i FOR NO KEY UPDATE"), {"i": item_id})
        yield
        conn.rollback()


@pytest.mark.parametrize("database", ["postgres"], indirect=True)
def test_an_item_locked_by_another_claim_is_skipped_not_waited_for(engine: Engine, tmp_path: Path) -> None:
    summary = _batch(engine, tmp_path, samples=10, overlap=1)
    ann = add_reviewer(engine, "ann")[0].id
    first = _expected_claim(engine, summary.batch_id, ann)
    assert first is not None
    with _holding_lock(engine, first):
        view = next_item(engine, summary.batch_id, ann)
    assert view is not None
    assert _claimed_item(engine, view.assignment_id) != first


def test_the_walk_is_an_index_search_of_the_pool_order(sqlite_engine: Engine, tmp_path: Path) -> None:
    summary = _batch(sqlite_engine, tmp_path, samples=5, overlap=1)
    ann = add_reviewer(sqlite_engine, "ann")[0].id
    sent: list[tuple[str, Any]] = []

    def capture(_c: Any, _cur: Any, statement: str, parameters: Any, _ctx: Any, _many: bool) -> None:
        if "pool_key" in statement and statement.lstrip().startswith("SELECT"):
            sent.append((statement, parameters))

    event.listen(sqlite_engine, "before_cursor_execute", capture)
    try:
        assert next_item(sqlite_engine, summary.batch_id, ann) is not None
    finally:
        event.remove(sqlite_engine, "before_cursor_execute", capture)
    assert sent
    with sqlite_engine.connect() as conn:
        plan = [row[-1] for row in conn.exec_driver_sql("EXPLAIN QUERY PLAN " + sent[0][0], sent[0][1])]
    assert any("USING COVERING INDEX ix_item_pool" in step for step in plan), plan
    assert any("LIST SUBQUERY" not in step and "ix_assignment_item_id" in step for step in plan), plan
    # No step reads a whole table: the only scan is of the window itself (at most LIMIT rows).
    assert not any(step.startswith("SCAN") and "pool_window" not in step for step in plan), plan
    assert not any("TEMP B-TREE" in step for step in plan), plan  # the index gives the order: no sort


def test_each_walk_is_the_rules_order_on_every_path(
    engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A batch in every state (held, done, skipped, lapsed, gold, the reviewer's own): the walk hands out
    exactly the reference order from many starts, whether windows, the set-based rest or both find it."""
    summary = _batch(engine, tmp_path, samples=40, overlap=2, gold=(3, 17))
    people = [add_reviewer(engine, name)[0].id for name in ("ann", "bob", "cy")]
    for turn in range(45):
        person = people[turn % 3]
        view = next_item(engine, summary.batch_id, person)
        if view is None:
            continue
        if turn % 7 == 3:
            submit_review(engine, person, view.assignment_id, {}, cant_judge="not my field")
        elif turn % 11 == 5:
            expire_reservations(engine, view.assignment_id)
        elif turn % 5 != 1:  # the others stay held, unanswered
            with suppress(SlotTakenError):  # a lapsed hold of theirs that others completed meanwhile
                submit_review(engine, person, view.assignment_id, ANSWER)
    ids = _item_ids(engine, summary.batch_id)
    _set_keys(engine, {i: 500 + (n % 4) * 100 for n, i in enumerate(ids)})  # ties on four keys
    starts = (0, 499, 500, 501, 600, 750, 800, 801, 2**31 - 1)
    for bounds in ((4, 1024, 2048), (1, 2, 3), (2, 4, 9), (1, 1, 0), (3, 3, 40)):
        with _walk_bounds(monkeypatch, *bounds):
            for person in people:
                for start in starts:
                    expected = _reference_walk(engine, summary.batch_id, person, start)
                    assert expected  # something is left for each of them
                    with read_session(engine) as s:
                        walked = list(repo.pool_walk(s, summary.batch_id, person, 2, utcnow(), start=start))
                    assert walked == expected, (bounds, person, start)


def test_the_only_free_item_beyond_the_bound_is_found_by_the_set_based_rest(
    engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Items that are open (fewer done answers than k) but not free (the rest of their slots held) stay in the
    walk's index: past the bound, the set-based rest of the walk finds the one free item among them."""
    summary = _batch(engine, tmp_path, samples=30, overlap=2)
    ids = _item_ids(engine, summary.batch_id)
    ann, bob, cy = (add_reviewer(engine, name)[0].id for name in ("ann", "bob", "cy"))
    start = pool_start(_secret(engine, summary.batch_id), bob, 0)  # bob has no assignment yet
    last = ids[4]
    keys = {i: start + n for n, i in enumerate(ids)}  # bob walks them in id order ...
    keys[last] = start - 1  # ... and reaches this one last, after the wrap-around
    _set_keys(engine, keys)
    assert len(_claim_all(engine, summary.batch_id, ann)) == len(ids)  # one done answer each: all still open
    with write_session(engine) as s:  # cy is planned on the second slot of every item
        assignment_repo.insert_assignments(s, first_showings(summary.batch_id, cy, ids, AssignmentStatus.PENDING, "P"))
    with write_session(engine) as s:  # give that item back to the pool
        s.execute(delete(Rating).where(col(Rating.item_id) == last))
        s.execute(delete(Assignment).where(col(Assignment.item_id) == last))
    with read_session(engine) as s:
        assert s.execute(select(col(Item.is_open)).where(col(Item.batch_id) == summary.batch_id)).scalars().all() == [
            True
        ] * len(ids)
    with _walk_bounds(monkeypatch, 2, 4, 8), _pool_queries(engine) as sent:
        view = next_item(engine, summary.batch_id, bob)
    assert view is not None and _claimed_item(engine, view.assignment_id) == last
    assert sent == ["window", "window", "window", "rest"]  # 2 + 4 + 4 examined, then the rest at once
    submit_review(engine, bob, view.assignment_id, ANSWER)
    with _walk_bounds(monkeypatch, 2, 4, 8), _pool_queries(engine) as sent:
        assert next_item(engine, summary.batch_id, bob) is None  # every other item is held by ann and cy
    assert sent.count("rest") == 1 and len(sent) <= 4


def test_a_complete_batch_gives_nothing_in_a_bounded_number_of_queries(
    engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    summary = _batch(engine, tmp_path, samples=30, overlap=2, gold=(5,))
    ann, bob, cy = (add_reviewer(engine, name)[0].id for name in ("ann", "bob", "cy"))
    assert len(_claim_all(engine, summary.batch_id, ann)) == 29
    assert len(_claim_all(engine, summary.batch_id, bob)) == 29
    for bounds in ((4, 1024, 2048), (2, 8, 6)):
        with _walk_bounds(monkeypatch, *bounds), _pool_queries(engine) as sent:
            assert next_item(engine, summary.batch_id, cy) is None
        # Every item holds its k done answers, so none is in the walk's index range (migration 0012): one
        # empty window from the start to the end, one around, whatever the bounds; never the set-based rest.
        assert sent == ["window", "window"], sent
        for person in (ann, bob, cy):
            with read_session(engine) as s:
                assert list(repo.pool_walk(s, summary.batch_id, person, 2, utcnow(), start=0)) == []


def test_a_fully_planned_batch_has_nothing_for_an_extra_pool_reviewer(
    engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    summary = _batch(engine, tmp_path, samples=24, overlap=2)
    for name in ("ann", "bob", "cy"):
        add_reviewer(engine, name)
    plan = assign(engine, "flat")
    assert plan.new_assignments == 48  # every slot planned, none answered yet
    dee = add_reviewer(engine, "dee")[0].id  # arrives after the plan: the pool is her only way in
    with _walk_bounds(monkeypatch, 2, 4, 10), _pool_queries(engine) as sent:
        assert next_item(engine, summary.batch_id, dee) is None
    assert "rest" in sent and len(sent) <= 5
    with write_session(engine) as s:  # one planned reviewer leaves one item: that slot is free again
        item_id = (
            s.execute(
                select(col(Assignment.item_id)).where(col(Assignment.reviewer_id) != dee).order_by(col(Assignment.id))
            )
            .scalars()
            .first()
        )
        s.execute(
            delete(Assignment).where(
                col(Assignment.item_id) == item_id,
                col(Assignment.id)
                == (select(col(Assignment.id)).where(col(Assignment.item_id) == item_id).limit(1).scalar_subquery()),
            )
        )
    with _walk_bounds(monkeypatch, 2, 4, 10):
        view = next_item(engine, summary.batch_id, dee)
    assert view is not None and _claimed_item(engine, view.assignment_id) == item_id
