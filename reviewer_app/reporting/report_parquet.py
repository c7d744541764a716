"""The report's one long table (the CSV's: ranking, agreement, reliability and pair rows) as Parquet, for reading
into a notebook or a warehouse with its numbers as numbers and its flags as booleans.

Each column's type is the type of the row field it comes from (``RankingRow.score`` is ``float | None``: a
double), so a report with no pairs, or no agreement rows, still has every column, typed the same. The cells are
the values themselves: nothing is made inert, as nothing here is opened by a spreadsheet.
"""

from __future__ import annotations

import types
import typing
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from reviewer_app.domain.report import Report
from reviewer_app.domain.report_rankings import AgreementRow, PairRow, RankingRow, ReliabilityRow
from reviewer_app.reporting.formats import CSV_COLUMNS, table_rows

__all__ = ["to_parquet"]

_ARROW = {str: pa.string(), int: pa.int64(), float: pa.float64(), bool: pa.bool_()}


def _arrow_type(hint: Any) -> pa.DataType:
    """A row field's annotation as an Arrow type: ``X | None`` as X (nullable anyway), a ``Literal`` of texts as
    a string."""
    if typing.get_origin(hint) is typing.Literal:
        return pa.string()
    if isinstance(hint, types.UnionType):
        hint = next(a for a in typing.get_args(hint) if a is not type(None))
    return _ARROW[hint]


def report_schema() -> pa.Schema:
    """:data:`CSV_COLUMNS` typed by the row fields they come from (``section`` and ``scenario`` are text)."""
    hints: dict[str, Any] = {}
    for row_type in (RankingRow, AgreementRow, ReliabilityRow, PairRow):
        for name, hint in typing.get_type_hints(row_type).items():
            hints.setdefault(name, hint)
    return pa.schema(
        [pa.field(c, pa.string() if c in ("section", "scenario") else _arrow_type(hints[c])) for c in CSV_COLUMNS]
    )


def to_parquet(report: Report) -> bytes:
    """The report's long table as the bytes of a Parquet file."""
    schema = report_schema()
    table = pa.Table.from_pylist(
        [dict(zip(CSV_COLUMNS, row, strict=True)) for row in table_rows(report)], schema=schema
    )
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink)
    data: bytes = sink.getvalue().to_pybytes()
    return data
