"""Tables of numbers for the lead's pages: a missing value is shown as a dash, not as the word "None".

Streamlit draws a missing cell as a grey "None"; a Styler's display text replaces it while the cells stay
numbers (a column still sorts as numbers)."""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

import pandas as pd
from pandas.io.formats.style import Styler

MISSING = "–"


def _number(value: Any) -> str:
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return str(int(value))  # a count in a column with a gap is a float: 96.0 reads as 96
    return f"{value:g}" if isinstance(value, float) else str(value)


def dash_missing(frame: pd.DataFrame | list[dict[str, object]]) -> pd.DataFrame | Styler:
    """``frame`` (or its rows) as it should be drawn: the columns with a missing value show a dash there
    (numbers as they are); a frame without a gap is returned as it is."""
    frame = pd.DataFrame(frame) if isinstance(frame, list) else frame
    gaps: list[Hashable] = [c for c in frame.columns if frame[c].isna().any()]
    if not gaps:
        return frame
    numeric: list[Hashable] = [c for c in gaps if pd.api.types.is_numeric_dtype(frame[c])]
    other: list[Hashable] = [c for c in gaps if c not in numeric]
    styler = frame.style
    if numeric:
        styler = styler.format(_number, subset=numeric, na_rep=MISSING)
    if other:
        styler = styler.format(na_rep=MISSING, subset=other)
    return styler
