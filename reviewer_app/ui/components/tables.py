"""Tables of numbers for the lead's pages: a missing value is shown as a dash, not as the word "None".

Streamlit draws a missing cell as a grey "None" unless ``st.dataframe`` is given a ``placeholder``: the pages
pass :data:`MISSING`. The cells stay numbers (a column still sorts as numbers)."""

from __future__ import annotations

import pandas as pd

MISSING = "–"


def dash_missing(frame: pd.DataFrame | list[dict[str, object]]) -> pd.DataFrame:
    """``frame`` (or its rows) as a DataFrame for ``st.dataframe(..., placeholder=MISSING)``."""
    return pd.DataFrame(frame) if isinstance(frame, list) else frame
