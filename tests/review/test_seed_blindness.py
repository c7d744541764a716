"""Blindness against a reviewer who reads the code and knows (or brute-forces) the rubric's seed (issue 33).

The attack: labels used to be Mersenne Twister draws from ``sha256(seed, "labels", 0)``, queue orders and
sides shuffles from the seed, pool keys and claim starts hashes of it, and output a of a pair the model first
in name order. With the seed (31 bits, or a date written in the rubric) and two labels from the page, a
reviewer reproduced the plan and read off the model of every item. These tests play that attacker with the
stored seed and everything a reviewer sees, and check that an admin, who has the database's secret, still
rebuilds the plan exactly.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from sqlalchemy import select
from sqlalchemy.engine import Engine

from reviewer_app.batches.loading import load_batch
from reviewer_app.domain.keyed_random import secret_bytes
from reviewer_app.people.people import add_reviewer
from reviewer_app.review.assignment import PlanItem, assign, plan_assignments
from reviewer_app.review.blinding import draw_labels, rng_for
from reviewer_app.review.reviews import next_item, submit_review
from storage.engine import read_session
from storage.models import Assignment, Batch, Item, Model, Output, Reviewer
from storage.repositories.ratings.items import ItemModels
from storage.repositories.review import assignments as assignment_repo
from tests.helpers import write_batch, write_rubric

SEED = 20261130  # the README's kind of seed: a date, which a reviewer guesses at once
RATING = f"""mode = "rating"
overlap = 2
seed = {SEED}
[[dimensions]]
name = "correctness"
description = "Right?"
scale = "likert"
min = 1
max = 5
level = "ordinal"
"""
PAIRWISE = f"""mode = "pairwise"
overlap = 2
seed = {SEED}
"""
MODELS = ["alpha", "bravo", "charlie", "delta"]
REVIEWERS = ("ann", "bob", "cyd", "dee", "eve", "fay")


def _records(n: int, models: list[str], tag: str) -> list[dict[str, Any]]:
    return [
        {"sample_id": f"s{i}", "scenario": "qa", "prompt": f"Question {i}?", "model": m, "output": f"{tag} {i} {m}"}
        for i in range(n)
        for m in models
    ]


def _load(engine: Engine, folder: Path, name: str, rubric: str, n: int = 12, models: list[str] = MODELS) -> int:
    path = write_batch(folder, _records(n, models, tag=name))
    return load_batch(engine, [path], write_rubric(folder, rubric), name=name, open_now=True).batch_id


def _queues(engine: Engine, batch_id: int) -> dict[str, list[tuple[str, str | None, str | None, bool]]]:
    """Per reviewer, what their queue holds in order: (label, model a, model b, swapped)."""
    im = ItemModels()
    stmt = (
        im.join(
            select(
                Reviewer.name,
                Assignment.position,
                Assignment.label,
                im.model_a.name,
                im.model_b.name,
                Assignment.swapped,
            )
            .join(Reviewer, Reviewer.id == Assignment.reviewer_id)  # type: ignore[arg-type]
            .join(Item, Item.id == Assignment.item_id)  # type: ignore[arg-type]
        )
        .where(Assignment.batch_id == batch_id)
        .order_by(Reviewer.name, Assignment.position)
    )
    queues: dict[str, list[tuple[str, str | None, str | None, bool]]] = defaultdict(list)
    with read_session(engine) as s:
        for who, _pos, label, a, b, swapped in s.execute(stmt):
            queues[who].append((label, a, b, bool(swapped)))
    return dict(queues)


def _people(engine: Engine, names: tuple[str, ...] = REVIEWERS) -> None:
    for name in names:
        add_reviewer(engine, name)


def test_two_batches_with_one_seed_show_a_reviewer_nothing_in_common(engine: Engine, tmp_path: Path) -> None:
    # The same rubric seed, the same shape (12 samples x 4 models, 6 reviewers, k = 2): before issue 33 both
    # batches gave every reviewer the same labels in the same order, over the same models.
    _people(engine)
    first = _load(engine, tmp_path / "one", "one", RATING)
    second = _load(engine, tmp_path / "two", "two", RATING)
    assign(engine, "one")
    assign(engine, "two")
    q1, q2 = _queues(engine, first), _queues(engine, second)
    assert set(q1) == set(q2) == set(REVIEWERS)
    for who in REVIEWERS:
        labels1, labels2 = [x[0] for x in q1[who]], [x[0] for x in q2[who]]
        assert len(labels1) == len(labels2) == 16
        assert not set(labels1) & set(labels2)  # 32 labels of 33.5M: a shared one would be a link
        assert [x[1] for x in q1[who]] != [x[1] for x in q2[who]]  # the models' order is not the seed's


def test_the_seed_and_the_labels_on_the_page_do_not_give_the_plan(engine: Engine, tmp_path: Path) -> None:
    _people(engine)
    batch_id = _load(engine, tmp_path, "one", RATING)
    assign(engine, "one")
    seen = [label for label, *_ in _queues(engine, batch_id)["ann"]]
    # The attack: find two consecutive labels of the page in the label stream a seed would give (every
    # round and offset a plan could use). The stored seed is the right one, so only randomness that is no
    # function of the seed defeats it.
    for round_no in range(3):
        stream = draw_labels(rng_for(SEED, "labels", round_no), 48 * 2)
        pairs = set(zip(stream, stream[1:], strict=False))
        assert not any(pair in pairs for pair in zip(seen, seen[1:], strict=False))
        assert not set(seen) & set(stream)


def test_an_admin_rebuilds_the_plan_from_the_seed_and_the_stored_secret(engine: Engine, tmp_path: Path) -> None:
    """The README's promise for audits: the stored seed and secret give back every planned assignment."""
    _people(engine)
    batch_id = _load(engine, tmp_path, "one", PAIRWISE, n=6)
    assign(engine, "one")
    with read_session(engine) as s:
        batch = s.get(Batch, batch_id)
        assert batch is not None
        inputs = assignment_repo.plan_inputs(s, batch_id)
        reviewers = [r for (r,) in s.execute(select(Assignment.reviewer_id).where(Assignment.batch_id == batch_id))]
        stored = s.execute(
            select(
                Assignment.item_id,
                Assignment.reviewer_id,
                Assignment.occurrence,
                Assignment.position,
                Assignment.label,
                Assignment.swapped,
            ).where(Assignment.batch_id == batch_id)
        ).all()
        seed, secret = batch.seed, secret_bytes(batch.secret)
    items = [PlanItem(i, (a, b) if b is not None else None, g) for i, a, b, g in inputs]
    plan = plan_assignments(items, sorted(set(reviewers)), 2, seed, secret)
    rebuilt = {(p.item_id, p.reviewer_id, p.occurrence, p.position, p.label, p.swapped) for p in plan}
    assert rebuilt == {tuple(row) for row in stored}
    assert len(rebuilt) == 6 * 6 * 2  # 6 samples x 6 pairs, k = 2


def test_output_a_of_a_pair_is_a_coin_not_name_order(engine: Engine, tmp_path: Path) -> None:
    # 40 samples x 6 pairs = 240 items. Before issue 33 output a was the model first in name order in all 240.
    _people(engine)
    batch_id = _load(engine, tmp_path, "pairs", PAIRWISE, n=40)
    assign(engine, "pairs")
    queues = _queues(engine, batch_id)
    with read_session(engine) as s:
        im = ItemModels()
        rows = s.execute(
            im.join(select(im.model_a.name, im.model_b.name).select_from(Item)).where(Item.batch_id == batch_id)
        ).all()
    assert len(rows) == 240
    first_in_name_order = sum(a < b for a, b in rows)
    # Binomial(240, 1/2): 7.7 standard deviations from the mean at 60 or 180; a false alarm is ~1e-14.
    assert 60 < first_in_name_order < 180
    orientations = Counter((min(a, b), max(a, b), a < b) for a, b in rows)
    assert all(orientations[(x, y, True)] and orientations[(x, y, False)] for x, y, _ in orientations)
    # The sides shown stay exactly counterbalanced per reviewer, whatever output a is.
    for who, queue in queues.items():
        balance: Counter[str] = Counter()
        for _label, a, b, swapped in queue:
            assert a is not None and b is not None
            left, right = (b, a) if swapped else (a, b)
            balance[left] += 1
            balance[right] -= 1
        assert all(abs(v) <= 1 for v in balance.values()), who
    # ... and the left model is as often first as second in name order, over every reviewer's showings.
    shown = [(b if swapped else a, a if swapped else b) for q in queues.values() for _l, a, b, swapped in q]
    left_first = sum(str(left) < str(right) for left, right in shown)
    assert 0.35 * len(shown) < left_first < 0.65 * len(shown)  # 480 showings: > 6 sd either side


def test_pairwise_gold_answers_follow_the_stored_sides(engine: Engine, tmp_path: Path) -> None:
    gold = "".join(
        f'[[gold]]\nsample_id = "s{i}"\nmodels = ["delta", "alpha"]\nexpected = {{ overall = "a" }}\n'
        for i in range(16)
    )
    batch_id = _load(engine, tmp_path, "gold", PAIRWISE + gold, n=16, models=["alpha", "delta"])
    with read_session(engine) as s:
        im = ItemModels()
        rows = s.execute(
            im.join(select(im.model_a.name, im.model_b.name, Item.gold_json).select_from(Item)).where(
                Item.batch_id == batch_id, Item.is_gold
            )
        ).all()
    assert len(rows) == 16
    for a, b, gold_json in rows:
        expected = json.loads(gold_json)["overall"]
        assert (a if expected == "a" else b) == "delta"  # "a" of the rubric's pair: delta, however stored
    assert len({a for a, _b, _g in rows}) == 2  # both ways round among 16 pairs (else 2 * 2^-16)


def test_pool_claims_are_no_function_of_the_seed(engine: Engine, tmp_path: Path) -> None:
    # No plan: a reviewer claims from the pool, answering each item. Two batches with one seed and one shape
    # used to hand the same reviewer the same models in the same order (pool keys and claim starts were hashes
    # of the seed).
    ann = add_reviewer(engine, "ann")[0].id
    assert ann is not None
    got: list[list[tuple[str, str]]] = []
    for name in ("one", "two"):
        batch_id = _load(engine, tmp_path / name, name, RATING, n=10)
        claims = []
        for _ in range(12):
            view = next_item(engine, batch_id, ann)
            assert view is not None
            claims.append((view.label, _model_of(engine, view.assignment_id)))
            submit_review(engine, ann, view.assignment_id, {"correctness": "3"})
        got.append(claims)
    assert not {label for label, _ in got[0]} & {label for label, _ in got[1]}
    assert [m for _, m in got[0]] != [m for _, m in got[1]]  # 4^12 orders: equal by chance once in 1.7e7


def _model_of(engine: Engine, assignment_id: int) -> str:
    with read_session(engine) as s:
        a = s.get(Assignment, assignment_id)
        assert a is not None
        item = s.get(Item, a.item_id)
        assert item is not None
        out = s.get(Output, item.output_a_id)
        assert out is not None
        model = s.get(Model, out.model_id)
        assert model is not None
        return model.name
