"""The ratings a comparison reads through its own query (``compare_ratings_frame``, issue 10's benchmark) are
the report reader's, ``ratings_frame(..., python_strings=True)`` less three columns, frame for frame: values,
dtypes and row order. Checked on a follow-up with anchors (rating mode, several reviewers), a pairwise batch
with ratings (a second output per item, swapped sides), a batch with a gold item and a repeat showing, and
batches without ratings."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from sqlalchemy import select, update
from sqlalchemy.engine import Engine
from sqlmodel import col

from reviewer_app.batches.loading import load_batch
from reviewer_app.ratings.files import import_ratings
from storage.engine import read_session, write_session
from storage.models import Assignment, Batch, Item
from storage.repositories.results.frames import ratings_frame
from storage.repositories.versions import COMPARE_RATING_COLUMNS, compare_ratings_frame
from tests.helpers import write_batch
from tests.support.compare_chain import N_SAMPLES, SAMPLE_EFFECT, SCENARIOS, load, rate_items, records


def _ids(engine: Engine) -> dict[str, int]:
    with read_session(engine) as session:
        return {str(n): int(i) for n, i in session.execute(select(col(Batch.name), col(Batch.id)))}


def _same(engine: Engine, batch_id: int) -> pd.DataFrame:
    with read_session(engine) as session:
        lean = compare_ratings_frame(session, batch_id)
        full = ratings_frame(session, batch_id, python_strings=True)
    assert list(lean.columns) == COMPARE_RATING_COLUMNS
    pd.testing.assert_frame_equal(lean, full[COMPARE_RATING_COLUMNS])
    return lean


def _pairwise_csv(path: Path) -> Path:
    lines = ["reviewer,sample_id,model_a,model_b,dimension,winner"]
    for i in range(N_SAMPLES):
        for k, who in enumerate(("ana", "ben", "cleo")):
            lines.append(f"{who},s{i},m1,ref,overall,{'ab'[(i + k) % 2] if i % 7 else 'tie'}")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_compare_read_equals_the_report_reader(engine: Engine, tmp_path: Path) -> None:
    load(engine, tmp_path, "v1", records({"m1": "m1", "m2": "m2"}))
    rate_items(engine, _ids(engine)["v1"], lambda i, _m, _a: 3.0 + SAMPLE_EFFECT[i], seed=1)
    batch = write_batch(tmp_path / "v2", records({"m1": "m1", "m2": "m2"}))
    summary = load_batch(
        engine, [batch], None, name="v2", follow_up="v1", anchor_share=0.5, on_leak="flag", open_now=True
    )
    rate_items(engine, summary.batch_id, lambda i, _m, anchor: 3.0 + SAMPLE_EFFECT[i] + anchor, seed=3)
    pairwise = 'mode = "pairwise"\noverlap = 3\n'
    load(engine, tmp_path, "p1", records({"m1": "m1", "ref": "ref"}), rubric=pairwise)
    import_ratings(engine, "p1", _pairwise_csv(tmp_path / "p1.csv"))
    load(engine, tmp_path, "empty", records({"m1": "m1"}))
    ids = _ids(engine)
    # A gold item and a repeat showing in v1, and some sides shown swapped in p1: columns a comparison
    # filters on, which must come through as the report reader gives them.
    with write_session(engine) as session:
        v1_items = select(col(Item.id)).where(col(Item.batch_id) == ids["v1"]).order_by(col(Item.id))
        first = int(session.scalars(v1_items).first() or 0)
        session.execute(update(Item).where(col(Item.id) == first).values(is_gold=True))
        session.execute(update(Assignment).where(col(Assignment.item_id) == first + 1).values(occurrence=1))
        pairs = (col(Assignment.batch_id) == ids["p1"]) & (col(Assignment.id) % 3 == 0)
        session.execute(update(Assignment).where(pairs).values(swapped=True))

    v1 = _same(engine, ids["v1"])
    assert v1["is_gold"].any() and (v1["occurrence"] == 1).any()
    assert v1["reviewer"].nunique() > 1 and v1["model_b"].isna().all()
    v2 = _same(engine, summary.batch_id)
    assert v2["is_anchor"].any() and not v2["is_anchor"].all()
    p1 = _same(engine, ids["p1"])
    assert p1["model_b"].notna().all() and p1["swapped"].any() and not p1["swapped"].all()
    assert set(p1["scenario"]) == set(SCENARIOS)
    assert len(_same(engine, ids["empty"])) == 0
