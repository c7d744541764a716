"""A report table as the lead's pages show it (the results page and its tabs)."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from reviewer_app.domain.report_fields import Column, shown_columns
from reviewer_app.reporting.formats import significant


def report_table(columns: Sequence[Column], rows: Sequence[object], *, drop_empty: bool = False) -> pd.DataFrame:
    """A report table as people read it: the columns' headings, numbers to 2-3 significant digits (still
    numbers, so they sort), optional columns (and with ``drop_empty`` any column) only where some row fills
    them."""
    shown = shown_columns(columns, rows)
    if drop_empty:
        shown = tuple(c for c in shown if any(getattr(r, c.name) is not None for r in rows))

    def cell(c: Column, row: object) -> object:
        value = c.cell(row)
        return significant(value) if isinstance(value, float) else value

    return pd.DataFrame([[cell(c, r) for c in shown] for r in rows], columns=[c.header for c in shown])
