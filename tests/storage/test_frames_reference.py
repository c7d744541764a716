"""The frames read through the driver's cursor equal the straightforward ORM reading they replaced.

``reference_ratings`` and ``reference_outputs`` are the code of ``storage/repositories/frames.py`` (now
``results/frames.py`` and ``results/outputs.py``) at commit 0c7315f (SQLAlchemy rows into ``pd.DataFrame``;
every output's text read to count its characters and words), kept here as the reference; both modes, on
SQLite and PostgreSQL, dtypes included.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from sqlalchemy import select
from sqlalchemy.engine import Engine
from sqlmodel import Session, col

from reviewer_app.domain.style import style_counts
from storage.engine import read_session
from storage.models import Assignment, Item, Model, Output, Rating, Reviewer, Sample, Scenario
from storage.repositories.query import execute_wide
from storage.repositories.ratings.items import ItemModels
from storage.repositories.results.frames import RATING_COLUMNS, ratings_frame
from storage.repositories.results.outputs import STYLE_COLUMNS, outputs_frame
from tests.support.report_panels import build_panel_db


def reference_ratings(session: Session, batch_id: int) -> pd.DataFrame:
    io = ItemModels()
    stmt = io.join(
        select(
            col(Scenario.name),
            col(Sample.key),
            col(Item.id),
            col(Item.is_gold),
            col(Reviewer.name),
            col(Assignment.occurrence),
            col(Assignment.position),
            col(Assignment.swapped),
            col(Rating.dimension),
            col(Rating.value),
            col(io.model_a.name),
            col(io.model_b.name),
            col(io.output_a.repeat),
            col(io.output_b.repeat),
            col(Assignment.seconds_spent),
            col(Reviewer.role),
            col(Assignment.shown_at),
            col(Item.is_anchor),
        )
        .select_from(Rating)
        .join(Assignment, col(Assignment.id) == col(Rating.assignment_id))
        .join(Item, col(Item.id) == col(Rating.item_id))
        .join(Sample, col(Sample.id) == col(Item.sample_id))
        .join(Scenario, col(Scenario.id) == col(Sample.scenario_id))
        .join(Reviewer, col(Reviewer.id) == col(Rating.reviewer_id))
    ).where(col(Rating.batch_id) == batch_id)
    rows = execute_wide(session, stmt.order_by(col(Rating.id))).all()
    frame = pd.DataFrame(rows, columns=RATING_COLUMNS)
    frame["is_gold"] = frame["is_gold"].astype(bool)
    frame["swapped"] = frame["swapped"].astype(bool)
    # Pairs in model-name order, "b shown on the left" turned with them: how ratings_frame names a pair whose
    # output a the load's keyed coin made the other model (issue 33).
    turned = frame["model_b"].notna() & (frame["model_b"].astype(object) < frame["model_a"].astype(object))
    if turned.any():
        for first, second in (("model_a", "model_b"), ("repeat_a", "repeat_b")):
            frame.loc[turned, [first, second]] = frame.loc[turned, [second, first]].to_numpy()
        frame.loc[turned, "swapped"] = ~frame.loc[turned, "swapped"]
    frame["seconds_spent"] = frame["seconds_spent"].astype(float)
    frame["rater_role"] = frame["rater_role"].astype(str)
    frame["shown"] = frame["shown"].notna()
    frame["is_anchor"] = frame["is_anchor"].astype(bool)
    return frame


def reference_outputs(session: Session, batch_id: int) -> pd.DataFrame:
    stmt = (
        select(
            col(Scenario.name),
            col(Sample.key),
            col(Model.name),
            col(Output.repeat),
            col(Output.excluded),
            col(Output.leak_words),
            col(Output.text),
            col(Output.metadata_json),
        )
        .select_from(Output)
        .join(Sample, col(Sample.id) == col(Output.sample_id))
        .join(Scenario, col(Scenario.id) == col(Sample.scenario_id))
        .join(Model, col(Model.id) == col(Output.model_id))
        .where(col(Output.batch_id) == batch_id)
        .order_by(col(Output.id))
    )
    records = []
    for scenario, key, model, repeat, excluded, leaks, text, meta in execute_wide(session, stmt):
        rec: dict[str, object] = {
            "scenario": scenario,
            "sample_id": key,
            "model": model,
            "repeat": repeat,
            "excluded": bool(excluded),
            "leak_words": leaks,
            "output_chars": len(text),
            "output_words": len(text.split()),
            **dict(zip(STYLE_COLUMNS, style_counts(text), strict=True)),
        }
        for k, v in json.loads(meta).items():
            if k not in rec and (isinstance(v, int | float | str) and not isinstance(v, bool)):
                rec[k] = v
        records.append(rec)
    base = ["scenario", "sample_id", "model", "repeat", "excluded", "leak_words", "output_chars", "output_words",
            *STYLE_COLUMNS]  # fmt: skip
    return pd.DataFrame.from_records(records, columns=None if records else base)


def _batch_id(session: Session) -> int:
    return int(session.execute(select(Sample.batch_id)).scalars().first() or 0)


@pytest.mark.parametrize("mode", ["rating", "pairwise"])
def test_frames_equal_the_orm_reading(engine: Engine, tmp_path: Path, mode: str) -> None:
    build_panel_db(engine, tmp_path / "files", mode=mode, n_samples=12)
    with read_session(engine) as session:
        batch_id = _batch_id(session)
        ratings, want = ratings_frame(session, batch_id), reference_ratings(session, batch_id)
        pd.testing.assert_frame_equal(ratings, want)
        plain = ratings_frame(session, batch_id, python_strings=True)
        texts = [c for c in RATING_COLUMNS if pd.api.types.is_string_dtype(want[c].dtype) and want[c].dtype != object]
        pd.testing.assert_frame_equal(plain, want.astype(dict.fromkeys(texts, object)))
        pd.testing.assert_frame_equal(outputs_frame(session, batch_id), reference_outputs(session, batch_id))
        assert len(ratings) > 100 and ratings["shown"].any() and (~ratings["shown"]).any()


def test_empty_batch_frames_equal_the_orm_reading(engine: Engine, tmp_path: Path) -> None:
    build_panel_db(engine, tmp_path / "a", mode="rating", n_samples=3, name="first")
    build_panel_db(engine, tmp_path / "b", mode="rating", n_samples=3, name="second", seed=5)
    with read_session(engine) as session:
        nobody = 10_000
        pd.testing.assert_frame_equal(ratings_frame(session, nobody), reference_ratings(session, nobody))
        pd.testing.assert_frame_equal(outputs_frame(session, nobody), reference_outputs(session, nobody))


METADATA_CASES = {
    "plain": ['{"latency_ms": 812, "note": "x"}', '{"latency_ms": 9.5}', "{}", '{"ttft_ms": 3}'],
    "null first": ['{"a": null, "b": 1}', '{"b": 2, "a": 3}', '{"a": 4}'],
    "booleans and nesting": ['{"ok": true, "n": 1}', '{"ok": 3, "tags": ["x"], "o": {"k": 1}}', '{"n": false}'],
    "a clash with a column": ['{"model": "x", "repeat": 4, "k": 1}', '{"k": 2}'],
    "NaN and big integers": ['{"v": NaN, "w": 1}', '{"v": 1.5, "big": 123456789012345678901234567890}'],
    "only nulls": ['{"a": null}', '{"a": null, "b": "t"}'],
    "mixed types": ['{"a": 1}', '{"a": "one"}', '{"a": 2.5}'],
}


@pytest.mark.parametrize("case", list(METADATA_CASES))
def test_metadata_columns_follow_the_row_by_row_rule(case: str) -> None:
    from storage.repositories.results.outputs import _metadata, _metadata_columns, _parse_all

    texts = METADATA_CASES[case]
    base = ["scenario", "sample_id", "model", "repeat", "excluded", "leak_words", "output_chars", "output_words",
            *STYLE_COLUMNS]  # fmt: skip
    records = []
    for text in texts:  # the rule of reference_outputs above, on the metadata alone
        rec: dict[str, object] = dict.fromkeys(base, 0)
        for k, v in json.loads(text).items():
            if k not in rec and (isinstance(v, int | float | str) and not isinstance(v, bool)):
                rec[k] = v
        records.append(rec)
    want = pd.DataFrame.from_records(records).drop(columns=base)
    assert _parse_all(texts) == [_metadata(t) for t in texts] or case == "NaN and big integers"
    got = _metadata_columns(_parse_all(texts))
    if want.columns.empty:
        assert got.columns.empty
    else:
        pd.testing.assert_frame_equal(got, want)
