"""How a report type describes its fields: which are left out of the JSON while None, and a table's columns.

Every section type of the report (``report_rankings``, ``report_panel``) is built from these, and so are the
renderers' tables: a field marked with :func:`omitted` is left out of the JSON when it is None (see
``report.report_to_dict``); a table's columns are described once, on its row type (``RankingRow.COLUMNS``
...), as :class:`Column`, with the functions here that show a value in a cell. Apart from the section types
so that they and the top-level ``Report`` (which turns them into JSON) import it without importing each other.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "Column",
    "OMIT_IF_NONE",
    "blank_if_none",
    "fine",
    "omitted",
    "p_text",
    "pairs_text",
    "percent",
    "percent_or_none",
    "shown_columns",
    "yes_no",
]

OMIT_IF_NONE = "omit_if_none"  # dataclass field metadata: leave the key out of the JSON when the value is None


def omitted() -> Any:
    """A field that defaults to None and is left out of the JSON while None (not written as null)."""
    return field(default=None, metadata={OMIT_IF_NONE: True})


@dataclass(frozen=True)
class Column:
    """One column of a report table: the row field it shows, its heading, and how a cell shows the value.

    ``brief`` says whether the compact tables (Markdown, CSV) have the column too: True under the same
    heading, a string for a shorter heading, False not at all. ``show`` turns the field's value into the
    cell (default: the value itself; the renderers format numbers). An ``optional`` column (a field one
    mode fills and the other leaves out) is left out of a rendered table where no row has a value; the
    CSV keeps it, so its header does not depend on the mode.
    """

    name: str
    header: str
    brief: bool | str = True
    show: Callable[[Any], object] | None = None
    optional: bool = False

    @property
    def brief_header(self) -> str | None:
        """The heading in the compact tables, or None when they leave the column out."""
        if self.brief is False:
            return None
        return self.brief if isinstance(self.brief, str) else self.header

    def cell(self, row: object) -> object:
        """What the column shows for ``row``."""
        value = getattr(row, self.name)
        return value if self.show is None else self.show(value)


def shown_columns(columns: Iterable[Column], rows: Sequence[object]) -> tuple[Column, ...]:
    """The columns a rendered table of ``rows`` shows: all but the optional ones no row has a value for."""
    return tuple(c for c in columns if not c.optional or any(getattr(r, c.name) is not None for r in rows))


def blank_if_none(value: str | None) -> str:
    return value or ""


def percent(value: float) -> str:
    return f"{value:.0%}"


def percent_or_none(value: float | None) -> str | None:
    return None if value is None else f"{value:.0%}"


def yes_no(value: bool) -> str:
    return "yes" if value else "no"


def p_text(value: float | None) -> str | None:
    """A p-value for a table: three decimals, "<0.001" below that."""
    if value is None:
        return None
    return "<0.001" if value < 0.001 else f"{value:.3f}"


def pairs_text(value: tuple[str, ...]) -> str:
    """Model pairs ("A / B") for a table cell, separated by semicolons; blank when there are none."""
    return "; ".join(value)


def fine(value: float | None) -> str | None:
    """A small error for a table, to four decimals."""
    return None if value is None else f"{value:.4f}"
