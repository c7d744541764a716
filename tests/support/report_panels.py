"""Deterministic simulated batches written into a real database, for report digests and the report benchmark.

``build_panel_db`` turns a simulated panel (``tests.support.simulated_panels``) into a loaded batch: the
outputs go through ``load_batch`` (a JSONL file and a rubric, as a user would load them) and the answers
straight into the assignment and rating tables with SQLAlchemy Core, so the database holds every kind of
row a report reads: answers shown in the app (side, queue position and seconds recorded) beside imported
ones, repeats shown to the same reviewer again, a lead who rated, outputs with leaked names (masked or
excluded), metadata, Unicode text with odd whitespace. Nothing here depends on the code under test beyond
``load_batch`` and ``add_reviewer``, which the starting commit has too, so the same function ran on both.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from sqlalchemy import insert, select
from sqlalchemy.engine import Engine
from sqlmodel import Session

from reviewer_app.batches.loading import load_batch
from reviewer_app.domain.enums import AssignmentStatus
from reviewer_app.people.people import add_reviewer
from storage.models import Assignment, Item, Model, Output, Rating, Reviewer, Sample
from tests.support.simulated_panels import continuous, likert, pairwise_panel, rating_panel

MODELS = ("aurora", "birch", "cedar", "dune")
SCENARIOS = ("extraction", "summary", "support")
T0 = datetime(2026, 11, 1, 9, 0, 0, tzinfo=UTC)

RATING_RUBRIC = """mode = "rating"
overlap = 3
seed = 20261130

[[dimensions]]
name = "correctness"
description = "Is every fact right?"
scale = "likert"
min = 1
max = 5
level = "ordinal"

[[dimensions]]
name = "mqm"
description = "Error score"
scale = "continuous"
min = 0.0
max = 10.0
level = "interval"
"""

PAIRWISE_RUBRIC = """mode = "pairwise"
overlap = 2
seed = 20261130
pairwise_granularity = "overall"
"""

# Words and whitespace that a naive character or word count could get wrong.
_WORDS = ("total", "€1,240.00", "naïve", "東京", "🙂", "line\nbreak", "tab\there", "nbsp\u00a0x", "em\u2003space", "")


def _text(rng: np.random.Generator, n: int) -> str:
    return " ".join(str(_WORDS[k]) for k in rng.integers(0, len(_WORDS), n))


def _write_outputs(folder: Path, outputs: pd.DataFrame, rng: np.random.Generator) -> Path:
    """The batch file: one line per simulated output, some of them naming their model (a leak)."""
    path = folder / "batch.jsonl"
    with path.open("w", encoding="utf-8") as f:
        for i, (scen, key, model, repeat) in enumerate(
            zip(outputs["scenario"], outputs["sample_id"], outputs["model"], outputs["repeat"], strict=True)
        ):
            text = _text(rng, int(rng.integers(3, 40)))
            if i % 17 == 5:
                text = f"I am {model}, trained by {model} Labs. " + text
            meta: dict[str, Any] = {"latency_ms": round(float(rng.lognormal(7, 0.4)), 1)}
            if i % 3:
                meta["ttft_ms"] = int(rng.integers(50, 400))
                meta["output_tokens"] = int(rng.integers(5, 900))
            if i % 11 == 0:
                meta["note"] = "cached"
            rec = {
                "sample_id": key,
                "scenario": scen,
                "prompt": f"Question {key}: what is the answer?",
                "model": model,
                "output": text,
                "metadata": meta,
            }
            if repeat:
                rec["repeat"] = int(repeat)
            f.write(json.dumps(rec, ensure_ascii=False) + "\n")
    return path


def item_ids(session: Session, batch_id: int) -> dict[tuple[str, str, str | None, int], int]:
    """(sample key, model a, model b or None, repeat a) -> item id, as the load made them."""
    out_a, out_b = Output.__table__.alias("oa"), Output.__table__.alias("ob")  # type: ignore[attr-defined]
    ma, mb = Model.__table__.alias("ma"), Model.__table__.alias("mb")  # type: ignore[attr-defined]
    item, sample = Item.__table__, Sample.__table__  # type: ignore[attr-defined]
    stmt = (
        select(item.c.id, sample.c.key, ma.c.name, mb.c.name, out_a.c.repeat)
        .select_from(item)
        .join(sample, sample.c.id == item.c.sample_id)
        .join(out_a, out_a.c.id == item.c.output_a_id)
        .join(ma, ma.c.id == out_a.c.model_id)
        .outerjoin(out_b, out_b.c.id == item.c.output_b_id)
        .outerjoin(mb, mb.c.id == out_b.c.model_id)
        .where(item.c.batch_id == batch_id)
    )
    return {(k, a, b, int(r)): int(i) for i, k, a, b, r in session.execute(stmt)}


def _pairwise_value(row: Any, a: str, b: str) -> str:
    """The simulated answer as it would be stored for the loaded item (a, b) shown with ``row.swapped``."""
    shown, sim_swapped = str(row.value), bool(row.swapped)
    if shown == "tie":
        return "tie"
    winner = row.model_a if (shown == "left") != sim_swapped else row.model_b
    left = b if sim_swapped else a
    return "left" if winner == left else "right"


def build_panel_db(
    engine: Engine,
    folder: Path,
    *,
    mode: str = "rating",
    n_samples: int = 30,
    seed: int = 2026,
    name: str = "panel",
    repeats: bool = True,
) -> str:
    """Load a simulated ``mode`` ("rating" or "pairwise") batch named ``name`` with its answers; returns the name.

    ``repeats=False`` leaves out the second showings (then every rating counts for the rankings).

    Deterministic for a given ``seed`` and ``n_samples``: the same database content on SQLite and PostgreSQL.
    """
    rng = np.random.default_rng(seed)
    folder.mkdir(parents=True, exist_ok=True)
    if mode == "rating":
        quality = {s: {m: 3.0 + 0.3 * i - 0.2 * j for i, m in enumerate(MODELS)} for j, s in enumerate(SCENARIOS)}
        dims = (likert("correctness"), continuous("mqm", 0.0, 10.0))
        ratings, outputs, _ = rating_panel(
            rng, quality, n_samples=n_samples, biases=[-0.4, -0.1, 0.0, 0.2, 0.5, 0.1], dims=dims, repeats=2
        )
        rubric_text, on_leak = RATING_RUBRIC, "mask"
    else:
        strength = {s: {m: 0.4 * i - 0.1 * j for i, m in enumerate(MODELS)} for j, s in enumerate(SCENARIOS)}
        ratings, _, _ = pairwise_panel(rng, strength, n_samples=n_samples, n_reviewers=6, overlap=2)
        keys = ratings[["scenario", "sample_id"]].drop_duplicates()
        outputs = keys.merge(pd.DataFrame({"model": MODELS}), how="cross").assign(repeat=0)
        rubric_text, on_leak = PAIRWISE_RUBRIC, "exclude"
    batch_file = _write_outputs(folder, outputs, rng)
    (folder / "rubric.toml").write_text(rubric_text, encoding="utf-8")
    batch_id = load_batch(
        engine, [batch_file], folder / "rubric.toml", name=name, on_leak=on_leak, open_now=True
    ).batch_id
    reviewers = sorted(ratings["reviewer"].unique())
    with Session(engine) as session:
        known = set(session.execute(select(Reviewer.name)).scalars())
    for i, who in enumerate(reviewers):
        if who not in known:  # a second batch in the same database has the same panel
            add_reviewer(engine, who, "lead" if i == len(reviewers) - 1 else "reviewer")
    with Session(engine) as session:
        people = {n: int(i) for i, n in session.execute(select(Reviewer.id, Reviewer.name))}
        items = item_ids(session, batch_id)
        showings: dict[tuple[int, int, int], dict[str, Any]] = {}
        answers: list[tuple[tuple[int, int, int], str, str]] = []
        for row in ratings.itertuples(index=False):
            turned = False  # the loaded pair's output a is the other model (a keyed coin per pair: issue 33)
            if mode == "rating":
                key = (str(row.sample_id), str(row.model_a), None, int(row.repeat_a))
                item = items.get(key)
                value = str(row.value)
            else:
                a, b = sorted((str(row.model_a), str(row.model_b)))
                item = items.get((str(row.sample_id), a, b, 0))
                if item is None:
                    item = items.get((str(row.sample_id), b, a, 0))
                    turned = item is not None
                value = _pairwise_value(row, a, b)  # the side as shown: the same model stays on the left
            if item is None:  # an excluded output's item
                continue
            rid = people[str(row.reviewer)]
            n = len(showings)
            for occurrence in (0, 1) if repeats and n % 9 == 4 else (0,):
                sk = (item, rid, occurrence)
                if sk not in showings:
                    shown = (n + occurrence) % 2 == 0
                    showings[sk] = {
                        "batch_id": batch_id,
                        "item_id": item,
                        "reviewer_id": rid,
                        "occurrence": occurrence,
                        "position": int(row.position) + occurrence * 10_000,
                        "label": f"L{n}-{occurrence}",
                        "swapped": bool(row.swapped) != turned,
                        "status": AssignmentStatus.DONE,
                        "shown_at": T0 + timedelta(seconds=n) if shown else None,
                        "submitted_at": T0 + timedelta(seconds=n + 30),
                        "seconds_spent": float(5 + n % 50) if shown else None,
                    }
                if occurrence and mode == "rating" and row.dimension == "correctness":
                    value = str(min(5, int(value) + n % 2))
                answers.append((sk, str(row.dimension), value))
        assignment_ids = _insert_showings(session, list(showings.values()))
        rows = [
            {
                "assignment_id": assignment_ids[sk],
                "batch_id": batch_id,
                "item_id": sk[0],
                "reviewer_id": sk[1],
                "dimension": dim,
                "value": value,
                "created_at": T0,
                "updated_at": T0,
            }
            for sk, dim, value in answers
        ]
        session.execute(insert(Rating), rows)
        session.commit()
    return name


def _insert_showings(session: Session, rows: list[dict[str, Any]]) -> dict[tuple[int, int, int], int]:
    """Insert the assignments and map (item, reviewer, occurrence) to their ids."""
    session.execute(insert(Assignment), rows)
    stmt = select(Assignment.id, Assignment.item_id, Assignment.reviewer_id, Assignment.occurrence)
    return {(int(i), int(r), int(o)): int(a) for a, i, r, o in session.execute(stmt)}
