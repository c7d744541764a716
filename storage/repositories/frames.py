"""Long-format data frames for aggregation and reports (unblinded: leads and admins only).

These are the one place where ratings meet model names. Columns are documented on each function and are
the contract between storage and ``reviewer_app.analysis``.

Both frames are read through the driver's own cursor, a block of rows at a time, and put together column by
column. At 3 million ratings, SQLAlchemy's per-row result processing and one Python string per cell were
most of a report's time and memory: the big query here returns integers, booleans and the two short rating
texts; names (scenario, sample, model, reviewer) come from small lookups and are shared by every row that
has them, and each distinct text is one Python object however many rows repeat it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import orjson
import pandas as pd
from sqlalchemy import Select, case, func, select
from sqlalchemy.orm import aliased
from sqlmodel import Session, col

from reviewer_app.domain.enums import FINISHED_STATUSES, AssignmentStatus
from storage.models import Assignment, Item, Model, Output, Rating, Reviewer, Sample, Scenario
from storage.repositories.query import pk, through_items

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
OUTPUT_COLUMNS = ["scenario", "sample_id", "model", "repeat", "excluded", "leak_words", "output_chars", "output_words"]
COMMENT_COLUMNS = [
    "scenario",
    "model_a",
    "model_b",
    "cant_judge",
    "sample_id",
    "reviewer",
    "submitted_at",
    "comment",
    "reason",
]
ANSWER_COUNT_COLUMNS = ["scenario", "model_a", "model_b", "answers", "cant_judge", "commented"]
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

    Which output is a pair's ``a`` is a keyed coin per item (``storage.repositories.batches``: blindness, issue
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
    items = _item_columns(session, batch_id, item_of)  # each item read once, placed per rating
    keys, scenarios, models = _row_names(session, batch_id)
    swapped ^= name_ordered(items, models)
    people = _lookup(session, select(col(Reviewer.id), col(Reviewer.name), col(Reviewer.role)))

    def text(values: np.ndarray) -> Any:
        return _text_column(values, python_strings)

    sample_of = items["sample"]
    b_names, repeat_b = _second_outputs(items, models)
    frame = pd.DataFrame(
        {
            "scenario": text(_names(sample_of, scenarios)),
            "sample_id": text(_names(sample_of, keys)),
            "item_id": item_of,
            "is_gold": items["gold"].astype(bool),
            "reviewer": text(_names(reviewer_of, {k: v[0] for k, v in people.items()})),
            "occurrence": occurrence,
            "position": position,
            "swapped": swapped,
            "dimension": text(dimension.objects()),
            "value": text(value.objects()),
            "model_a": text(_names(items["model_a"], models)),
            "model_b": pd.Series(b_names, dtype=object, copy=False) if (items["model_b"] < 0).all() else text(b_names),
            "repeat_a": items["repeat_a"],
            "repeat_b": _nullable_ints(repeat_b),
            "seconds_spent": np.concatenate(seconds),
            "rater_role": text(_names(reviewer_of, {k: str(v[1]) for k, v in people.items()})),
            "shown": shown,  # shown in the app (side and position recorded), not imported
            "is_anchor": items["anchor"].astype(bool),
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


LONG_NUMBER_DIGITS = 19  # an integer this long orjson might turn into a float (json keeps it an int)


def has_long_number(text: str) -> bool:
    """Whether ``text`` has a run of :data:`LONG_NUMBER_DIGITS` ASCII digits (JSON's only digits): as
    ``re.search(r"\\d{19}")`` asks, but over the UTF-8 bytes with numpy, four to eight times faster on the
    digits of 100,000 outputs' metadata (0.03 s against 0.14-0.25 s)."""
    raw = np.frombuffer(text.encode("utf-8", "surrogatepass"), dtype=np.uint8)
    digit = np.zeros(len(raw) + 2, dtype=np.int8)  # bounded by a non-digit on each side, kept 8-bit
    digit[1:-1] = (raw >= ord("0")) & (raw <= ord("9"))
    edges = np.flatnonzero(np.diff(digit))  # run starts and ends, alternating
    return bool(len(edges)) and int((edges[1::2] - edges[::2]).max()) >= LONG_NUMBER_DIGITS


def _metadata(text: str) -> dict[str, Any]:
    """json.loads semantics: NaN and Infinity accepted, integers of any size kept as integers."""
    parsed: dict[str, Any] = json.loads(text)
    return parsed


def outputs_frame(session: Session, batch_id: int, *, with_text: bool = False) -> pd.DataFrame:
    """Every output of a batch with its metadata, for the "beside quality" views, in output id order.

    Columns: ``scenario``, ``sample_id``, ``model``, ``repeat``, ``excluded`` (bool), ``leak_words`` (str),
    ``output_chars``, ``output_words`` (counted at load), and one column per metadata key seen in the batch
    (for example ``latency_ms``, ``ttft_ms``, ``output_tokens``), NaN where an output lacks it, in the order
    the keys first appear.

    ``with_text=True`` (a comparison's drift, never a report: it reads every output whole) adds last a
    ``text`` column, each output's text as loaded, in the same query (a metadata key named ``text`` gives way
    to it), and gives the name columns as object columns of plain Python strings, which the comparison works
    on, instead of pandas' default text dtype.
    """
    stmt = (
        select(
            col(Output.sample_id),
            col(Output.model_id),
            col(Output.repeat),
            col(Output.excluded),
            col(Output.leak_words),
            col(Output.n_chars),
            col(Output.n_words),
            col(Output.metadata_json),
        )
        .where(col(Output.batch_id) == batch_id)
        .order_by(col(Output.id))
    )
    if with_text:
        stmt = stmt.add_columns(col(Output.text))
    ints: dict[int, list[np.ndarray]] = {k: [] for k in (0, 1, 2, 3, 5, 6)}
    leaks = _Texts()
    metadata: list[dict[str, Any]] = []
    texts: list[Any] = []
    for block in _rows(session, stmt):
        cols = list(zip(*block, strict=True))
        for k in ints:
            ints[k].append(np.asarray(cols[k], dtype=np.int64))
        leaks.add(cols[4])
        metadata += _parse_all(cols[7])
        if with_text:
            texts += cols[8]
    if not metadata:
        empty = pd.DataFrame.from_records([], columns=OUTPUT_COLUMNS)
        return empty.assign(text=pd.Series([], dtype=object)) if with_text else empty
    col_of = {k: np.concatenate(v) for k, v in ints.items()}
    keys, scenarios, models = _row_names(session, batch_id)

    def text(values: np.ndarray) -> Any:
        return _text_column(values, python_strings=with_text)

    frame = pd.DataFrame(
        {
            "scenario": text(_names(col_of[0], scenarios)),
            "sample_id": text(_names(col_of[0], keys)),
            "model": text(_names(col_of[1], models)),
            "repeat": col_of[2],
            "excluded": col_of[3].astype(bool),
            "leak_words": text(leaks.objects()),
            "output_chars": col_of[5],
            "output_words": col_of[6],
        }
    )
    meta = _metadata_columns(metadata)
    del metadata
    out = pd.concat([frame, meta], axis=1) if len(meta.columns) else frame
    if with_text:
        column = np.empty(len(texts), dtype=object)
        column[:] = texts
        out = out.drop(columns=["text"], errors="ignore").assign(text=pd.Series(column, dtype=object, copy=False))
    return out


def _parse_all(texts: Sequence[str]) -> list[dict[str, Any]]:
    """Many metadata objects in one parse (one call instead of one per output)."""
    joined = "[" + ",".join(texts) + "]"
    if not has_long_number(joined):
        try:
            parsed: list[dict[str, Any]] = orjson.loads(joined)
            return parsed
        except orjson.JSONDecodeError:  # NaN or Infinity, which the standard parser takes
            pass
    return [_metadata(t) for t in texts]


def _metadata_columns(metadata: list[dict[str, Any]]) -> pd.DataFrame:
    """One column per metadata key that has a number or a text somewhere, NaN elsewhere (booleans, lists,
    objects and nulls are left out, as are keys named like the frame's own columns), keys in the order they
    first appear with such a value.

    pandas reads the dicts in one C pass; when every column it finds is plainly numbers or plainly texts,
    that is already the answer. Anything else (a boolean, a null, a nested value, a clash of names) takes the
    row-by-row rule, which gives the same frame by construction.
    """
    fast = pd.DataFrame.from_records(metadata)
    types = pd.api.types
    plain = all(
        dtype in (np.int64, np.float64) or (types.is_string_dtype(dtype) and not types.is_object_dtype(dtype))
        for dtype in fast.dtypes
    )
    # Every value landed in a cell (no null or NaN was dropped, which could also move a key's first place).
    if plain and not fast.columns.isin(OUTPUT_COLUMNS).any():
        if int(fast.notna().to_numpy().sum()) == sum(map(len, metadata)):
            return fast
    records = []
    blank = dict.fromkeys(OUTPUT_COLUMNS, 0)  # the frame's own columns first, as rows were built before
    for meta in metadata:
        rec: dict[str, Any] = dict(blank)
        for k, v in meta.items():
            if k not in rec and (isinstance(v, int | float | str) and not isinstance(v, bool)):
                rec[k] = v
        records.append(rec)
    return pd.DataFrame.from_records(records).drop(columns=OUTPUT_COLUMNS)


# What reviewers wrote beside their scores. A batch can have hundreds of thousands of answers, each with up to
# BLIND_REVIEW_MAX_COMMENT_CHARS of text: the database counts them and hands over only the latest few of each
# kind per model and scenario, so a report's time and memory do not grow with how much reviewers wrote.


def _object_frame(rows: list[tuple[Any, ...]], columns: list[str]) -> pd.DataFrame:
    """``rows`` as a frame of plain Python values (None stays None, not NaN; text is not re-typed)."""
    values = list(zip(*rows, strict=True)) if rows else [()] * len(columns)
    return pd.DataFrame({c: pd.Series(list(v), dtype=object) for c, v in zip(columns, values, strict=True)})


def _answer_groups() -> tuple[Any, Any, Any]:
    """The finished answers of a batch with the columns they are grouped by (scenario id, model ids): the
    joins, the output aliases and whether an answer is "can't judge"."""
    out_a, out_b = aliased(Output, name="output_a"), aliased(Output, name="output_b")
    return out_a, out_b, col(Assignment.status) == AssignmentStatus.SKIPPED


def _pair(a: Any, b: Any) -> tuple[Any, Any]:
    """A pair's two model ids in one order whichever output is its ``a`` (a keyed coin per item: issue 33), so
    that a pair's answers form one group; ``b`` NULL or negative (rating mode) leaves ``(a, b)``. Readers
    then name the pair in model-name order (:func:`_named_pair`)."""
    turn = (b >= 0) & (b < a)
    return case((turn, b), else_=a), case((turn, a), else_=b)


def _named_pair(models: dict[int, Any], a: int, b: int | None) -> tuple[Any, Any]:
    """(model a, model b or None) by name, in model-name order: the order pairs were always shown in."""
    if b is None or b < 0:
        return models[a], None
    first, second = models[a], models[b]
    return (second, first) if second < first else (first, second)


def _joined(stmt: Select[*tuple[Any, ...]], out_a: Any, out_b: Any, batch_id: int) -> Select[*tuple[Any, ...]]:
    """The batch's finished answers (reached through its items: :func:`through_items`)."""
    return (
        through_items(stmt, batch_id)
        .join(Sample, col(Sample.id) == col(Item.sample_id))
        .join(out_a, col(out_a.id) == col(Item.output_a_id))
        .outerjoin(out_b, col(out_b.id) == col(Item.output_b_id))
        .where(
            col(Assignment.status).in_(FINISHED_STATUSES),
            col(Item.is_anchor).is_(False),  # a follow-up's anchors are no model's answers here
        )
    )


def _group_names(session: Session, batch_id: int) -> tuple[dict[int, str], dict[int, str]]:
    """Scenario and model names by id."""
    named = select(col(Scenario.id), col(Scenario.name)).where(col(Scenario.batch_id) == batch_id)
    scenarios = {k: v[0] for k, v in _lookup(session, named).items()}
    models = {k: v[0] for k, v in _lookup(session, select(col(Model.id), col(Model.name))).items()}
    return scenarios, models


def answer_counts_frame(session: Session, batch_id: int) -> pd.DataFrame:
    """Finished answers of a batch per scenario and model (pairwise: pair), gold items and repeat showings
    included, a follow-up's anchor items left out (they are the baseline's outputs, no model's answers
    here): ``scenario``, ``model_a``, ``model_b`` (pairwise; else None), ``answers`` (done or "can't
    judge"), ``cant_judge`` (answered "can't judge"), ``commented`` (answered with scores and a comment).

    Counted by the database in two steps: the answers per item, then the items' counts per group, a join of
    one row per item. Reading the bare assignments and counting with numpy took 0.6 s at 300,000 answers,
    this 0.37 s (SQLite). The answers are reached through the batch's items (:func:`through_items`)."""
    out_a, out_b, skipped = _answer_groups()
    done = col(Assignment.status) == AssignmentStatus.DONE
    counted = aliased(Item)
    per_item = (
        through_items(
            select(
                pk(counted.id).label("item_id"),
                func.count().label("answers"),
                func.sum(case((skipped, 1), else_=0)).label("cant_judge"),
                func.sum(case((done & col(Assignment.comment).is_not(None), 1), else_=0)).label("commented"),
            ),
            batch_id,
            counted,
        )
        .where(col(Assignment.status).in_(FINISHED_STATUSES))
        .group_by(pk(counted.id))
        .subquery()
    )
    model_a, model_b = _pair(col(out_a.model_id), func.coalesce(col(out_b.model_id), -1))
    groups = (
        select(
            col(Sample.scenario_id),
            model_a,
            model_b,
            func.sum(per_item.c.answers),
            func.sum(per_item.c.cant_judge),
            func.sum(per_item.c.commented),
        )
        .select_from(per_item)
        .join(Item, col(Item.id) == per_item.c.item_id)
        .join(Sample, col(Sample.id) == col(Item.sample_id))
        .join(out_a, col(out_a.id) == col(Item.output_a_id))
        .outerjoin(out_b, col(out_b.id) == col(Item.output_b_id))
        .where(col(Item.is_anchor).is_(False))
        .group_by(col(Sample.scenario_id), model_a, model_b)
        .order_by(col(Sample.scenario_id), model_a, model_b)
    )
    found = [tuple(int(v) for v in row) for block in _rows(session, groups) for row in block]
    if not found:
        return _object_frame([], ANSWER_COUNT_COLUMNS)
    scenarios, models = _group_names(session, batch_id)
    rows = [(scenarios[s], *_named_pair(models, a, b), n, cant, said) for s, a, b, n, cant, said in found]
    return _object_frame(rows, ANSWER_COUNT_COLUMNS)


def comments_frame(session: Session, batch_id: int, *, latest: int) -> pd.DataFrame:
    """The latest words of reviewers per scenario and model (pairwise: pair): the ``latest`` most recently
    submitted "can't judge" answers and the ``latest`` most recent answers with scores and a comment.

    Columns: ``scenario``, ``model_a``, ``model_b`` (pairwise; else None), ``cant_judge`` (bool),
    ``sample_id``, ``reviewer``, ``submitted_at`` (datetime, UTC, or None), ``comment``, ``reason`` (the
    can't-judge reason; None on a scored answer); grouped by scenario and models, can't-judge answers
    first, each kind most recent first. The database ranks the answers (a window function), so only what is
    returned is read."""
    out_a, out_b, skipped = _answer_groups()
    model_a, model_b = _pair(col(out_a.model_id), col(out_b.model_id))
    latest_first = func.row_number().over(
        partition_by=(col(Sample.scenario_id), model_a, model_b, skipped),
        order_by=(col(Assignment.submitted_at).desc().nulls_last(), pk(Assignment.id).desc()),
    )
    ranked = (
        _joined(
            select(
                col(Sample.scenario_id).label("scenario_id"),
                model_a.label("model_a"),
                model_b.label("model_b"),
                skipped.label("cant_judge"),
                col(Sample.key).label("sample_id"),
                col(Assignment.reviewer_id).label("reviewer_id"),
                col(Assignment.submitted_at).label("submitted_at"),
                col(Assignment.comment).label("comment"),
                col(Assignment.cant_judge).label("reason"),
                latest_first.label("place"),
            ),
            out_a,
            out_b,
            batch_id,
        )
        .where(skipped | col(Assignment.comment).is_not(None))
        .subquery()
    )
    c = ranked.c
    stmt = (
        select(
            c.scenario_id,
            c.model_a,
            c.model_b,
            c.cant_judge,
            c.sample_id,
            c.reviewer_id,
            c.submitted_at,
            c.comment,
            c.reason,
        )
        .where(c.place <= latest)
        .order_by(c.scenario_id, c.model_a, c.model_b, c.cant_judge.desc(), c.place)
    )
    scenarios, models = _group_names(session, batch_id)
    people = {k: v[0] for k, v in _lookup(session, select(col(Reviewer.id), col(Reviewer.name))).items()}
    rows = [
        (
            scenarios[s],
            *_named_pair(models, a, b),
            bool(cant),
            key,
            people[who],
            when,
            comment,
            reason if cant else None,
        )
        for s, a, b, cant, key, who, when, comment, reason in session.execute(stmt)
    ]
    return _object_frame(rows, COMMENT_COLUMNS)


CHECK_COLUMNS = ["scenario", "sample_id", "model", "repeat", "output_id", "check", "passed", "excluded"]


def checks_frame(session: Session, batch_id: int) -> pd.DataFrame:
    """Every automatic check result of a batch's outputs, one row per output and check, in load order.

    Columns: ``scenario``, ``sample_id``, ``model``, ``repeat``, ``output_id``, ``check`` (its name),
    ``passed`` (bool), ``excluded`` (the output is not reviewed: it named a model); ordered by output, then
    as its checks ran. Empty (with these columns) when the batch's samples carry no checks."""
    stmt = (
        select(
            col(Output.id),
            col(Output.sample_id),
            col(Output.model_id),
            col(Output.repeat),
            col(Output.excluded),
            col(Output.check_results),
        )
        .where(col(Output.batch_id) == batch_id, col(Output.check_results).is_not(None))
        .order_by(col(Output.id))
    )
    per_output: list[tuple[int, int, int, int, int]] = []  # output, sample, model, repeat, excluded
    counts: list[int] = []
    names: list[str] = []
    passed: list[bool] = []
    for block in _rows(session, stmt):
        for row in block:
            results = orjson.loads(row[5])
            per_output.append(row[:5])
            counts.append(len(results))
            for name, ok, _detail in results:
                names.append(name)
                passed.append(ok)
    if not names:
        return pd.DataFrame({c: pd.Series([], dtype=bool if c in ("passed", "excluded") else object)
                             for c in CHECK_COLUMNS})  # fmt: skip
    cols = np.repeat(np.asarray(per_output, dtype=np.int64), counts, axis=0)
    keys, scenarios, models = _row_names(session, batch_id)
    check = np.empty(len(names), dtype=object)
    check[:] = names
    return pd.DataFrame(
        {
            "scenario": pd.Series(_names(cols[:, 1], scenarios), dtype=object),
            "sample_id": pd.Series(_names(cols[:, 1], keys), dtype=object),
            "model": pd.Series(_names(cols[:, 2], models), dtype=object),
            "repeat": cols[:, 3],
            "output_id": cols[:, 0],
            "check": pd.Series(check, dtype=object),
            "passed": np.asarray(passed, dtype=bool),
            "excluded": cols[:, 4].astype(bool),
        }
    )
