"""The outputs read a comparison makes in one query (issue 10's benchmark) give what the report's frames give.

``outputs_frame(..., with_text=True)`` must be ``outputs_frame`` (names as Python strings) plus each output's
text as stored. Checked on a follow-up with anchors (rating mode), a pairwise batch and an empty batch. (The
ratings a comparison reads are ``ratings_frame`` itself, less three columns.)"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from sqlalchemy import select
from sqlalchemy.engine import Engine

from reviewer_app.batches.loading import load_batch
from storage.engine import read_session
from storage.models import Batch, Output
from storage.repositories.results.outputs import outputs_frame
from storage.repositories.versions import COMPARE_RATING_COLUMNS, compare_ratings_frame
from tests.helpers import write_batch
from tests.support.compare_chain import SAMPLE_EFFECT, load, rate_items, records


def _ids(engine: Engine) -> dict[str, int]:
    with read_session(engine) as session:
        return {str(n): int(i) for n, i in session.execute(select(Batch.name, Batch.id))}


def _check(engine: Engine, batch_id: int) -> None:
    with read_session(engine) as session:
        lean = compare_ratings_frame(session, batch_id)
        plain = outputs_frame(session, batch_id)
        with_text = outputs_frame(session, batch_id, with_text=True)
        texts = [
            str(t) for t in session.scalars(select(Output.text).where(Output.batch_id == batch_id).order_by(Output.id))
        ]
    assert list(lean.columns) == COMPARE_RATING_COLUMNS
    assert list(with_text.columns) == [*plain.columns, "text"]
    assert with_text["text"].tolist() == texts and with_text["text"].dtype == object
    names = [c for c in plain.columns if pd.api.types.is_string_dtype(plain[c].dtype) and plain[c].dtype != object]
    assert {"scenario", "sample_id", "model", "leak_words"} <= set(names)
    expected = plain.astype(dict.fromkeys(("scenario", "sample_id", "model", "leak_words"), object))
    pd.testing.assert_frame_equal(with_text.drop(columns="text"), expected)


def test_lean_reads_equal_the_report_frames(engine: Engine, tmp_path: Path) -> None:
    load(engine, tmp_path, "v1", records({"m1": "m1", "m2": "m2"}))
    batch = write_batch(tmp_path / "v2", records({"m1": "m1", "m2": "m2"}))
    summary = load_batch(
        engine, [batch], None, name="v2", follow_up="v1", anchor_share=0.5, on_leak="flag", open_now=True
    )
    rate_items(engine, summary.batch_id, lambda i, _m, anchor: 3.0 + SAMPLE_EFFECT[i] + anchor, seed=3)
    load(engine, tmp_path, "p1", records({"m1": "m1", "ref": "ref"}), rubric='mode = "pairwise"\noverlap = 3\n')
    ids = _ids(engine)
    with read_session(engine) as session:
        assert compare_ratings_frame(session, summary.batch_id)["is_anchor"].any()
    for name in ("v1", "v2", "p1"):  # v1 and p1 have no ratings: the empty frames must agree too
        _check(engine, ids[name])
