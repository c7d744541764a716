"""Batch rows and the bulk write of a whole batch in one transaction."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import ColumnElement, delete, func, update
from sqlalchemy import select as sa_select
from sqlmodel import Session, SQLModel, col, select

from reviewer_app.domain.enums import AssignmentStatus, BatchStatus
from reviewer_app.domain.keyed_random import keyed_int, secret_bytes
from reviewer_app.domain.style import style_counts
from reviewer_app.domain.words import count_words
from storage.models import (
    Assignment,
    Batch,
    BatchReviewer,
    Item,
    Model,
    Output,
    Rating,
    Sample,
    Scenario,
    pool_key,
    utcnow,
)
from storage.repositories.batches.allocation import hold_back_batch
from storage.repositories.query import bulk_insert, insert_tuples, next_ids, pk

log = logging.getLogger(__name__)


def get_batch_by_name(session: Session, name: str) -> Batch | None:
    return session.exec(select(Batch).where(col(Batch.name) == name)).one_or_none()


def get_batch(session: Session, batch_id: int) -> Batch | None:
    return session.get(Batch, batch_id)


def get_batch_by_hash(session: Session, content_hash: str) -> Batch | None:
    return session.exec(select(Batch).where(col(Batch.content_hash) == content_hash)).first()


def list_batches(session: Session) -> list[Batch]:
    """The batches that are not archived, oldest first: an archived batch leaves every list (the admin's
    archived ones: ``storage.repositories.batches.admin.batches``)."""
    return list(session.exec(select(Batch).where(col(Batch.archived_at).is_(None)).order_by(col(Batch.id))))


def model_names(session: Session, batch_id: int) -> list[str]:
    """The names of the models with outputs in the batch, sorted (what its names are scanned against); a
    follow-up batch's anchor items show the baseline's outputs, so their models count too."""
    own = select(col(Output.model_id)).where(col(Output.batch_id) == batch_id)
    anchored = (
        select(col(Output.model_id))
        .join(Item, (col(Item.output_a_id) == pk(Output.id)) | (col(Item.output_b_id) == pk(Output.id)))
        .where(col(Item.batch_id) == batch_id, col(Item.is_anchor).is_(True))
    )
    stmt = (
        select(col(Model.name))
        .where(pk(Model.id).in_(own.distinct()) | pk(Model.id).in_(anchored.distinct()))
        .order_by(col(Model.name))
    )
    return [str(n) for n in session.exec(stmt)]


@dataclass(frozen=True)
class BaselineSample:
    """What a follow-up batch takes over from its baseline for one sample."""

    scenario: str
    prompt_json: str
    reference: str | None
    criteria: str | None
    images_json: str
    checks_json: str | None


def baseline_samples(session: Session, batch_id: int) -> dict[str, BaselineSample]:
    """The batch's samples by key (the batch file's sample_id), in the order they were loaded."""
    stmt = (
        sa_select(  # SQLAlchemy's select: sqlmodel's is typed for four columns at most
            col(Sample.key),
            col(Scenario.name),
            col(Sample.prompt_json),
            col(Sample.reference),
            col(Sample.criteria),
            col(Sample.images_json),
            col(Sample.checks_json),
        )
        .join(Scenario, col(Scenario.id) == col(Sample.scenario_id))
        .where(col(Sample.batch_id) == batch_id)
        .order_by(pk(Sample.id))
    )
    return {str(k): BaselineSample(str(sc), p, r, c, i, ch) for k, sc, p, r, c, i, ch in session.execute(stmt)}


def anchorable_items(session: Session, batch_id: int) -> list[tuple[str, int, int | None, str]]:
    """(sample key, output_a_id, output_b_id, model name of output a) of the batch's own review items, gold
    and anchor items left out, in id order: what a follow-up of the batch may show again as anchors."""
    stmt = (
        sa_select(col(Sample.key), col(Item.output_a_id), col(Item.output_b_id), col(Model.name))
        .join(Sample, col(Sample.id) == col(Item.sample_id))
        .join(Output, pk(Output.id) == col(Item.output_a_id))
        .join(Model, pk(Model.id) == col(Output.model_id))
        .where(col(Item.batch_id) == batch_id, col(Item.is_gold).is_(False), col(Item.is_anchor).is_(False))
        .order_by(pk(Item.id))
    )
    return [(str(k), int(a), None if b is None else int(b), str(m)) for k, a, b, m in session.execute(stmt)]


def follow_ups_of(session: Session, batch_id: int) -> list[str]:
    """The names of the batches that are follow-ups of this one (archived ones too), oldest first."""
    stmt = select(col(Batch.name)).where(col(Batch.baseline_batch_id) == batch_id).order_by(pk(Batch.id))
    return [str(n) for n in session.exec(stmt)]


def batch_names(session: Session, batch_ids: Iterable[int]) -> dict[int, str]:
    """{batch id: name} for the given ids, archived batches too (what "follow-up of" columns show)."""
    ids = sorted(set(batch_ids))
    if not ids:
        return {}
    stmt = select(col(Batch.id), col(Batch.name)).where(col(Batch.id).in_(ids))
    return {int(i or 0): str(n) for i, n in session.exec(stmt)}


def set_generation(session: Session, batch_id: int, generation_json: str | None) -> None:
    """Record how the batch's outputs were made (``Batch.generation_json``)."""
    session.exec(update(Batch).where(col(Batch.id) == batch_id).values(generation_json=generation_json))


def scenario_names(session: Session, batch_id: int) -> list[tuple[str, str | None]]:
    """(name, display name) of every scenario of the batch, by name."""
    stmt = (
        select(col(Scenario.name), col(Scenario.display_name))
        .where(col(Scenario.batch_id) == batch_id)
        .order_by(col(Scenario.name))
    )
    return [(str(n), d) for n, d in session.exec(stmt)]


def set_batch_status(session: Session, batch_id: int, status: BatchStatus | str) -> None:
    """Open or close a batch (its first opening is kept in ``Batch.opened_at``). ``status`` is a
    :class:`BatchStatus` value (ValueError for anything else)."""
    status = BatchStatus(status)
    session.exec(update(Batch).where(col(Batch.id) == batch_id).values(status=status))
    if status == BatchStatus.OPEN:
        session.exec(
            update(Batch).where(col(Batch.id) == batch_id, col(Batch.opened_at).is_(None)).values(opened_at=utcnow())
        )


def batch_reviewer_ids(session: Session, batch_id: int) -> list[int]:
    """The ids of the batch's own reviewers, in the order they were added (none: open to every reviewer)."""
    stmt = (
        select(col(BatchReviewer.reviewer_id))
        .where(col(BatchReviewer.batch_id) == batch_id)
        .order_by(col(BatchReviewer.added_at), col(BatchReviewer.reviewer_id))
    )
    return [int(r) for r in session.exec(stmt)]


def add_batch_reviewers(session: Session, batch_id: int, reviewer_ids: Iterable[int]) -> int:
    """Make these people reviewers of the batch (those who already are stay as they were); returns how many
    were added."""
    have = set(batch_reviewer_ids(session, batch_id))
    new = [r for r in dict.fromkeys(reviewer_ids) if r not in have]
    now = utcnow()
    session.add_all(BatchReviewer(batch_id=batch_id, reviewer_id=r, added_at=now) for r in new)
    session.flush()
    return len(new)


def remove_batch_reviewers(session: Session, batch_id: int, reviewer_ids: Iterable[int]) -> None:
    """These people are no longer reviewers of the batch (their answers and planned items stay)."""
    ids = list(reviewer_ids)
    if ids:
        session.exec(
            delete(BatchReviewer).where(
                col(BatchReviewer.batch_id) == batch_id, col(BatchReviewer.reviewer_id).in_(ids)
            )
        )


def batches_with_reviewers(session: Session) -> dict[int, set[int]]:
    """batch id -> its own reviewers' ids, for the batches that have any (one query for every batch)."""
    out: dict[int, set[int]] = {}
    for batch_id, reviewer_id in session.exec(select(col(BatchReviewer.batch_id), col(BatchReviewer.reviewer_id))):
        out.setdefault(int(batch_id), set()).add(int(reviewer_id))
    return out


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
class BatchChunk:
    """A run of a batch's outputs in file order, with the samples that first appear in it."""

    samples: list[dict[str, Any]]  # key, scenario, prompt_json, reference, criteria, images_json, checks_json
    # sample_key, model, repeat, text, metadata_json, leak_words, excluded, shown_text (None: the text), and
    # check_results: the automatic checks' results as JSON (absent or None: the output had no checks)
    outputs: list[dict[str, Any]]


@dataclass
class NewBatch:
    batch: Batch
    scenarios: list[str]
    models: list[str]
    chunks: Iterable[BatchChunk]  # read as they are written: a batch's texts are never all in memory
    pairwise: bool
    gold: list[tuple[str, tuple[str, ...], str]]  # (sample_key, models, gold_json canonicalised per pair)
    # A follow-up's anchor items: (sample_key, output_a_id, output_b_id) of the baseline's outputs.
    anchors: list[tuple[str, int, int | None]] = field(default_factory=list)
    reviewer_ids: list[int] = field(default_factory=list)  # the batch's own reviewers (none: every reviewer)
    hold_back: bool = False  # adaptive allocation: every regular item held back until its sample is released


def insert_batch(session: Session, new: NewBatch) -> int:
    """Write a batch, its scenarios, samples, outputs and items, a chunk at a time; returns the batch id.
    Caller commits.

    Ids are taken in the order rows come (samples by first appearance, outputs in file order, rating items
    with their outputs, pairwise items once every output is in), as the whole batch written at once would
    take them. Per output only its id is kept (for pairwise mode), never its text."""
    session.add(new.batch)
    session.flush()
    batch_id = new.batch.id
    assert batch_id is not None
    add_batch_reviewers(session, batch_id, new.reviewer_ids)
    secret = secret_bytes(new.batch.secret)
    assert batch_id is not None
    scenario_ids: dict[str, int] = {}
    for name in new.scenarios:
        sc = Scenario(batch_id=batch_id, name=name)
        session.add(sc)
        session.flush()
        assert sc.id is not None
        scenario_ids[name] = sc.id
    models = model_ids(session, new.models)
    gold_by_key = {(g[0], g[1]): g[2] for g in new.gold}
    sample_ids: dict[str, int] = {}
    # pairwise: sample_key -> model -> id of its first (repeat 0) output, for outputs under review
    by_sample: dict[str, dict[str, int]] = {}
    n_outputs = n_items = 0
    for chunk in new.chunks:
        sample_start = next_ids(session, "sample", len(chunk.samples)) if chunk.samples else 0
        sample_rows = []
        for i, s in enumerate(chunk.samples):
            sid = sample_start + i
            sample_ids[s["key"]] = sid
            sample_rows.append(
                (
                    sid,
                    batch_id,
                    scenario_ids[s["scenario"]],
                    s["key"],
                    s["prompt_json"],
                    s["reference"],
                    s["criteria"],
                    s["images_json"],
                    s.get("checks_json"),
                )
            )
        insert_tuples(session, "sample", _SAMPLE_COLUMNS, sample_rows)

        out_start = next_ids(session, "output", len(chunk.outputs))
        output_rows = []
        item_rows: list[dict[str, Any]] = []
        for i, o in enumerate(chunk.outputs):
            oid = out_start + i
            text = o["text"]
            output_rows.append(
                (
                    oid,
                    batch_id,
                    sample_ids[o["sample_key"]],
                    models[o["model"]],
                    o["repeat"],
                    text,
                    o["metadata_json"],
                    o["leak_words"],
                    o["excluded"],
                    o.get("shown_text"),
                    len(text),
                    count_words(text),
                    *style_counts(text),
                    o.get("check_results"),
                )
            )
            if o["excluded"]:
                continue
            if new.pairwise:
                if o["repeat"] == 0:
                    by_sample.setdefault(o["sample_key"], {})[o["model"]] = oid
                continue
            gold = gold_by_key.get((o["sample_key"], (o["model"],)))
            item_rows.append(
                {
                    "batch_id": batch_id,
                    "sample_id": sample_ids[o["sample_key"]],
                    "output_a_id": oid,
                    "output_b_id": None,
                    "is_gold": gold is not None,
                    "gold_json": gold,
                }
            )
        insert_tuples(session, "output", _OUTPUT_COLUMNS, output_rows)
        n_outputs += len(output_rows)
        n_items += _insert_items(session, secret, item_rows)

    if new.pairwise:
        item_rows = []
        for key, outputs in by_sample.items():
            ms = sorted(outputs)
            for i in range(len(ms)):
                for j in range(i + 1, len(ms)):
                    gold = gold_by_key.get((key, (ms[i], ms[j])))
                    a, b = ms[i], ms[j]
                    # Which model is output a is a keyed coin per pair, never name order: sides shown to
                    # reviewers are decided per assignment, and nothing may tie them to names.
                    if keyed_int(secret, 1, "pair-sides", key, a, b):
                        a, b, gold = b, a, None if gold is None else _flipped_gold(gold)
                    item_rows.append(
                        {
                            "batch_id": batch_id,
                            "sample_id": sample_ids[key],
                            "output_a_id": outputs[a],
                            "output_b_id": outputs[b],
                            "is_gold": gold is not None,
                            "gold_json": gold,
                        }
                    )
        n_items += _insert_items(session, secret, item_rows)
    if new.anchors:
        # After the batch's own items: their ids stay those of an ordinary batch; pool keys (a keyed hash of
        # the id) mix the anchors in with the rest.
        anchor_rows: list[dict[str, Any]] = [
            {
                "batch_id": batch_id,
                "sample_id": sample_ids[key],
                "output_a_id": a,
                "output_b_id": b,
                "is_gold": False,
                "gold_json": None,
                "is_anchor": True,
            }
            for key, a, b in new.anchors
        ]
        n_items += _insert_items(session, secret, anchor_rows)
    if new.hold_back:
        hold_back_batch(session, batch_id)
    log.info(
        "inserted batch %d: %d scenarios, %d samples, %d outputs, %d items",
        batch_id,
        len(new.scenarios),
        len(sample_ids),
        n_outputs,
        n_items,
    )
    return batch_id


def _flipped_gold(gold_json: str) -> str:
    """A pair's gold answers (canonicalised for the pair in name order) for the pair stored the other way."""
    flip = {"a": "b", "b": "a"}
    return json.dumps({dim: flip.get(v, v) for dim, v in json.loads(gold_json).items()}, sort_keys=True)


def _insert_items(session: Session, secret: bytes, item_rows: list[dict[str, Any]]) -> int:
    if not item_rows:
        return 0
    item_start = next_ids(session, "item", len(item_rows))
    for i, row in enumerate(item_rows):
        row["id"] = item_start + i
        row["pool_key"] = pool_key(secret, item_start + i)
    bulk_insert(session, "item", item_rows)
    return len(item_rows)


_SAMPLE_COLUMNS = (
    "id",
    "batch_id",
    "scenario_id",
    "key",
    "prompt_json",
    "reference",
    "criteria",
    "images_json",
    "checks_json",
)
_OUTPUT_COLUMNS = (
    "id",
    "batch_id",
    "sample_id",
    "model_id",
    "repeat",
    "text",
    "metadata_json",
    "leak_words",
    "excluded",
    "shown_text",
    "n_chars",
    "n_words",
    "n_headers",
    "n_list_items",
    "n_bold",
    "n_code_blocks",
    "check_results",
)
