"""Batch rows and the bulk write of a whole batch in one transaction."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import ColumnElement, func, update
from sqlmodel import Session, SQLModel, col, select

from reviewer_app.domain.enums import AssignmentStatus, BatchStatus
from storage.models import Assignment, Batch, Item, Model, Output, Rating, Sample, Scenario, pool_key, text_counts
from storage.repositories.query import bulk_insert, next_ids, pk

log = logging.getLogger(__name__)


def get_batch_by_name(session: Session, name: str) -> Batch | None:
    return session.exec(select(Batch).where(col(Batch.name) == name)).one_or_none()


def get_batch(session: Session, batch_id: int) -> Batch | None:
    return session.get(Batch, batch_id)


def get_batch_by_hash(session: Session, content_hash: str) -> Batch | None:
    return session.exec(select(Batch).where(col(Batch.content_hash) == content_hash)).first()


def list_batches(session: Session) -> list[Batch]:
    return list(session.exec(select(Batch).order_by(col(Batch.id))))


def set_batch_status(session: Session, batch_id: int, status: BatchStatus | str) -> None:
    """Open or close a batch. ``status`` is a :class:`BatchStatus` value (ValueError for anything else)."""
    session.exec(update(Batch).where(col(Batch.id) == batch_id).values(status=BatchStatus(status)))


@dataclass
class BatchCounts:
    scenarios: int
    samples: int
    outputs: int
    items: int
    assignments: int
    done: int
    ratings: int


def batch_counts(session: Session, batch_id: int) -> BatchCounts:
    def count(table: type[SQLModel], *where: ColumnElement[bool]) -> int:
        return int(session.exec(select(func.count()).select_from(table).where(*where)).one())

    return BatchCounts(
        scenarios=count(Scenario, col(Scenario.batch_id) == batch_id),
        samples=count(Sample, col(Sample.batch_id) == batch_id),
        outputs=count(Output, col(Output.batch_id) == batch_id),
        items=count(Item, col(Item.batch_id) == batch_id),
        assignments=count(Assignment, col(Assignment.batch_id) == batch_id),
        done=count(Assignment, col(Assignment.batch_id) == batch_id, col(Assignment.status) == AssignmentStatus.DONE),
        ratings=count(Rating, col(Rating.batch_id) == batch_id),
    )


def model_ids(session: Session, names: Sequence[str]) -> dict[str, int]:
    """Ids of the named models, creating the missing ones (models are shared across batches)."""
    existing = dict(session.exec(select(col(Model.name), pk(Model.id)).where(col(Model.name).in_(list(names)))).all())
    for name in names:
        if name not in existing:
            model = Model(name=name)
            session.add(model)
            session.flush()
            assert model.id is not None
            existing[name] = model.id
    return existing


@dataclass
class NewBatch:
    batch: Batch
    scenarios: list[str]
    samples: list[dict[str, Any]]  # key, scenario, prompt_json, reference, criteria, images_json
    # sample_key, model, repeat, text, metadata_json, leak_words, excluded, shown_text (None: the text)
    outputs: list[dict[str, Any]]
    pairwise: bool
    gold: list[tuple[str, tuple[str, ...], str]]  # (sample_key, models, gold_json canonicalised per pair)


def insert_batch(session: Session, new: NewBatch) -> int:
    """Write a batch, its scenarios, samples, outputs and items; returns the batch id. Caller commits."""
    session.add(new.batch)
    session.flush()
    batch_id = new.batch.id
    assert batch_id is not None
    scenario_ids: dict[str, int] = {}
    for name in new.scenarios:
        sc = Scenario(batch_id=batch_id, name=name)
        session.add(sc)
        session.flush()
        assert sc.id is not None
        scenario_ids[name] = sc.id

    sample_start = next_ids(session, "sample", len(new.samples))
    sample_ids: dict[str, int] = {}
    sample_rows = []
    for i, s in enumerate(new.samples):
        sid = sample_start + i
        sample_ids[s["key"]] = sid
        sample_rows.append(
            {
                "id": sid,
                "batch_id": batch_id,
                "scenario_id": scenario_ids[s["scenario"]],
                "key": s["key"],
                "prompt_json": s["prompt_json"],
                "reference": s["reference"],
                "criteria": s["criteria"],
                "images_json": s["images_json"],
            }
        )
    bulk_insert(session, "sample", sample_rows)

    models = model_ids(session, sorted({o["model"] for o in new.outputs}))
    out_start = next_ids(session, "output", len(new.outputs))
    output_rows = []
    # (sample_key, model, repeat) -> output id, for pairing and gold
    out_ids: dict[tuple[str, str, int], int] = {}
    for i, o in enumerate(new.outputs):
        oid = out_start + i
        out_ids[(o["sample_key"], o["model"], o["repeat"])] = oid
        n_chars, n_words = text_counts(o["text"])
        output_rows.append(
            {
                "id": oid,
                "batch_id": batch_id,
                "sample_id": sample_ids[o["sample_key"]],
                "model_id": models[o["model"]],
                "repeat": o["repeat"],
                "text": o["text"],
                "metadata_json": o["metadata_json"],
                "leak_words": o["leak_words"],
                "excluded": o["excluded"],
                "shown_text": o.get("shown_text"),
                "n_chars": n_chars,
                "n_words": n_words,
            }
        )
    bulk_insert(session, "output", output_rows)

    gold_by_key = {(g[0], g[1]): g[2] for g in new.gold}
    item_rows: list[dict[str, Any]] = []
    if not new.pairwise:
        for o in new.outputs:
            if o["excluded"]:
                continue
            gold = gold_by_key.get((o["sample_key"], (o["model"],)))
            item_rows.append(
                {
                    "batch_id": batch_id,
                    "sample_id": sample_ids[o["sample_key"]],
                    "output_a_id": out_ids[(o["sample_key"], o["model"], o["repeat"])],
                    "output_b_id": None,
                    "is_gold": gold is not None,
                    "gold_json": gold,
                }
            )
    else:
        by_sample: dict[str, list[str]] = {}
        for o in new.outputs:
            if o["repeat"] == 0 and not o["excluded"]:
                by_sample.setdefault(o["sample_key"], []).append(o["model"])
        for key, model_names in by_sample.items():
            ms = sorted(model_names)
            for i in range(len(ms)):
                for j in range(i + 1, len(ms)):
                    gold = gold_by_key.get((key, (ms[i], ms[j])))
                    item_rows.append(
                        {
                            "batch_id": batch_id,
                            "sample_id": sample_ids[key],
                            "output_a_id": out_ids[(key, ms[i], 0)],
                            "output_b_id": out_ids[(key, ms[j], 0)],
                            "is_gold": gold is not None,
                            "gold_json": gold,
                        }
                    )
    item_start = next_ids(session, "item", len(item_rows))
    seed = new.batch.seed
    for i, row in enumerate(item_rows):
        row["id"] = item_start + i
        row["pool_key"] = pool_key(seed, item_start + i)
    bulk_insert(session, "item", item_rows)
    log.info(
        "inserted batch %d: %d scenarios, %d samples, %d outputs, %d items",
        batch_id,
        len(new.scenarios),
        len(sample_rows),
        len(output_rows),
        len(item_rows),
    )
    return batch_id
