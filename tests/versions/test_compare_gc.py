"""`compare_batches` pauses Python's cyclic garbage collector while it reads and computes (issue 10's
benchmark: the collector's walks over millions of freshly read objects cost 1-1.5 s of 8) and gives it back as
it found it: running after a comparison, after a failed one, and still paused for a caller that paused it."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from sqlalchemy.engine import Engine

from reviewer_app.errors import ReportError
from reviewer_app.versions import batch_compare as service
from reviewer_app.versions.batch_compare import compare_batches
from storage.repositories.versions import compare_ratings_frame
from tests.support.compare_chain import chain, load, records


@pytest.fixture
def collector_on() -> Iterator[None]:
    was_on = gc.isenabled()
    gc.enable()
    yield
    if was_on:
        gc.enable()
    else:
        gc.disable()


def _spy(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Records whether the collector ran at each ratings read."""
    real = compare_ratings_frame
    seen: list[bool] = []

    def reading(session: Any, batch_id: int) -> pd.DataFrame:
        seen.append(gc.isenabled())
        return real(session, batch_id)

    monkeypatch.setattr(service, "compare_ratings_frame", reading)
    return seen


@pytest.mark.usefixtures("collector_on")
def test_collector_paused_during_a_comparison_and_running_after(
    engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    chain(engine, tmp_path)
    seen = _spy(monkeypatch)
    result = compare_batches(engine, "v1", "v2", match=["m1=m1-v2"], rounds=100)
    assert result.comparison.rows
    assert seen == [False, False]
    assert gc.isenabled()


@pytest.mark.usefixtures("collector_on")
def test_collector_running_again_after_a_comparison_fails(engine: Engine, tmp_path: Path) -> None:
    chain(engine, tmp_path)
    load(engine, tmp_path, "other", records({"m1": "m1"}, prefix="x"))  # fails once both batches are read
    with pytest.raises(ReportError, match="share no sample id"):
        compare_batches(engine, "v1", "other", rounds=100)
    assert gc.isenabled()


def test_collector_left_paused_when_the_caller_paused_it(
    engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    chain(engine, tmp_path)
    seen = _spy(monkeypatch)
    was_on = gc.isenabled()
    gc.disable()
    try:
        compare_batches(engine, "v1", "v2", match=["m1=m1-v2"], rounds=100)
        assert not gc.isenabled()
    finally:
        if was_on:
            gc.enable()
    assert seen == [False, False]


@pytest.mark.usefixtures("collector_on")
def test_reports_and_rating_exports_read_with_the_collector_paused(
    engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from reviewer_app.ratings import export as ratings_io
    from reviewer_app.results import batch_reports
    from storage.repositories.ratings import exports as ratings_repo

    chain(engine, tmp_path)
    seen: list[bool] = []
    real_frame = batch_reports.ratings_frame
    real_rows = ratings_repo.export_chunks

    def frame(*args: Any, **kwargs: Any) -> pd.DataFrame:
        seen.append(gc.isenabled())
        return real_frame(*args, **kwargs)

    def rows(*args: Any, **kwargs: Any) -> Any:
        seen.append(gc.isenabled())
        return real_rows(*args, **kwargs)

    monkeypatch.setattr(batch_reports, "ratings_frame", frame)
    monkeypatch.setattr(ratings_repo, "export_chunks", rows)
    batch_reports.batch_report(engine, batch="v1", rounds=100)
    ratings_io.export_ratings(engine, "v1", "csv", tmp_path / "v1.csv")
    assert seen == [False, False] and gc.isenabled()
