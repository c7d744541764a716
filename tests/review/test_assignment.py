"""Assignment invariants: k distinct reviewers, balanced loads, no item twice, counterbalanced sides,
reproducible from the seed and the batch's secret — as properties over many random batches, and end to end in
the database."""

from __future__ import annotations

from collections import Counter, defaultdict
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sqlalchemy import select
from sqlalchemy.engine import Engine

from reviewer_app.batches.loading import load_batch
from reviewer_app.errors import AssignmentError
from reviewer_app.people.people import add_reviewer
from reviewer_app.review.assignment import PlanItem, assign, plan_assignments
from storage.engine import read_session
from storage.models import Assignment
from tests.helpers import PAIRWISE_RUBRIC, RATING_RUBRIC, make_records, write_batch, write_rubric


@st.composite
def batches(draw: st.DrawFn) -> tuple[list[PlanItem], list[int], int, int]:
    n_models = draw(st.integers(2, 5))
    n_samples = draw(st.integers(1, 12))
    pairwise = draw(st.booleans())
    items: list[PlanItem] = []
    for _ in range(n_samples):
        if pairwise:
            for a in range(n_models):
                for b in range(a + 1, n_models):
                    items.append(PlanItem(len(items) + 1, (a, b)))
        else:
            for _ in range(n_models):
                items.append(PlanItem(len(items) + 1, None))
    k = draw(st.integers(1, 4))
    reviewers = list(range(100, 100 + draw(st.integers(k, 9))))
    return items, reviewers, k, draw(st.integers(0, 2**31))


KEY = bytes(range(32))  # a batch secret, fixed for these pure-function properties


@settings(max_examples=150, deadline=None)
@given(batches())
def test_plan_gives_each_item_exactly_k_distinct_reviewers_with_loads_within_one(case) -> None:  # type: ignore[no-untyped-def]
    items, reviewers, k, seed = case
    plan = plan_assignments(items, reviewers, k, seed, KEY)
    per_item: dict[int, list[int]] = defaultdict(list)
    for p in plan:
        per_item[p.item_id].append(p.reviewer_id)
    assert all(len(v) == k and len(set(v)) == k for v in per_item.values())
    assert set(per_item) == {it.item_id for it in items}
    loads = Counter(p.reviewer_id for p in plan)
    assert max(loads.values()) - min(loads.get(r, 0) for r in reviewers) <= 1
    labels = [p.label for p in plan]
    assert len(set(labels)) == len(labels)  # batch-unique: two reviewers never share a label
    for r in reviewers:
        positions = sorted(p.position for p in plan if p.reviewer_id == r)
        assert positions == list(range(len(positions)))
    assert plan == plan_assignments(items, reviewers, k, seed, KEY)  # reproducible from the seed and the secret


@settings(max_examples=100, deadline=None)
@given(batches())
def test_pairwise_sides_are_counterbalanced_per_reviewer(case) -> None:  # type: ignore[no-untyped-def]
    items, reviewers, k, seed = case
    models = {it.item_id: it.models for it in items}
    plan = plan_assignments(items, reviewers, k, seed, KEY)
    side: dict[int, Counter[int]] = defaultdict(Counter)
    for p in plan:
        pair = models[p.item_id]
        if pair is None:
            assert not p.swapped
            continue
        left, right = (pair[1], pair[0]) if p.swapped else pair
        side[p.reviewer_id][left] += 1
        side[p.reviewer_id][right] -= 1
    assert all(abs(v) <= 1 for c in side.values() for v in c.values())


def test_orders_differ_between_reviewers_and_from_the_item_order() -> None:
    items = [PlanItem(i, None) for i in range(1, 61)]
    plan = plan_assignments(items, [1, 2, 3], 3, 42, KEY)
    orders = {
        r: [p.item_id for p in sorted((p for p in plan if p.reviewer_id == r), key=lambda p: p.position)]
        for r in (1, 2, 3)
    }
    assert len({tuple(o) for o in orders.values()}) == 3
    assert all(o != sorted(o) for o in orders.values())


def test_gold_goes_to_everyone_and_repeats_come_later_for_the_same_reviewer() -> None:
    items = [PlanItem(i, None) for i in range(1, 41)] + [PlanItem(99, None, is_gold=True)]
    plan = plan_assignments(items, [1, 2, 3, 4], 2, 3, KEY, repeat_share=0.2, repeat_min_gap=3)
    assert sorted(p.reviewer_id for p in plan if p.item_id == 99) == [1, 2, 3, 4]
    for r in (1, 2, 3, 4):
        mine = [p for p in plan if p.reviewer_id == r]
        repeats = [p for p in mine if p.occurrence == 1]
        assert len(repeats) == int(0.2 * 20)
        for rep in repeats:
            first = next(p for p in mine if p.item_id == rep.item_id and p.occurrence == 0)
            assert rep.position > first.position + 3
            assert rep.label != first.label
    regular = Counter(p.item_id for p in plan if p.occurrence == 0 and p.item_id != 99)
    assert set(regular.values()) == {2}


def test_too_few_reviewers_is_a_clear_error() -> None:
    with pytest.raises(AssignmentError, match="asks for 3 reviewers per item but only 2"):
        plan_assignments([PlanItem(1, None)], [1, 2], 3, 1, KEY)


def test_assign_in_the_database_then_rebalance_after_adding_a_reviewer(engine: Engine, tmp_path: Path) -> None:
    load_batch(
        engine,
        [write_batch(tmp_path, make_records(10, ["m1", "m2", "m3"]))],
        write_rubric(tmp_path, RATING_RUBRIC.format(overlap=2)),
        name="b",
        open_now=True,
    )
    for n in ("ann", "bob", "cy"):
        add_reviewer(engine, n)
    first = assign(engine, "b")
    assert first.new_assignments == 60 and sorted(first.per_reviewer.values()) == [20, 20, 20]
    assert assign(engine, "b").new_assignments == 0
    add_reviewer(engine, "dee")
    again = assign(engine, "b", rebalance=True)
    assert again.released == 60
    with read_session(engine) as s:
        rows = s.execute(select(Assignment.item_id, Assignment.reviewer_id)).all()
    assert len(rows) == 60 and len(set(rows)) == 60
    assert sorted(Counter(r for _, r in rows).values()) == [15, 15, 15, 15]
    assert set(Counter(i for i, _ in rows).values()) == {2}


def test_pairwise_assign_in_the_database(engine: Engine, tmp_path: Path) -> None:
    load_batch(
        engine,
        [write_batch(tmp_path, make_records(4, ["a", "b", "c"]))],
        write_rubric(tmp_path, PAIRWISE_RUBRIC.format(overlap=2)),
        name="p",
        open_now=True,
    )
    for n in ("ann", "bob"):
        add_reviewer(engine, n)
    summary = assign(engine, "p", ["ann", "bob"])
    assert summary.new_assignments == 4 * 3 * 2
    with pytest.raises(AssignmentError, match="no reviewer named 'zed'"):
        assign(engine, "p", ["zed"])
