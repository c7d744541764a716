"""Reviewers' comments and "can't judge" reasons, grouped per scenario and model for the report.

Counting and choosing the latest answers is the database's work (``storage.repositories.frames``:
``answer_counts_frame``, ``comments_frame``); here the two frames become the report's
:class:`~reviewer_app.domain.report.CommentGroup` objects. Nothing is computed from the texts: they are
reported as the reviewers wrote them, and every renderer escapes them.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pandas as pd

from reviewer_app.domain.report_panel import CommentGroup, CommentRow


def _when(value: Any) -> str | None:
    """A stored submit time as ISO 8601 to the second, in UTC (the database keeps UTC without a zone)."""
    if pd.isna(value):
        return None
    moment = pd.Timestamp(value).to_pydatetime()
    moment = moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)
    return datetime.isoformat(moment, timespec="seconds")


def _text(value: Any) -> str | None:
    return None if pd.isna(value) else str(value)


def _models(a: Any, b: Any) -> tuple[str, ...]:
    return (str(a),) if _text(b) is None else (str(a), str(b))


def comment_groups(comments: pd.DataFrame, counts: pd.DataFrame) -> tuple[CommentGroup, ...]:
    """One group per scenario and model (pairwise: pair) that has a comment or a can't-judge answer, in
    scenario then model order.

    ``counts`` is ``answer_counts_frame`` (every answer counted), ``comments`` is ``comments_frame`` (the
    latest answers with words, already limited per group and kind, newest first)."""
    listed: dict[tuple[str, tuple[str, ...]], tuple[list[CommentRow], list[CommentRow]]] = {}
    for rec in comments.to_dict("records"):
        key = (str(rec["scenario"]), _models(rec["model_a"], rec["model_b"]))
        cant_judge = bool(rec["cant_judge"])
        row = CommentRow(
            sample_id=str(rec["sample_id"]),
            reviewer=str(rec["reviewer"]),
            submitted_at=_when(rec["submitted_at"]),
            comment=_text(rec["comment"]),
            cant_judge_reason=_text(rec["reason"]) if cant_judge else None,
        )
        cant, commented = listed.setdefault(key, ([], []))
        (cant if cant_judge else commented).append(row)
    groups = []
    for rec in counts.to_dict("records"):
        if not rec["cant_judge"] and not rec["commented"]:
            continue
        key = (str(rec["scenario"]), _models(rec["model_a"], rec["model_b"]))
        cant, commented = listed.get(key, ([], []))
        groups.append(
            CommentGroup(
                scenario=key[0],
                models=key[1],
                n_answers=int(rec["answers"]),
                n_cant_judge=int(rec["cant_judge"]),
                n_commented=int(rec["commented"]),
                cant_judge=tuple(cant),
                commented=tuple(commented),
            )
        )
    return tuple(sorted(groups, key=lambda g: (g.scenario, g.models)))
