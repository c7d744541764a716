"""The lead page's report cache: one computation per batch data revision, rounds and weights, bounded."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import insert, select, update
from sqlalchemy.engine import Engine

from reviewer_app.errors import NotFoundError
from reviewer_app.reporting.formats import render
from reviewer_app.results.batch_reports import batch_report
from reviewer_app.results.report_cache import ReportCache
from storage.engine import write_session
from storage.models import Assignment, Rating, Reviewer
from storage.repositories.review.answers import upsert_ratings
from tests.support.report_panels import build_panel_db

ROUNDS = 100


def _batch(engine: Engine, tmp_path: Path) -> int:
    build_panel_db(engine, tmp_path / "files", mode="rating", n_samples=4)
    with write_session(engine) as session:
        return int(session.execute(select(Rating.batch_id)).scalars().first() or 0)


def _first_rating(engine: Engine) -> tuple[int, int, int, int, str, str]:
    with write_session(engine) as session:
        row = session.execute(
            select(Rating.assignment_id, Rating.batch_id, Rating.item_id, Rating.reviewer_id, Rating.dimension,
                   Rating.value).where(Rating.dimension == "correctness").order_by(Rating.id)
        ).first()  # fmt: skip
        assert row is not None
        return (int(row[0]), int(row[1]), int(row[2]), int(row[3]), str(row[4]), str(row[5]))


def test_an_unchanged_batch_is_computed_once(engine: Engine, tmp_path: Path) -> None:
    batch_id = _batch(engine, tmp_path)
    cache = ReportCache()
    first = cache.report(engine, batch_id, rounds=ROUNDS)
    assert cache.report(engine, batch_id, rounds=ROUNDS) is first
    assert cache.builds == 1
    cache.report(engine, batch_id, rounds=200)  # rounds are part of the key
    assert cache.builds == 2


def test_a_revised_new_or_withdrawn_rating_or_a_new_role_gives_a_new_report(engine: Engine, tmp_path: Path) -> None:
    batch_id = _batch(engine, tmp_path)
    cache = ReportCache()
    before = cache.report(engine, batch_id, rounds=ROUNDS)
    aid, _, item, reviewer, dim, value = _first_rating(engine)
    later = datetime.now(UTC) + timedelta(minutes=5)
    with write_session(engine) as session:  # a second submit of the same answer form: an update
        upsert_ratings(session, [{"assignment_id": aid, "batch_id": batch_id, "item_id": item,
                                  "reviewer_id": reviewer, "dimension": dim,
                                  "value": "1" if value != "1" else "5"}], later)  # fmt: skip
    revised = cache.report(engine, batch_id, rounds=ROUNDS)
    assert cache.builds == 2 and revised is not before
    assert revised.overall.ranking != before.overall.ranking or revised.scenarios != before.scenarios

    with write_session(engine) as session:  # a new answer on a new dimension of the same showing
        session.execute(insert(Rating).values(assignment_id=aid, batch_id=batch_id, item_id=item,
                                              reviewer_id=reviewer, dimension="note", value="x"))  # fmt: skip
    cache.report(engine, batch_id, rounds=ROUNDS)
    assert cache.builds == 3

    with write_session(engine) as session:  # an earlier answer withdrawn (it became "can't judge")
        other = session.execute(select(Rating.id).where(Rating.assignment_id != aid).order_by(Rating.id)).scalar()
        session.execute(Rating.__table__.delete().where(Rating.id == other))  # type: ignore[attr-defined]
    cache.report(engine, batch_id, rounds=ROUNDS)
    assert cache.builds == 4

    with write_session(engine) as session:
        session.execute(update(Reviewer).where(Reviewer.id == reviewer).values(role="lead"))
    cache.report(engine, batch_id, rounds=ROUNDS)
    cache.report(engine, batch_id, rounds=ROUNDS)
    assert cache.builds == 5


def test_weights_are_part_of_the_key_and_the_defaults_are_the_same_report(engine: Engine, tmp_path: Path) -> None:
    batch_id = _batch(engine, tmp_path)
    cache = ReportCache()
    plain = cache.report(engine, batch_id, rounds=ROUNDS)
    defaults = dict(plain.overall.composite.weights)
    assert cache.report(engine, batch_id, rounds=ROUNDS, weights=defaults) is plain
    assert cache.builds == 1
    fresh = batch_report(engine, batch_id=batch_id, rounds=ROUNDS, weights=defaults)
    stamp = {"generated_at": plain.generated_at}
    assert render(dataclasses.replace(fresh, **stamp), "json") == render(plain, "json")  # so serving it is exact

    other = {**defaults, "extraction": 3.0}
    heavy = cache.report(engine, batch_id, rounds=ROUNDS, weights=other)
    assert cache.builds == 2 and heavy.overall.composite.weights["extraction"] == 3.0
    assert cache.report(engine, batch_id, rounds=ROUNDS, weights=other) is heavy
    assert cache.builds == 2


def test_memory_is_bounded_oldest_out_first(engine: Engine, tmp_path: Path) -> None:
    batch_id = _batch(engine, tmp_path)
    cache = ReportCache(size=2)
    for w in (1.0, 2.0, 3.0):
        cache.report(engine, batch_id, rounds=ROUNDS, weights={"extraction": w})
    assert len(cache) == 2 and cache.builds == 3
    cache.report(engine, batch_id, rounds=ROUNDS, weights={"extraction": 3.0})  # still kept
    assert cache.builds == 3
    cache.report(engine, batch_id, rounds=ROUNDS, weights={"extraction": 1.0})  # the oldest, dropped
    assert cache.builds == 4 and len(cache) == 2


def test_an_unknown_batch_is_a_clear_error(engine: Engine) -> None:
    with pytest.raises(NotFoundError, match="no batch with id 999"):
        ReportCache().report(engine, 999)


def test_the_showing_table_is_not_part_of_the_key_on_its_own(engine: Engine, tmp_path: Path) -> None:
    """What changes a report comes with a rating write; a reviewer opening an item (shown_at) does not."""
    batch_id = _batch(engine, tmp_path)
    cache = ReportCache()
    cache.report(engine, batch_id, rounds=ROUNDS)
    with write_session(engine) as session:
        session.execute(update(Assignment).where(Assignment.batch_id == batch_id).values(reserved_until=None))
    cache.report(engine, batch_id, rounds=ROUNDS)
    assert cache.builds == 1
