"""The columns of a preference export, in the order every format writes them, and the frame of panel verdicts
the two sources (:mod:`.pairwise_votes`, :mod:`.rating_votes`) hand to the export before the texts are added.
"""

from __future__ import annotations

import pandas as pd

# One row per preference: what the panel decided about two outputs of one sample, before prompt and texts;
# ``adjudicated``: an adjudicator's ruling took the panel's place on it (``export-preferences --adjudicated``).
VOTE_COLUMNS = (
    "scenario", "sample_id", "chosen_model", "rejected_model", "chosen_repeat", "rejected_repeat", "chosen_votes",
    "rejected_votes", "tie_votes", "agreement", "tie", "adjudicated", "chosen_score", "rejected_score",
)  # fmt: skip
# A record as written: DPO's three fields first (what trainers read), then where it came from and how sure.
RECORD_COLUMNS = ("prompt", "chosen", "rejected", "batch", "source", *VOTE_COLUMNS)


def empty_votes() -> pd.DataFrame:
    """No preferences, with the vote columns (a batch whose counted ratings give none)."""
    return pd.DataFrame({c: pd.Series([], dtype=object) for c in VOTE_COLUMNS})


def ruled_flags(frame: pd.DataFrame) -> pd.Series:
    """The ratings frame's ``ruled`` column (the rows an adjudicator's ruling replaced, added by the export when
    it reads rulings), or all False."""
    if "ruled" in frame:
        return frame["ruled"].astype(bool)
    return pd.Series(False, index=frame.index)
