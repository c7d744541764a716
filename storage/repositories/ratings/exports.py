"""The unblinded export of a batch's answers: every rating and every "can't judge" answer with the models it
was about, streamed. For leads and the command line only: the reviewer's side never imports this module, not
even for a type (``tests/test_import_graph.py``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Generator

from sqlalchemy import null
from sqlalchemy import select as sa_select
from sqlalchemy.orm import aliased
from sqlmodel import Session, col

from reviewer_app.domain.enums import AssignmentStatus, Mode
from storage.models import Assignment, Batch, Item, Judgement, Model, Output, Rating, Reviewer, Sample, Scenario
from storage.repositories.query import pk

EXPORT_CHUNK = 20_000  # rows per list handed out, and rows the streaming cursor buffers

# (scenario, sample key, reviewer, occurrence, position, swapped, dimension, value, model a, model b, repeat of
# output a, seconds spent, is gold, comment, can't-judge reason, is anchor): see export_chunks.
ExportRow = tuple[
    str,
    str,
    str,
    int,
    int,
    bool,
    str | None,
    str | None,
    str,
    str | None,
    int,
    float | None,
    bool,
    str | None,
    str | None,
    bool,
]


def export_chunks(session: Session, batch_id: int, name: Callable[[str], str] = str) -> Generator[list[ExportRow]]:
    """Every answer of a batch for an export, read through a streaming cursor, in lists of up to
    :data:`EXPORT_CHUNK` rows: first every rating in the order of ``results.frames.ratings_frame`` (rating id),
    then every "can't judge" answer (which has no ratings) in assignment id order, each as (scenario, sample
    key, reviewer, occurrence, position, swapped, dimension, value, model a, model b or None, repeat of output
    a, seconds spent or None, is gold, comment or None, can't-judge reason or None, is anchor: a follow-up's
    anchor item, whose models are the baseline's). A rating carries its answer's comment and no reason; a
    can't-judge answer has None for dimension and value.

    The ratings are the same rows as ``ratings_frame``. Names (samples, scenarios, models, reviewers) are read
    once into dicts and looked up per row: joining their tables on every rating was most of the query's time.
    ``name`` is applied to each name once, as it is read (an export's cell form of it: made inert for a
    spreadsheet, or already JSON), instead of to every row that shows it. Lists rather than a row at a time:
    at millions of rows a generator's step per row was a visible part of an export."""
    conn = session.connection()
    scenarios: dict[int, str] = {
        i: name(s)
        for i, s in conn.execute(
            sa_select(pk(Scenario.id), col(Scenario.name)).where(col(Scenario.batch_id) == batch_id)
        )
    }
    samples = {
        i: (scenarios[s], name(key))
        for i, key, s in conn.execute(
            sa_select(pk(Sample.id), col(Sample.key), col(Sample.scenario_id)).where(col(Sample.batch_id) == batch_id)
        )
    }
    raw_models: dict[int, str] = {int(i): m for i, m in conn.execute(sa_select(pk(Model.id), col(Model.name)))}
    models: dict[int, str] = {i: name(m) for i, m in raw_models.items()}
    # A pair's output a is a keyed coin per item (issue 33): rows name the pair in model-name order, as they
    # always did, and turn "b was shown on the left" with it (the answer's side as shown stays).
    rank = {m: r for r, m in enumerate(sorted(raw_models, key=raw_models.__getitem__))}
    pairwise = conn.execute(sa_select(col(Batch.mode)).where(pk(Batch.id) == batch_id)).scalar() == Mode.PAIRWISE
    reviewers: dict[int, str] = {i: name(r) for i, r in conn.execute(sa_select(pk(Reviewer.id), col(Reviewer.name)))}
    out_a, out_b = aliased(Output), aliased(Output)
    answer = (
        col(Item.sample_id),
        col(Assignment.reviewer_id),
        col(Assignment.occurrence),
        col(Assignment.position),
        col(Assignment.swapped),
    )
    about = (
        col(out_a.model_id),
        col(out_b.model_id),
        col(out_a.repeat),
        col(Assignment.seconds_spent),
        col(Item.is_gold),
        col(Assignment.comment),
    )
    ratings = (
        sa_select(*answer, col(Rating.dimension), col(Rating.value), *about, null(), col(Item.is_anchor))
        .select_from(Rating)
        .join(Assignment, col(Assignment.id) == col(Rating.assignment_id))
        .join(Item, col(Item.id) == col(Rating.item_id))
        .join(out_a, col(out_a.id) == col(Item.output_a_id))
        .outerjoin(out_b, col(out_b.id) == col(Item.output_b_id))
        .where(col(Rating.batch_id) == batch_id)
        .order_by(col(Rating.id))
    )
    cant_judge = (
        sa_select(*answer, null(), null(), *about, col(Assignment.cant_judge), col(Item.is_anchor))
        .select_from(Assignment)
        .join(Item, col(Item.id) == col(Assignment.item_id))
        .join(out_a, col(out_a.id) == col(Item.output_a_id))
        .outerjoin(out_b, col(out_b.id) == col(Item.output_b_id))
        .where(col(Assignment.batch_id) == batch_id, col(Assignment.status) == AssignmentStatus.SKIPPED)
        .order_by(pk(Assignment.id))
    )
    # Core execution on the session's connection: the ORM's row loading took a third of an export's time.
    streamed = conn.execution_options(stream_results=True, max_row_buffer=EXPORT_CHUNK)
    for stmt in (ratings, cant_judge):
        result = streamed.execute(stmt)
        try:
            for part in result.partitions(EXPORT_CHUNK):
                if not pairwise:
                    yield [
                        (*samples[sample], reviewers[who], occ, pos, swap, dim, value, models[ma], None, rep,
                         secs, gold, comment, reason, bool(anchor))
                        for sample, who, occ, pos, swap, dim, value, ma, _mb, rep, secs, gold, comment, reason, anchor
                        in part
                    ]  # fmt: skip
                    continue
                yield [
                    (*samples[sample], reviewers[who], occ, pos, bool(swap) != turn, dim, value, models[a], models[b],
                     rep, secs, gold, comment, reason, bool(anchor))
                    for sample, who, occ, pos, swap, dim, value, ma, mb, rep, secs, gold, comment, reason, anchor
                    in part
                    for turn in (rank[ma] > rank[mb],)
                    for a, b in ((mb, ma) if turn else (ma, mb),)
                ]  # fmt: skip
        finally:  # a consumer that stops early must not leave PostgreSQL's server-side cursor open
            result.close()


def judge_export_chunks(
    session: Session, batch_id: int, labels: dict[int, str], name: Callable[[str], str] = str
) -> Generator[list[ExportRow]]:
    """The answered judgements of the judges in ``labels`` (judge id -> the name its rows carry as reviewer), in
    :func:`export_chunks`'s rows: repeat as occurrence, position 0, the order the pair was shown in as
    swapped, the judge's reason as comment, no seconds; ordered by judge, item, repeat and order."""
    if not labels:
        return
    conn = session.connection()
    samples = {
        i: (name(s), name(key))
        for i, key, s in conn.execute(
            sa_select(pk(Sample.id), col(Sample.key), col(Scenario.name))
            .join(Scenario, col(Scenario.id) == col(Sample.scenario_id))
            .where(col(Sample.batch_id) == batch_id)
        )
    }
    raw_models: dict[int, str] = {int(i): m for i, m in conn.execute(sa_select(pk(Model.id), col(Model.name)))}
    models = {i: name(m) for i, m in raw_models.items()}
    rank = {m: r for r, m in enumerate(sorted(raw_models, key=raw_models.__getitem__))}
    judges = {i: name(label) for i, label in labels.items()}
    out_a, out_b = aliased(Output), aliased(Output)
    stmt = (
        sa_select(
            col(Judgement.judge_id),
            col(Item.sample_id),
            col(Judgement.repeat),
            col(Judgement.swapped),
            col(Judgement.answers_json),
            col(Judgement.reason),
            col(out_a.model_id),
            col(out_b.model_id),
            col(out_a.repeat),
            col(Item.is_gold),
            col(Item.is_anchor),
        )
        .select_from(Judgement)
        .join(Item, col(Item.id) == col(Judgement.item_id))
        .join(out_a, col(out_a.id) == col(Item.output_a_id))
        .outerjoin(out_b, col(out_b.id) == col(Item.output_b_id))
        .where(
            col(Judgement.batch_id) == batch_id,
            col(Judgement.status) == "ok",
            col(Judgement.judge_id).in_(list(labels)),
        )
        .order_by(col(Judgement.judge_id), col(Judgement.item_id), col(Judgement.repeat), col(Judgement.swapped))
    )
    result = conn.execution_options(stream_results=True, max_row_buffer=EXPORT_CHUNK).execute(stmt)
    try:
        for part in result.partitions(EXPORT_CHUNK):
            rows: list[ExportRow] = []
            for judge, sample, rep, swap, answers, reason, ma, mb, rep_a, gold, anchor in part:
                turn = mb is not None and rank[ma] > rank[mb]
                a, b = (mb, ma) if turn else (ma, mb)
                for dim, value in json.loads(answers).items():
                    rows.append(
                        (*samples[sample], judges[judge], rep, 0, bool(swap) != turn, dim, value, models[a],
                         None if b is None else models[b], rep_a, None, bool(gold), reason, None, bool(anchor))
                    )  # fmt: skip
            yield rows
    finally:
        result.close()
