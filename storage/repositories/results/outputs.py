"""A batch's outputs as frames (unblinded: model names): every output with its metadata, for the "beside
quality" views and a comparison's drift, and every automatic check result.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import numpy as np
import orjson
import pandas as pd
from sqlalchemy import select
from sqlmodel import Session, col

from storage.models import Output
from storage.repositories.results.frames import _names, _row_names, _rows, _text_column, _Texts

# Each output's style, counted at load (``reviewer_app.domain.style``); the report's style control reads them.
STYLE_COLUMNS = ("output_headers", "output_list_items", "output_bold", "output_code_blocks")
OUTPUT_COLUMNS = [
    "scenario",
    "sample_id",
    "model",
    "repeat",
    "excluded",
    "leak_words",
    "output_chars",
    "output_words",
    *STYLE_COLUMNS,
]


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
            col(Output.n_headers),
            col(Output.n_list_items),
            col(Output.n_bold),
            col(Output.n_code_blocks),
        )
        .where(col(Output.batch_id) == batch_id)
        .order_by(col(Output.id))
    )
    if with_text:
        stmt = stmt.add_columns(col(Output.text))
    ints: dict[int, list[np.ndarray]] = {k: [] for k in (0, 1, 2, 3, 5, 6, 8, 9, 10, 11)}
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
            texts += cols[12]
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
            **{name: col_of[8 + k] for k, name in enumerate(STYLE_COLUMNS)},
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
