"""Three rounds of one eval set, linked as follow-ups, with a known truth: ``r1`` (m1, m2), ``r2`` a follow-up of
``r1`` (m1, m2 unchanged), ``r3`` a follow-up of ``r2`` where m1 is renamed ``m1b`` and is 1.5 points worse in
qa (unchanged in summaries); m2 never changes. Every round is rated by the app's own tables (anchors too, at
their baseline quality). Used by the service, CLI and page tests of ``history``."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy.engine import Engine

from reviewer_app.batches.loading import load_batch
from tests.helpers import write_batch, write_rubric
from tests.support.compare_chain import RUBRIC, SAMPLE_EFFECT, SCENARIOS, rate_items, records

DROP = 1.5  # m1b's drop in qa, in points


def history_chain(engine: Engine, tmp_path: Path, *, rate: bool = True) -> dict[str, int]:
    """Load (and, with ``rate``, rate) the three rounds; returns {batch name: id}."""
    ids = {}
    first = write_batch(tmp_path / "r1", records({"m1": "m1", "m2": "m2"}))
    ids["r1"] = load_batch(
        engine, [first], write_rubric(tmp_path / "r1", RUBRIC), name="r1", on_leak="flag", open_now=True
    ).batch_id
    for name, base, models in (("r2", "r1", {"m1": "m1", "m2": "m2"}), ("r3", "r2", {"m1b": "m1", "m2": "m2"})):
        batch = write_batch(tmp_path / name, records(models))
        ids[name] = load_batch(
            engine,
            [batch],
            None,
            name=name,
            follow_up=base,
            anchor_share=0.4,
            on_leak="flag",  # 12 anchored samples per scenario: enough for a verdict
            open_now=True,
        ).batch_id
    if not rate:
        return ids

    def quality(i: int, model: str, anchor: bool) -> float:
        drop = DROP if (model, SCENARIOS[i % 2], anchor) == ("m1b", "qa", False) else 0.0
        return 3.5 + SAMPLE_EFFECT[i] - drop

    for k, batch_id in enumerate(ids.values()):
        rate_items(engine, batch_id, quality, seed=10 + k)
    return ids
