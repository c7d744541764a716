"""The ratings export as Parquet: the rows and columns of the CSV and JSONL exports (:mod:`.export`), typed.

A module of its own so that the CSV and JSONL paths never load pyarrow. The schema is fixed by the batch, not
guessed from its rows: text columns are strings, counts int64, flags booleans, ``seconds_spent`` a double. A
rating batch's ``score`` is a double when every dimension of its rubric is a score (Likert, binary,
continuous), else text (a categorical answer beside the scores: ``"4"``, ``"72.5"``, ``"casual"``); a
pairwise ``winner`` is text. Written a database chunk at a time (``ParquetWriter``), so memory does not grow
with the batch, into a temporary file renamed into place.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

_INTS = frozenset({"repeat", "occurrence", "position"})
_FLAGS = frozenset({"is_gold", "is_anchor"})


def ratings_schema(columns: Sequence[str], numeric_scores: bool) -> pa.Schema:
    """The export's columns typed (see the module docstring); ``numeric_scores``: the score is a double."""

    def kind(column: str) -> pa.DataType:
        if column in _INTS:
            return pa.int64()
        if column in _FLAGS:
            return pa.bool_()
        if column == "seconds_spent" or (column == "score" and numeric_scores):
            return pa.float64()
        return pa.string()

    return pa.schema([pa.field(c, kind(c)) for c in columns])


def write_ratings_parquet(chunks: Iterable[list[dict[str, Any]]], schema: pa.Schema, path: Path) -> int:
    """Write the rows (dicts keyed by the schema's columns, a chunk at a time) to ``path``; returns the count.

    A score is made to fit its column: a float for a double column, its text for a text one."""
    numeric = schema.field("score").type == pa.float64() if "score" in schema.names else False
    tmp = path.with_name(path.name + ".tmp")
    n = 0
    try:
        with pq.ParquetWriter(tmp, schema) as writer:
            for rows in chunks:
                if "score" in schema.names:
                    rows = [{**r, "score": _score(r["score"], numeric)} for r in rows]
                writer.write_table(pa.Table.from_pylist(rows, schema=schema))
                n += len(rows)
            if n == 0:
                writer.write_table(schema.empty_table())
        tmp.replace(path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return n


def _score(value: Any, numeric: bool) -> Any:
    if value is None:
        return None
    return float(value) if numeric else str(value)
