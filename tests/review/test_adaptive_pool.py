"""The adaptive pool (issue 30, section 2), on both databases: samples held back at load and released whole,
releases that follow the scenario states (and never reach a closed scenario), exact k kept to the end, no plan
for such a batch, and the states computed from the ratings by the report's own anytime-valid verdicts."""

from __future__ import annotations

import random
import threading
import time
from collections import Counter, defaultdict
from pathlib import Path

import pytest
from sqlalchemy import func, select
from sqlalchemy.engine import Engine
from sqlmodel import col

from reviewer_app.batches.load_summary import LoadSummary
from reviewer_app.batches.loading import load_batch
from reviewer_app.batches.rubric_file import parse_rubric_text
from reviewer_app.domain.allocation import FRONTIER, ScenarioAllocation
from reviewer_app.domain.enums import AssignmentStatus, BatchStatus
from reviewer_app.errors import AssignmentError, ReportError, RubricError
from reviewer_app.people.people import add_reviewer
from reviewer_app.results.allocation import Refresher, pool_state, refresh_allocation
from reviewer_app.results.batch_reports import batch_report
from reviewer_app.review.assignment import assign
from reviewer_app.review.reviews import next_item, submit_review
from storage.engine import read_session, write_session
from storage.models import Assignment, Batch, Item, Sample, Scenario, utcnow
from storage.repositories.batches import allocation as repo
from storage.repositories.demo import shown_models
from tests.helpers import PAIRWISE_RUBRIC, RATING_RUBRIC, make_records, write_batch, write_rubric
from tests.support.app_server import Server
from tests.support.databases import Copy
from tests.support.fixed_secrets import fixed_batch_secrets

ADAPTIVE = RATING_RUBRIC + '\n[allocation]\nmode = "adaptive"\nuniform_share = {share}\nclose_settled = {close}\n'


def _load(
    engine: Engine, tmp_path: Path, *, samples: int, models: list[str], overlap: int, share: float = 0.2,
    close: bool = False,
) -> LoadSummary:  # fmt: skip
    rubric = ADAPTIVE.format(overlap=overlap, share=share, close=str(close).lower())
    return load_batch(
        engine,
        [write_batch(tmp_path, make_records(samples, models))],
        write_rubric(tmp_path, rubric),
        name="adaptive",
        open_now=True,
    )


def _held(engine: Engine, batch_id: int) -> dict[str, list[bool]]:
    """Sample key -> its items' held_back flags."""
    with read_session(engine) as s:
        rows = s.execute(
            select(col(Sample.key), col(Item.held_back))
            .join(Sample, col(Sample.id) == col(Item.sample_id))
            .where(col(Item.batch_id) == batch_id)
        ).all()
    out: dict[str, list[bool]] = defaultdict(list)
    for key, held in rows:
        out[str(key)].append(bool(held))
    return out


def _scenario_of_sample(engine: Engine, batch_id: int) -> dict[str, str]:
    with read_session(engine) as s:
        rows = s.execute(
            select(col(Sample.key), col(Scenario.name))
            .join(Scenario, col(Scenario.id) == col(Sample.scenario_id))
            .where(col(Sample.batch_id) == batch_id)
        ).all()
    return {str(k): str(n) for k, n in rows}


def _shown(engine: Engine, assignment_id: int) -> tuple[str, str]:
    """The model shown (on the left, in pairwise mode) and the sample's key of an assignment: what the test's
    scripted reviewer answers by."""
    with read_session(engine) as s:
        model = shown_models(s, assignment_id)[0]
        key = s.execute(
            select(col(Sample.key))
            .join(Item, col(Item.sample_id) == col(Sample.id))
            .join(Assignment, col(Assignment.item_id) == col(Item.id))
            .where(col(Assignment.id) == assignment_id)
        ).scalar_one()
    return model, str(key)


def _done_per_item(engine: Engine, batch_id: int) -> Counter[int]:
    with read_session(engine) as s:
        rows = s.execute(
            select(col(Assignment.item_id), func.count())
            .where(
                col(Assignment.batch_id) == batch_id,
                col(Assignment.status) == AssignmentStatus.DONE,
                col(Assignment.occurrence) == 0,
            )
            .group_by(col(Assignment.item_id))
        ).all()
    return Counter({int(i): int(n) for i, n in rows})


def _item_ids(engine: Engine, batch_id: int) -> list[int]:
    with read_session(engine) as s:
        return [int(i) for i in s.execute(select(col(Item.id)).where(col(Item.batch_id) == batch_id)).scalars()]


def test_the_rubric_option_is_parsed_checked_and_kept() -> None:
    rubric = parse_rubric_text('allocation = "adaptive"\n' + RATING_RUBRIC.format(overlap=2))
    assert rubric.allocation.adaptive and rubric.allocation.uniform_share == 0.2
    assert not parse_rubric_text(RATING_RUBRIC.format(overlap=2)).allocation.adaptive
    assert "allocation" not in parse_rubric_text(RATING_RUBRIC.format(overlap=2)).to_json()  # stored as before
    with pytest.raises(RubricError) as caught:
        parse_rubric_text(
            RATING_RUBRIC.format(overlap=2) + '[allocation]\nmode = "greedy"\nuniform_share = 0\ntolerance = 2\n'
        )
    text = str(caught.value)
    assert "allocation.mode: must be" in text and "allocation.uniform_share" in text and "allocation.tolerance" in text


def test_samples_are_held_back_at_load_and_released_whole(engine: Engine, tmp_path: Path) -> None:
    summary = _load(engine, tmp_path, samples=20, models=["m1", "m2", "m3"], overlap=2)
    held = _held(engine, summary.batch_id)
    assert all(all(flags) for flags in held.values())  # nothing in the pool before the first claim
    person = add_reviewer(engine, "rita")[0]
    view = next_item(engine, summary.batch_id, person.id)
    assert view is not None
    held = _held(engine, summary.batch_id)
    released = [key for key, flags in held.items() if not any(flags)]
    assert all(all(flags) or not any(flags) for flags in held.values())  # a sample is released whole
    assert len(released) == FRONTIER
    with read_session(engine) as s:
        item = s.get(Assignment, view.assignment_id)
        assert item is not None
        sample = s.get(Item, item.item_id)
        assert sample is not None and not sample.held_back


def test_every_item_reaches_exactly_k_and_only_released_samples_are_claimed(engine: Engine, tmp_path: Path) -> None:
    summary = _load(engine, tmp_path, samples=10, models=["m1", "m2", "m3"], overlap=2)
    people = [add_reviewer(engine, f"r{i}")[0] for i in range(3)]
    active = list(people)
    while active:
        for person in list(active):
            view = next_item(engine, summary.batch_id, person.id)
            if view is None:
                active.remove(person)
                continue
            submit_review(engine, person.id, view.assignment_id, {"correctness": "4", "follows_format": "1"})
    done = _done_per_item(engine, summary.batch_id)
    assert {done[i] for i in _item_ids(engine, summary.batch_id)} == {2}  # exact k, every item
    assert not any(any(flags) for flags in _held(engine, summary.batch_id).values())


def test_releases_follow_the_states_and_never_reach_a_closed_scenario(
    engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fixed_batch_secrets(monkeypatch, "adaptive-states")
    summary = _load(engine, tmp_path, samples=40, models=["m1", "m2"], overlap=1, share=0.2)
    with write_session(engine) as s:
        repo.write_states(
            s,
            summary.batch_id,
            [
                ScenarioAllocation("qa", "settled", 30, 0, 0, 6, held=20, closed=True),
                ScenarioAllocation("summaries", "open", 30, 1, 10, 6, held=20),
            ],
            utcnow(),
        )
    scenario = _scenario_of_sample(engine, summary.batch_id)
    person = add_reviewer(engine, "rita")[0]
    answered = 0
    while (view := next_item(engine, summary.batch_id, person.id)) is not None:
        submit_review(engine, person.id, view.assignment_id, {"correctness": "3", "follows_format": "1"})
        answered += 1
    held = _held(engine, summary.batch_id)
    released = {scenario[key] for key, flags in held.items() if not any(flags)}
    assert released == {"summaries"}  # the closed scenario: not one sample, not even by the uniform share
    assert answered == 20 * 2  # all of summaries' samples, each model's output once (k = 1)
    state = pool_state(engine, "adaptive")
    assert [(s.scenario, s.closed, s.released) for s in state.states] == [("qa", True, 0), ("summaries", False, 20)]


def test_the_open_scenario_gets_most_releases_and_the_settled_one_the_uniform_share(
    engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fixed_batch_secrets(monkeypatch, "adaptive-share")
    summary = _load(engine, tmp_path, samples=80, models=["m1", "m2"], overlap=1, share=0.2)
    with write_session(engine) as s:
        repo.write_states(
            s,
            summary.batch_id,
            [
                ScenarioAllocation("qa", "settled", 30, 0, 0, 6, held=40),
                ScenarioAllocation("summaries", "open", 30, 1, 10, 6, held=40),
            ],
            utcnow(),
        )
    scenario = _scenario_of_sample(engine, summary.batch_id)
    person = add_reviewer(engine, "rita")[0]
    for _ in range(2 * 30):  # 30 samples' worth of claims
        view = next_item(engine, summary.batch_id, person.id)
        assert view is not None
        submit_review(engine, person.id, view.assignment_id, {"correctness": "3", "follows_format": "1"})
    held = _held(engine, summary.batch_id)
    counts = Counter(scenario[key] for key, flags in held.items() if not any(flags))
    # About 90% to the open scenario (80% by the rule, half of the 20% uniform); the settled one gets some.
    assert counts["summaries"] >= 0.75 * sum(counts.values()), counts
    assert counts["qa"] >= 1, counts


def test_an_adaptive_batch_is_not_planned(engine: Engine, tmp_path: Path) -> None:
    _load(engine, tmp_path, samples=4, models=["m1", "m2"], overlap=1)
    add_reviewer(engine, "rita")
    with pytest.raises(AssignmentError, match="allocates adaptively"):
        assign(engine, "adaptive")


def test_the_states_come_from_the_ratings_and_a_settled_scenario_closes(engine: Engine, tmp_path: Path) -> None:
    """qa: m1 always 5, m2 always 1 (settles at once after the burn-in); summaries: both at random (open)."""
    summary = _load(engine, tmp_path, samples=60, models=["m1", "m2"], overlap=1, share=1.0, close=True)
    scenario = _scenario_of_sample(engine, summary.batch_id)
    rng = random.Random(3)
    person = add_reviewer(engine, "rita")[0]
    for _ in range(2 * 52):  # 52 samples with every item rated: past the burn-in in both scenarios
        view = next_item(engine, summary.batch_id, person.id)
        assert view is not None
        model, key = _shown(engine, view.assignment_id)
        if scenario[key] == "qa":
            score = "5" if model == "m1" else "1"
        else:
            score = str(rng.randint(1, 5))
        submit_review(engine, person.id, view.assignment_id, {"correctness": score, "follows_format": "1"})
    state = refresh_allocation(engine, "adaptive")
    by_name = {s.scenario: s for s in state.states}
    assert by_name["qa"].state == "settled" and by_name["qa"].closed
    assert by_name["summaries"].state in ("open", "not_settling") and not by_name["summaries"].closed
    assert by_name["qa"].complete + by_name["summaries"].complete >= 48
    text = "\n".join(state.lines())
    assert "qa:" in text and "settled and closed" in text and "summaries:" in text
    # Closed stays closed: a later refresh does not reopen it.
    assert next(s for s in refresh_allocation(engine, "adaptive").states if s.scenario == "qa").closed
    # The report says how the samples were allocated, and its anytime verdicts are the ones the pool used.
    report = batch_report(engine, batch="adaptive", rounds=100)
    assert any(d.startswith("Adaptive allocation:") for d in report.methods.definitions)
    assert report.anytime is not None
    assert {v.scenario: v.state for v in report.anytime} == {v.scenario: v.state for v in state.verdicts}


def test_a_uniform_batch_has_no_pool_states(engine: Engine, tmp_path: Path) -> None:
    load_batch(
        engine,
        [write_batch(tmp_path, make_records(4, ["m1", "m2"]))],
        write_rubric(tmp_path, RATING_RUBRIC.format(overlap=1)),
        name="uniform",
        open_now=True,
    )
    with pytest.raises(ReportError, match="does not allocate adaptively"):
        refresh_allocation(engine, "uniform")


def test_the_background_refresher_refreshes_what_changed_and_only_that(engine: Engine, tmp_path: Path) -> None:
    summary = _load(engine, tmp_path, samples=6, models=["m1", "m2"], overlap=1)
    person = add_reviewer(engine, "rita")[0]
    refresher = Refresher(engine, period=3600)
    assert refresher.look() == 1  # never looked at: its states are written (all in burn-in)
    assert {s.state for s in pool_state(engine, "adaptive").states} == {"burn_in"}
    assert refresher.look() == 0  # nothing changed
    view = next_item(engine, summary.batch_id, person.id)
    assert view is not None
    submit_review(engine, person.id, view.assignment_id, {"correctness": "4", "follows_format": "1"})
    assert refresher.look() == 1  # a new rating
    with write_session(engine) as s:  # a closed batch is not looked at
        batch = s.get(Batch, summary.batch_id)
        assert batch is not None
        batch.status = BatchStatus.CLOSED
    assert refresher.look() == 0


def test_reviewers_claiming_at_once_release_and_finish_the_batch_without_a_deadlock(
    engine: Engine, tmp_path: Path
) -> None:
    """8 reviewers in threads, each claiming and answering until nothing is left: releases race (the same next
    sample, the same scenario's counter), and none waits for a lock another claim holds while waiting in turn."""
    summary = _load(engine, tmp_path, samples=12, models=["m1", "m2", "m3"], overlap=2)
    people = [add_reviewer(engine, f"r{i}")[0] for i in range(8)]
    errors: list[BaseException] = []

    def work(person_id: int) -> None:
        try:
            while (view := next_item(engine, summary.batch_id, person_id)) is not None:
                submit_review(engine, person_id, view.assignment_id, {"correctness": "4", "follows_format": "1"})
        except BaseException as exc:  # noqa: BLE001 - the test reads it
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(p.id,)) for p in people]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not errors, errors
    done = _done_per_item(engine, summary.batch_id)
    assert {done[i] for i in _item_ids(engine, summary.batch_id)} == {2}
    assert not any(any(flags) for flags in _held(engine, summary.batch_id).values())


def test_the_served_app_refreshes_an_adaptive_pool_in_the_background(
    sqlite_database: Copy, sqlite_engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``blind-review serve`` starts the refresher (every BLIND_REVIEW_ALLOCATION_SECONDS): a rating submitted
    while it runs shows in the pool's states without anyone asking."""
    summary = _load(sqlite_engine, tmp_path, samples=6, models=["m1", "m2"], overlap=1)
    person = add_reviewer(sqlite_engine, "rita")[0]
    monkeypatch.setenv("BLIND_REVIEW_ALLOCATION_SECONDS", "1")
    server = Server(sqlite_database.url, sqlite_database.data_dir, tmp_path / "serve.log")
    try:
        view = next_item(sqlite_engine, summary.batch_id, person.id)
        assert view is not None
        submit_review(sqlite_engine, person.id, view.assignment_id, {"correctness": "4", "follows_format": "1"})
        deadline = time.monotonic() + 60
        while not pool_state(sqlite_engine, "adaptive").states and time.monotonic() < deadline:
            time.sleep(0.5)
    finally:
        server.stop()
    states = pool_state(sqlite_engine, "adaptive").states
    assert {s.scenario for s in states} == {"qa", "summaries"}, (tmp_path / "serve.log").read_text()[-2000:]


def test_a_pairwise_batch_is_allocated_by_its_head_to_head_verdicts(engine: Engine, tmp_path: Path) -> None:
    """qa: m1 wins every duel (settled after the burn-in); summaries: either side at random (still open)."""
    rubric = 'allocation = "adaptive"\n' + PAIRWISE_RUBRIC.format(overlap=1)
    summary = load_batch(
        engine,
        [write_batch(tmp_path, make_records(60, ["m1", "m2"]))],
        write_rubric(tmp_path, rubric),
        name="duels",
        open_now=True,
    )
    rng = random.Random(4)
    person = add_reviewer(engine, "rita")[0]
    scenario = _scenario_of_sample(engine, summary.batch_id)
    for _ in range(52):
        view = next_item(engine, summary.batch_id, person.id)
        assert view is not None
        left, key = _shown(engine, view.assignment_id)
        if scenario[key] == "qa":
            answer = "left" if left == "m1" else "right"
        else:
            answer = rng.choice(["left", "right"])
        submit_review(engine, person.id, view.assignment_id, {"overall": answer})
    by_name = {s.scenario: s for s in refresh_allocation(engine, "duels").states}
    assert by_name["qa"].state == "settled"
    assert by_name["summaries"].state in ("open", "not_settling")
    report = batch_report(engine, batch="duels", rounds=100)
    assert report.anytime is not None
    qa = next(v for v in report.anytime if v.scenario == "qa")
    assert qa.pairs[0].model_a == "m1" and qa.pairs[0].diff == pytest.approx(1.0)
