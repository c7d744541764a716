"""Preference records: the panel's verdicts (:mod:`.columns`' vote frame) with the prompt and the two texts, as
DPO trainers read them (``prompt``, ``chosen``, ``rejected``), then where each came from.

The prompt is the sample's as the batch file gave it: a string, or a conversation, the list of messages
``{"role": ..., "content": ...}`` (other keys kept). One export has one kind, so that every format can type the
column: in a batch where any prompt is a conversation, a text prompt is written as a conversation of one user
message.
"""

from __future__ import annotations

from typing import Any

import orjson
import pandas as pd

from reviewer_app.exports.columns import RECORD_COLUMNS


def batch_prompts(stored: dict[str, str]) -> tuple[dict[str, Any], bool]:
    """Sample key -> its prompt (``stored``: the JSON text the database keeps) and whether the batch's prompts
    are conversations (then every text prompt is made one: see the module docstring)."""
    prompts: dict[str, Any] = {key: orjson.loads(text) for key, text in stored.items()}
    conversation = any(isinstance(p, list) for p in prompts.values())
    if conversation:
        prompts = {k: p if isinstance(p, list) else [{"role": "user", "content": p}] for k, p in prompts.items()}
    return prompts, conversation


def preference_records(
    batch: str,
    source: str,
    votes: pd.DataFrame,
    prompts: dict[str, Any],
    texts: dict[tuple[str, str, int], str],
) -> list[dict[str, Any]]:
    """The export's records, one dict per row of ``votes`` (keys in :data:`RECORD_COLUMNS` order): the prompt
    by sample, each side's text by (sample, model, repeat), and the vote columns as plain Python values (None
    for a missing score or agreement)."""
    out: list[dict[str, Any]] = []
    for row in votes.to_dict("records"):
        sample = str(row["sample_id"])
        record: dict[str, Any] = {
            "prompt": prompts[sample],
            "chosen": texts[sample, str(row["chosen_model"]), int(row["chosen_repeat"])],
            "rejected": texts[sample, str(row["rejected_model"]), int(row["rejected_repeat"])],
            "batch": batch,
            "source": source,
        }
        for column in RECORD_COLUMNS[5:]:
            record[column] = _plain(row[column])
        out.append(record)
    return out


def _plain(value: Any) -> Any:
    """A frame's cell as JSON would have it: numpy numbers as Python ones, NaN as None."""
    if value is None or (isinstance(value, float) and value != value):
        return None
    if hasattr(value, "item"):  # a numpy scalar
        return _plain(value.item())
    return value
