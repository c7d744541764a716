"""CSV cells that a spreadsheet would run as a formula, made inert (OWASP's CSV-injection rule).

A cell exported from untrusted text (a comment, a reviewer, model, sample or scenario name, all accepted as
they are on import) that starts with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return is read by Excel,
LibreOffice and Google Sheets as a formula. Such a cell gets a leading single quote, which those programs
show as text. Numbers are left alone, negative ones included (``-3``, ``-0.5``, ``-1e3``), so a score or a
duration still reads as a number.
"""

from __future__ import annotations

import re
from typing import TypeVar

__all__ = ["FORMULA_STARTS", "neutralise_cell"]

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")

T = TypeVar("T")

_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?", re.ASCII)


def neutralise_cell(value: T) -> T | str:
    """``value`` as it may go into a CSV cell: a string that a spreadsheet would run as a formula gets a
    leading ``'``; anything else (numbers, numeric strings such as ``-3``, ``None``, booleans) is returned
    unchanged."""
    if not isinstance(value, str) or not value.startswith(FORMULA_STARTS):
        return value
    if _NUMBER.fullmatch(value):  # a plain number as a spreadsheet reads one; "-1+1" or "-1 " is not
        return value
    return "'" + value
