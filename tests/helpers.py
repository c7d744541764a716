"""Small builders for test batches, and the one database shortcut the claim tests share."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import update
from sqlalchemy.engine import Engine
from sqlmodel import col

from storage.engine import write_session
from storage.models import Assignment, utcnow

RATING_RUBRIC = """
mode = "rating"
overlap = {overlap}
seed = 11
[[dimensions]]
name = "correctness"
description = "Is every fact right?"
scale = "likert"
min = 1
max = 5
labels = {{ 1 = "wrong", 3 = "partly right", 5 = "fully right" }}
level = "ordinal"
[[dimensions]]
name = "follows_format"
description = "Does it follow the requested format?"
scale = "binary"
level = "nominal"
"""

PAIRWISE_RUBRIC = """
mode = "pairwise"
overlap = {overlap}
seed = 5
"""


def write_batch(folder: Path, records: list[dict[str, Any]], name: str = "batch.jsonl") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    return path


def write_rubric(folder: Path, text: str, name: str = "rubric.toml") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def make_records(
    n_samples: int, models: list[str], scenarios: tuple[str, ...] = ("qa", "summaries")
) -> list[dict[str, Any]]:
    out = []
    for i in range(n_samples):
        for m in models:
            out.append(
                {
                    "sample_id": f"s{i}",
                    "scenario": scenarios[i % len(scenarios)],
                    "prompt": f"Question {i}?",
                    "model": m,
                    "output": f"Answer {i} by a model.",
                    "metadata": {"latency_ms": 100 + i},
                }
            )
    return out


def expire_reservations(engine: Engine, assignment_id: int | None = None) -> None:
    """Make pool reservations run out now (one assignment's, or all of them), as if the hold had expired."""
    stmt = update(Assignment).values(reserved_until=utcnow() - timedelta(seconds=1))
    if assignment_id is not None:
        stmt = stmt.where(col(Assignment.id) == assignment_id)
    with write_session(engine) as s:
        s.execute(stmt)


def first_showings(
    batch_id: int, reviewer_id: int, item_ids: list[int], status: str, label: str
) -> list[dict[str, Any]]:
    """Assignment rows (column -> value) giving ``reviewer_id`` a first showing of each item, in order, with
    ``status`` (done: answered; pending: planned) and labels ``{label}0``, ``{label}1``, ..., for tests that
    write assignments straight into the table."""
    return [
        {
            "batch_id": batch_id,
            "item_id": item_id,
            "reviewer_id": reviewer_id,
            "occurrence": 0,
            "position": n,
            "label": f"{label}{n}",
            "swapped": False,
            "status": status,
        }
        for n, item_id in enumerate(item_ids)
    ]
