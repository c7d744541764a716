"""The ratings a comparison of two batches reads (unblinded: leads only).

:func:`compare_ratings_frame` is ``frames.ratings_frame`` less the columns a comparison never reads (time
spent, whether the item was shown, the rater's role). It reads through ``ratings_frame`` itself rather than a
copy of its query: a lean query of its own saved about 0.1-0.3 s per 300,000 ratings, not worth two readers
of one table that must stay equal. (The outputs' texts, which drift needs, come with the outputs:
``frames.outputs_frame(..., with_text=True)``.)
"""

from __future__ import annotations

import pandas as pd
from sqlmodel import Session

from storage.repositories.frames import RATING_COLUMNS, ratings_frame

COMPARE_RATING_COLUMNS = [c for c in RATING_COLUMNS if c not in ("seconds_spent", "rater_role", "shown")]


def compare_ratings_frame(session: Session, batch_id: int) -> pd.DataFrame:
    """``frames.ratings_frame(session, batch_id, python_strings=True)`` without ``seconds_spent``,
    ``rater_role`` and ``shown`` (:data:`COMPARE_RATING_COLUMNS`). Text columns are object columns of shared
    Python strings, as the aggregation works on them."""
    return ratings_frame(session, batch_id, python_strings=True)[COMPARE_RATING_COLUMNS]
