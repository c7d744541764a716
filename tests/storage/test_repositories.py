"""Repositories: enum columns read back as the domain's enums, the item-to-model join serves both modes, and
claim logging names reviewers and items by id, never a model."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from sqlalchemy import text
from sqlalchemy.engine import Engine
from sqlmodel import col, select

from reviewer_app.batches.loading import load_batch
from reviewer_app.domain.enums import AssignmentStatus, BatchStatus, Mode, Role
from reviewer_app.people.people import add_reviewer
from reviewer_app.review.assignment import assign
from reviewer_app.review.reviews import next_item
from storage.engine import read_session, write_session
from storage.models import Assignment, Batch, Reviewer
from storage.repositories.batches import batches
from storage.repositories.ratings import items
from tests.helpers import PAIRWISE_RUBRIC, RATING_RUBRIC, make_records, write_batch, write_rubric

MODELS = ["zephyr-secret-7b", "quokka-hidden-13b"]


def test_modes_statuses_and_roles_read_back_as_enums_stored_as_plain_strings(engine: Engine, tmp_path: Path) -> None:
    summary = load_batch(
        engine,
        [write_batch(tmp_path, make_records(2, MODELS))],
        write_rubric(tmp_path, RATING_RUBRIC.format(overlap=1)),
        name="enums",
        open_now=True,
    )
    person = add_reviewer(engine, "ann", "lead")[0]
    assign(engine, "enums", ["ann"])  # a lead takes slots only when named: the pool is for reviewers
    assert next_item(engine, summary.batch_id, person.id) is not None
    with write_session(engine) as s:
        batches.set_batch_status(s, summary.batch_id, "closed")
    with read_session(engine) as s:
        batch = s.exec(select(Batch)).one()
        reviewer = s.exec(select(Reviewer)).one()
        assignment = s.exec(select(Assignment).order_by(col(Assignment.id))).first()
        assert assignment is not None
        raw = s.connection().execute(text("SELECT mode, status FROM batch")).one()
    assert (batch.mode, batch.status) == (Mode.RATING, BatchStatus.CLOSED)
    assert isinstance(batch.mode, Mode) and isinstance(batch.status, BatchStatus)
    assert isinstance(reviewer.role, Role) and reviewer.role.rank == Role.LEAD.rank
    assert assignment.status is AssignmentStatus.PENDING
    assert tuple(raw) == ("rating", "closed") and type(raw[0]) is str


def test_an_unknown_status_is_refused_on_write(engine: Engine, tmp_path: Path) -> None:
    summary = load_batch(
        engine,
        [write_batch(tmp_path, make_records(1, MODELS))],
        write_rubric(tmp_path, RATING_RUBRIC.format(overlap=1)),
        name="strict",
        open_now=True,
    )
    with pytest.raises(ValueError, match="'ajar' is not a valid BatchStatus"), write_session(engine) as s:
        batches.set_batch_status(s, summary.batch_id, "ajar")


@pytest.mark.parametrize(("rubric", "pairwise"), [(RATING_RUBRIC, False), (PAIRWISE_RUBRIC, True)])
def test_item_index_joins_each_items_outputs_to_their_model_names(
    engine: Engine, tmp_path: Path, rubric: str, pairwise: bool
) -> None:
    summary = load_batch(
        engine,
        [write_batch(tmp_path, make_records(2, MODELS))],
        write_rubric(tmp_path, rubric.format(overlap=1)),
        name="index",
        open_now=True,
    )
    with read_session(engine) as s:
        index = items.item_index(s, summary.batch_id)
    if pairwise:  # keyed by the pair as stored, whichever model is its output a (a keyed coin: issue 33)
        expected = {("s0", *sorted(MODELS)), ("s1", *sorted(MODELS))}
        assert {(key, *sorted((a, b))) for key, a, b in index if b is not None} == expected
        assert len(index) == 2
    else:
        expected = {(key, model, None) for key in ("s0", "s1") for model in MODELS}
        assert set(index) == expected
    assert len(set(index.values())) == len(index) == summary.items


def test_claims_are_logged_by_id_without_model_names(
    engine: Engine, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    summary = load_batch(
        engine,
        [write_batch(tmp_path, make_records(1, MODELS))],
        write_rubric(tmp_path, PAIRWISE_RUBRIC.format(overlap=1)),
        name="logged",
        open_now=True,
    )
    first, second = add_reviewer(engine, "ann")[0], add_reviewer(engine, "bob")[0]
    with caplog.at_level(logging.DEBUG, logger="storage"):
        view = next_item(engine, summary.batch_id, first.id)
        assert view is not None
        assert next_item(engine, summary.batch_id, second.id) is None
    messages = [r.getMessage() for r in caplog.records if r.name.startswith("storage.")]
    assert any(m.startswith(f"pool claim granted: reviewer {first.id}, item ") for m in messages), messages
    assert any(m == f"pool: no free slot for reviewer {second.id} in batch {summary.batch_id}" for m in messages)
    assert not [m for m in messages if any(name in m for name in MODELS)]
