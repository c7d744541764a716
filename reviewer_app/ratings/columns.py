"""The columns of a ratings file and how its free-text cells are written: what the import and the export share.

An export must import back as it was: the import reads the columns the export writes (:data:`RATING_HEADER`,
:data:`PAIRWISE_HEADER`, the optional :data:`COMMENT`, :data:`REASON` and :data:`ANCHOR`), and a comment the
export made inert for a spreadsheet (:func:`text_cell`) is read back exactly as typed (:func:`read_text_cell`).
A module of its own so that both sides take these from one place, and neither from the other.
"""

from __future__ import annotations

from reviewer_app.domain.csv_safety import FORMULA_STARTS, neutralise_cell

RATING_HEADER = ("reviewer", "sample_id", "model", "dimension", "score")
PAIRWISE_HEADER = ("reviewer", "sample_id", "model_a", "model_b", "dimension", "winner")
COMMENT, REASON = "comment", "cant_judge_reason"
TEXT_COLUMNS = (COMMENT, REASON)  # optional, and an export's free-text columns
ANCHOR = "is_anchor"  # optional (an export's last column): anchor rows are refused (ratings.check)
RATER_KIND = "rater_kind"  # optional (export-ratings --with-judges): "judge" rows are refused (ratings.check)
_QUOTED = (*FORMULA_STARTS, "'")  # after the quote text_cell adds


def text_cell(value: str | None) -> str | None:
    """A free text (comment, reason) as its CSV cell: inert in a spreadsheet (:func:`neutralise_cell`), and
    read back exactly by :func:`read_text_cell`. "+1, fine" is a common comment: the import must not keep the
    quote the export put before it, so a text that itself starts with a quote and a formula character (or a
    second quote) gets one more quote, and the import takes exactly one away."""
    if value is None or not value.startswith(_QUOTED):
        return value
    if value.startswith("'"):
        return "'" + value if value[1:].startswith(_QUOTED) else value
    return neutralise_cell(value)


def read_text_cell(cell: str) -> str:
    """The text a :func:`text_cell` cell holds."""
    return cell[1:] if cell.startswith("'") and cell[1:].startswith(_QUOTED) else cell
