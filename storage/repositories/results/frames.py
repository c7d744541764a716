"""Reading frames fast, and the ratings frame (unblinded: leads and admins only).

The ratings frame is where ratings meet model names; the outputs, their checks (:mod:`.outputs`) and what
reviewers wrote (:mod:`.comments`) are read with the same pieces, defined here. Columns are documented on each
function and are the contract between storage and ``reviewer_app.analysis``.

Frames are read through the driver's own cursor, a block of rows at a time, and put together column by
column. At 3 million ratings, SQLAlchemy's per-row result processing and one Python string per cell were
most of a report's time and memory: the big query here returns integers, booleans and the two short rating
texts; names (scenario, sample, model, reviewer) come from small lookups and are shared by every row that
has them, and each distinct text is one Python object however many rows repeat it.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import orjson
import pandas as pd
from sqlalchemy import Select, select
from sqlalchemy.orm import aliased
from sqlmodel import Session, col

from storage.models import Assignment, Item, Judgement, Model, Output, Rating, Reviewer, Sample, Scenario

RATING_COLUMNS = [
    "scenario",
    "sample_id",
    "item_id",
    "is_gold",
    "reviewer",
    "occurrence",
    "position",
    "swapped",
    "dimension",
    "value",
    "model_a",
    "model_b",
    "repeat_a",
    "repeat_b",
    "seconds_spent",
    "rater_role",
    "shown",
    "is_anchor",
]
_CHUNK = 100_000  # rows fetched and turned into arrays at a time


def _rows(session: Session, stmt: Select[*tuple[Any, ...]]) -> Iterator[Sequence[Any]]:
    """The rows of ``stmt`` in blocks, straight from the DBAPI cursor (no per-row SQLAlchemy processing, so
    booleans come back as 0/1 on SQLite: callers convert whole columns). ``stmt`` binds integers only."""
    dbapi = session.connection().connection.dbapi_connection
    assert dbapi is not None
    sql = str(stmt.compile(dialect=session.get_bind().dialect, compile_kwargs={"literal_binds": True}))
    cursor = dbapi.cursor()
    try:
        cursor.execute(sql)
        while block := cursor.fetchmany(_CHUNK):
            yield block
    finally:
        cursor.close()


class _Texts:
    """Column of repeated texts kept as codes into one list of distinct values (each value one object)."""

    def __init__(self) -> None:
        self.index: dict[Any, int] = {}
        self.codes: list[np.ndarray] = []

    def add(self, values: Sequence[Any]) -> None:
        codes, uniques = pd.factorize(np.asarray(values, dtype=object), use_na_sentinel=False)
        remap = np.fromiter((self.index.setdefault(u, len(self.index)) for u in uniques), np.int64, len(uniques))
        self.codes.append(remap[codes])

    def objects(self) -> np.ndarray:
        table = np.empty(len(self.index), dtype=object)
        table[:] = list(self.index)
        return table[np.concatenate(self.codes)] if self.codes else table[:0]


def _lookup(session: Session, stmt: Select[*tuple[Any, ...]]) -> dict[int, tuple[Any, ...]]:
    """id -> the rest of the row, for a small table."""
    return {int(row[0]): tuple(row[1:]) for block in _rows(session, stmt) for row in block}


_ITEM_FIELDS = ("gold", "sample", "model_a", "repeat_a", "model_b", "repeat_b", "anchor")


def _item_columns(session: Session, batch_id: int, wanted: np.ndarray) -> dict[str, np.ndarray]:
    """Per entry of ``wanted`` (item ids), its item's columns (:data:`_ITEM_FIELDS`) as int64 arrays:
    ``model_b``/``repeat_b`` are -1 where the item has no second output (rating mode).

    The second outputs come from a query of their own, over the items that have one: an outer join of every
    item to them made a rating batch's item read of 100,000 items 0.25 s instead of 0.20 s, for no row."""
    output_a, output_b = aliased(Output, name="output_a"), aliased(Output, name="output_b")
    first = (
        select(
            col(Item.id),
            col(Item.is_gold),
            col(Item.sample_id),
            col(output_a.model_id),
            col(output_a.repeat),
            col(Item.is_anchor),
        )
        .join(output_a, col(output_a.id) == col(Item.output_a_id))
        .where(col(Item.batch_id) == batch_id)
    )
    second = (
        select(col(Item.id), col(output_b.model_id), col(output_b.repeat))
        .join(output_b, col(output_b.id) == col(Item.output_b_id))
        .where(col(Item.batch_id) == batch_id)
    )
    ids, gold, sample, model_a, repeat_a, anchor = _int_columns(session, first, 6)
    order = np.argsort(ids, kind="stable")
    at = order[np.searchsorted(ids[order], wanted)]
    model_b, repeat_b = np.full(len(ids), -1, dtype=np.int64), np.full(len(ids), -1, dtype=np.int64)
    pair_ids, pair_models, pair_repeats = _int_columns(session, second, 3)
    if len(pair_ids):
        place = order[np.searchsorted(ids[order], pair_ids)]
        model_b[place], repeat_b[place] = pair_models, pair_repeats
    table = (gold, sample, model_a, repeat_a, model_b, repeat_b, anchor)
    return {name: column[at] for name, column in zip(_ITEM_FIELDS, table, strict=True)}


def name_ordered(items: dict[str, np.ndarray], models: dict[int, Any]) -> np.ndarray:
    """Put each pair of :func:`_item_columns` in model-name order, in place, and return where it was turned.

    Which output is a pair's ``a`` is a keyed coin per item (``batches.batches.insert_batch``: blindness, issue
    33), so readers for people (reports, comparisons, exports) turn pairs back into the order of the models'
    names, which is the order they always had: a caller XORs its ``swapped`` column with the result, so "model
    b was shown on the left" stays true of the turned pair, and an answer's side as shown needs no change."""
    pair = items["model_b"] >= 0
    turned = np.zeros(len(pair), dtype=bool)
    if not pair.any():
        return turned
    ids = np.fromiter(models, np.int64, len(models))
    rank = np.full(int(ids.max()) + 1, -1, dtype=np.int64)
    rank[sorted(models, key=models.__getitem__)] = np.arange(len(models))
    turned[pair] = rank[items["model_a"][pair]] > rank[items["model_b"][pair]]
    for first, second in (("model_a", "model_b"), ("repeat_a", "repeat_b")):
        a, b = items[first], items[second]
        a[turned], b[turned] = b[turned], a[turned].copy()
    return turned


def _second_outputs(items: dict[str, np.ndarray], models: dict[int, Any]) -> tuple[np.ndarray, np.ndarray]:
    """From :func:`_item_columns`: the second output's model name and repeat per row as object arrays, None
    where the item has no second output (rating mode)."""
    missing = items["model_b"] < 0
    names = np.full(len(missing), None, dtype=object)
    if not missing.all():
        names[~missing] = _names(items["model_b"][~missing], models)
    repeats = items["repeat_b"].astype(object)
    repeats[missing] = None
    return names, repeats


def _int_columns(session: Session, stmt: Select[*tuple[Any, ...]], width: int) -> list[np.ndarray]:
    """The ``width`` columns of ``stmt``'s rows as int64 arrays (booleans: 0/1 on SQLite, bool on PostgreSQL)."""
    parts: list[list[np.ndarray]] = [[] for _ in range(width)]
    for block in _rows(session, stmt):
        for k, values in enumerate(zip(*block, strict=True)):
            parts[k].append(np.asarray(values, dtype=np.int64))
    return [np.concatenate(p) if p else np.zeros(0, dtype=np.int64) for p in parts]


def _row_names(session: Session, batch_id: int) -> tuple[dict[int, Any], dict[int, Any], dict[int, Any]]:
    """What a frame names its rows by, each read once: sample id -> the batch file's sample id, sample id -> its
    scenario's name, model id -> the model's name."""
    samples = _lookup(
        session,
        select(col(Sample.id), col(Sample.key), col(Scenario.name))
        .join(Scenario, col(Scenario.id) == col(Sample.scenario_id))
        .where(col(Sample.batch_id) == batch_id),
    )
    models = {k: v[0] for k, v in _lookup(session, select(col(Model.id), col(Model.name))).items()}
    return {k: v[0] for k, v in samples.items()}, {k: v[1] for k, v in samples.items()}, models


def _names(ids: np.ndarray, names: dict[int, Any]) -> np.ndarray:
    """Object array of ``names[id]`` per id (one shared object per name)."""
    if not len(ids):
        return np.empty(0, dtype=object)
    keys = np.fromiter(names, np.int64, len(names)) if names else np.zeros(0, np.int64)
    table = np.empty(len(keys), dtype=object)
    table[:] = list(names.values())
    order = np.argsort(keys)
    return table[order][np.searchsorted(keys[order], ids)]


def _text_column(values: np.ndarray, python_strings: bool) -> Any:
    """Shared Python strings as they are, or pandas' default text dtype (what ``pd.DataFrame`` of the rows
    gave before)."""
    return pd.Series(values, dtype=object, copy=False) if python_strings else pd.array(values, dtype="str")


def _is_none(values: np.ndarray) -> np.ndarray:
    """Where an object column of database ids or counts is NULL (one C pass; no NaN can be among them)."""
    return np.asarray(pd.isna(values), dtype=bool)


def _nullable_ints(values: np.ndarray) -> Any:
    """A column of ints that is None throughout in rating mode (the second output of a pair): ints when
    every row has one, object Nones when none has, floats with NaN when mixed (as pandas infers them)."""
    arr = np.asarray(values, dtype=object)
    missing = _is_none(arr)
    if missing.all():
        return pd.Series(arr, dtype=object, copy=False)
    if not missing.any():
        return arr.astype(np.int64)
    arr[missing] = np.nan
    return arr.astype(float)


def _item_fields(
    session: Session, batch_id: int, item_of: np.ndarray, swapped: np.ndarray, python_strings: bool
) -> dict[str, Any]:
    """The columns of a ratings frame that come from each row's item (``item_of``): scenario, sample, gold and
    anchor flags, the pair in model-name order with its repeats, and ``swapped`` turned with the pair (see
    :func:`name_ordered`); each item read once, placed per row."""
    items = _item_columns(session, batch_id, item_of)
    keys, scenarios, models = _row_names(session, batch_id)
    turned = swapped ^ name_ordered(items, models)
    b_names, repeat_b = _second_outputs(items, models)
    sample_of = items["sample"]
    none = (items["model_b"] < 0).all()  # rating mode: a column of None, kept as objects
    return {
        "scenario": _text_column(_names(sample_of, scenarios), python_strings),
        "sample_id": _text_column(_names(sample_of, keys), python_strings),
        "item_id": item_of,
        "is_gold": items["gold"].astype(bool),
        "swapped": turned,
        "model_a": _text_column(_names(items["model_a"], models), python_strings),
        "model_b": pd.Series(b_names, dtype=object, copy=False) if none else _text_column(b_names, python_strings),
        "repeat_a": items["repeat_a"],
        "repeat_b": _nullable_ints(repeat_b),
        "is_anchor": items["anchor"].astype(bool),
    }


def ratings_frame(session: Session, batch_id: int, *, python_strings: bool = False) -> pd.DataFrame:
    """Every submitted rating of a batch, one row per (assignment, dimension), in rating id order.

    Columns: ``scenario`` (str), ``sample_id`` (the batch file's id, str), ``item_id`` (int), ``is_gold``
    (bool), ``reviewer`` (name), ``occurrence`` (0 first showing, 1 repeat), ``position`` (0-based place in
    the reviewer's queue), ``swapped`` (pairwise: model_b was shown on the left), ``dimension`` (str),
    ``value`` (str as stored: a Likert score "4", binary "0"/"1", a categorical choice, or for pairwise the
    side the reviewer picked as displayed: "left"/"right"/"tie"/"both_bad"), ``model_a`` (the rated model;
    in pairwise mode the canonical first model), ``model_b`` (pairwise: the canonical second model; else
    None), ``repeat_a``/``repeat_b`` (the outputs' repeat index), ``seconds_spent`` (float or NaN),
    ``rater_role`` (the rater's role now: "reviewer", or "lead"/"admin" for someone who can read unblinded
    results and rated only because an admin assigned them by name; reports should mark those ratings),
    ``shown`` (the item was shown in the app, so its side and queue position were recorded when answered;
    False for ratings imported from elsewhere), ``is_anchor`` (a follow-up batch's anchor item: one of the
    baseline batch's own outputs shown again, so ``model_a``/``model_b`` and ``repeat_a``/``repeat_b`` are
    the baseline's; False on every row of any other batch). Anchors measure the panel's shift between rounds
    and count for no model's score: whoever reads this frame for a model's score leaves them out.

    Text columns have pandas' default text dtype; ``python_strings=True`` gives them as object columns of
    plain Python strings instead (one object per distinct text), which is what the aggregation works on.
    """
    ratings = (
        select(  # SQLAlchemy's select: sqlmodel's is typed for four columns at most
            col(Rating.item_id),
            col(Rating.reviewer_id),
            col(Assignment.occurrence),
            col(Assignment.position),
            col(Assignment.swapped),
            col(Assignment.shown_at).is_not(None),
            col(Rating.dimension),
            col(Rating.value),
            col(Assignment.seconds_spent),
        )
        .join(Assignment, col(Assignment.id) == col(Rating.assignment_id))
        .where(col(Rating.batch_id) == batch_id)
        .order_by(col(Rating.id))
    )
    ints: dict[str, list[np.ndarray]] = {k: [] for k in ("item", "reviewer", "occurrence", "position")}
    flags: dict[str, list[np.ndarray]] = {"swapped": [], "shown": []}
    seconds: list[np.ndarray] = []
    dimension, value = _Texts(), _Texts()
    for block in _rows(session, ratings):
        cols = list(zip(*block, strict=True))
        for k, name in enumerate(ints):
            ints[name].append(np.asarray(cols[k], dtype=np.int64))
        for k, name in enumerate(flags, start=4):
            flags[name].append(np.asarray(cols[k], dtype=bool))
        dimension.add(cols[6])
        value.add(cols[7])
        seconds.append(np.asarray(cols[8], dtype=float))  # None -> NaN
    if not seconds:
        return _empty_ratings()
    item_of, reviewer_of, occurrence, position = (np.concatenate(v) for v in ints.values())
    swapped, shown = (np.concatenate(v) for v in flags.values())
    by_item = _item_fields(session, batch_id, item_of, swapped, python_strings)
    people = _lookup(session, select(col(Reviewer.id), col(Reviewer.name), col(Reviewer.role)))

    def text(values: np.ndarray) -> Any:
        return _text_column(values, python_strings)

    frame = pd.DataFrame(
        {
            **by_item,
            "reviewer": text(_names(reviewer_of, {k: v[0] for k, v in people.items()})),
            "occurrence": occurrence,
            "position": position,
            "dimension": text(dimension.objects()),
            "value": text(value.objects()),
            "seconds_spent": np.concatenate(seconds),
            "rater_role": text(_names(reviewer_of, {k: str(v[1]) for k, v in people.items()})),
            "shown": shown,  # shown in the app (side and position recorded), not imported
        },
        columns=RATING_COLUMNS,
    )
    return frame


def _empty_ratings() -> pd.DataFrame:
    frame = pd.DataFrame([], columns=RATING_COLUMNS)
    for name in ("is_gold", "swapped", "shown", "is_anchor"):
        frame[name] = frame[name].astype(bool)
    frame["seconds_spent"] = frame["seconds_spent"].astype(float)
    frame["rater_role"] = frame["rater_role"].astype(str)
    return frame


def judge_frame(
    session: Session, batch_id: int, judge_id: int, name: str, *, python_strings: bool = False
) -> pd.DataFrame:
    """A judge's answered judgements of the batch as a ratings frame (:data:`RATING_COLUMNS`, one row per
    judgement and dimension), so that the judge can be measured with the panel's own statistics and put in a
    reviewer's place: ``reviewer`` is ``name``, ``rater_role`` is ``"judge"``, ``occurrence`` the judge's
    repeat, ``swapped`` the order it was shown in (a pair is judged in both: two rows, answers as the judge
    saw them, as a reviewer's are), ``position`` 0, ``shown`` False and ``seconds_spent`` NaN. Failed
    judgements are left out."""
    stmt = (
        select(col(Judgement.item_id), col(Judgement.repeat), col(Judgement.swapped), col(Judgement.answers_json))
        .where(col(Judgement.batch_id) == batch_id, col(Judgement.judge_id) == judge_id, col(Judgement.status) == "ok")
        .order_by(col(Judgement.id))
    )
    item_of: list[int] = []
    repeat: list[int] = []
    swapped: list[bool] = []
    dims: list[str] = []
    answered: list[str] = []
    for block in _rows(session, stmt):
        for item_id, rep, was_swapped, answers in block:
            for dim, answer in orjson.loads(answers).items():
                item_of.append(item_id)
                repeat.append(rep)
                swapped.append(bool(was_swapped))
                dims.append(dim)
                answered.append(answer)
    if not item_of:
        return _empty_ratings()
    dimension, value = _Texts(), _Texts()
    dimension.add(dims)
    value.add(answered)
    items_at = np.asarray(item_of, dtype=np.int64)
    n = len(items_at)

    def same(label: str) -> Any:
        column = np.empty(n, dtype=object)
        column[:] = label
        return _text_column(column, python_strings)

    return pd.DataFrame(
        {
            **_item_fields(session, batch_id, items_at, np.asarray(swapped, dtype=bool), python_strings),
            "reviewer": same(name),
            "occurrence": np.asarray(repeat, dtype=np.int64),
            "position": np.zeros(n, dtype=np.int64),
            "dimension": _text_column(dimension.objects(), python_strings),
            "value": _text_column(value.objects(), python_strings),
            "seconds_spent": np.full(n, np.nan),
            "rater_role": same("judge"),
            "shown": np.zeros(n, dtype=bool),
        },
        columns=RATING_COLUMNS,
    )
