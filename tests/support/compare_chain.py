"""Two batches of one eval set, loaded and rated as a user would (``load_batch``, ``import_ratings``), with a
known truth: baseline ``v1`` (m1, m2) and candidate ``v2`` (m1-v2 = m1 renamed, m2 unchanged, m3 new). m1-v2
is 1 point worse in qa and refuses a third of qa; everything else is unchanged. Used by the service, CLI and
page tests of ``compare``."""

from __future__ import annotations

import csv
import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from sqlalchemy import insert, select
from sqlalchemy.engine import Engine

from reviewer_app.batches import follow_up
from reviewer_app.batches.loading import load_batch
from reviewer_app.domain.enums import AssignmentStatus
from reviewer_app.people.people import add_reviewer
from reviewer_app.ratings.files import import_ratings
from storage.engine import read_session, write_session
from storage.models import Assignment, Item, Model, Output, Rating, Reviewer, Sample
from tests.helpers import write_batch, write_rubric

RUBRIC = """
mode = "rating"
overlap = 3
seed = 7
[[dimensions]]
name = "correctness"
description = "Is every fact right?"
scale = "likert"
min = 1
max = 5
level = "ordinal"
"""
SCENARIOS = ("qa", "summaries")
N_SAMPLES = 60  # 30 per scenario
REVIEWERS = ("ana", "ben", "cleo", "dev", "eli", "fay")
REFUSAL = "I'm unable to help with that request."
SAMPLE_EFFECT = np.random.default_rng(99).normal(0, 0.5, N_SAMPLES)  # the eval set's: the same every round


Refusals = frozenset[tuple[str, str]]


def seeded_anchor_picks(monkeypatch: pytest.MonkeyPatch, seed: int = 7) -> None:
    """Anchor samples chosen as before issue 33, ordered by a hash of the rubric's ``seed`` (:data:`RUBRIC`'s),
    for tests whose recorded numbers depend on which samples are anchors. The app now orders them by a keyed
    hash under each batch's secret, new at every load; only that order is replaced here, the pick's own rule
    (round the share, at least one per scenario) runs as it is."""

    def seeded(_key: bytes, purpose: str, scenario: str, sample: str) -> bytes:
        return hashlib.sha256(f"{seed}:{purpose}:{scenario}:{sample}".encode()).digest()

    monkeypatch.setattr(follow_up, "keyed_digest", seeded)


def records(models: dict[str, str], *, refuse: Refusals = frozenset(), prefix: str = "s") -> list[Any]:
    """One output per sample and model: ``models`` maps the batch's model name to its "true" identity,
    whose text is the same in both rounds unless (scenario, name) is in ``refuse``."""
    out = []
    for i in range(N_SAMPLES):
        scen = SCENARIOS[i % 2]
        for name, identity in models.items():
            text = REFUSAL if (scen, name) in refuse and i % 3 == 0 else f"Answer {i} from {identity[:1]} team."
            out.append(
                {
                    "sample_id": f"{prefix}{i}",
                    "scenario": scen,
                    "prompt": f"Question {i}?",
                    "model": name,
                    "output": text,
                    "metadata": {"latency_ms": 200 + 3 * i},
                }
            )
    return out


def ratings(path: Path, quality: dict[tuple[str, str], float], seed: int, prefix: str = "s") -> Path:
    """Three reviewers per output: clip(round(quality + sample effect + noise), 1, 5); the sample effect is the
    same in every round (it is the eval set's), so the paired difference is the quality change."""
    rng = np.random.default_rng(seed)
    with path.open("w", encoding="utf-8", newline="") as f:
        w = csv.writer(f)
        w.writerow(["reviewer", "sample_id", "model", "dimension", "score"])
        for i in range(N_SAMPLES):
            scen = SCENARIOS[i % 2]
            for (s, model), q in quality.items():
                if s != scen:
                    continue
                for who in rng.choice(REVIEWERS, 3, replace=False):
                    score = int(np.clip(np.rint(q + SAMPLE_EFFECT[i] + rng.normal(0, 0.5)), 1, 5))
                    w.writerow([who, f"{prefix}{i}", model, "correctness", score])
    return path


def load(engine: Engine, folder: Path, name: str, rows: list[Any], rubric: str = RUBRIC) -> None:
    batch = write_batch(folder / name, rows)
    load_batch(engine, [batch], write_rubric(folder / name, rubric), name=name, on_leak="flag", open_now=True)


def chain(engine: Engine, tmp_path: Path, *, rate_candidate: bool = True) -> None:
    """Baseline ``v1`` (m1, m2) and candidate ``v2`` (m1-v2 = m1 renamed, m2, m3 new). m1-v2 is 1 point worse in
    qa and refuses a third of qa; everything else is unchanged."""
    load(engine, tmp_path, "v1", records({"m1": "m1", "m2": "m2"}))
    load(engine, tmp_path, "v2", records({"m1-v2": "m1", "m2": "m2", "m3": "m3"}, refuse=frozenset({("qa", "m1-v2")})))
    base = {(s, m): 3.5 for s in SCENARIOS for m in ("m1", "m2")}
    import_ratings(engine, "v1", ratings(tmp_path / "v1.csv", base, seed=1))
    if rate_candidate:
        cand = {(s, m): 3.5 for s in SCENARIOS for m in ("m1-v2", "m2", "m3")}
        cand[("qa", "m1-v2")] = 2.5
        import_ratings(engine, "v2", ratings(tmp_path / "v2.csv", cand, seed=2))


def rate_items(engine: Engine, batch_id: int, score: Callable[[int, str, bool], float], seed: int) -> int:
    """Three of :data:`REVIEWERS` answer every item of the batch (rating mode, one output per item) on
    "correctness" with clip(round(``score(sample index, model, is_anchor)`` + noise), 1, 5), written as the app
    writes answers; an anchor item's model is the baseline output's. Returns the number of ratings."""
    rng = np.random.default_rng(seed)
    with read_session(engine) as session:
        people = {str(n): int(i) for i, n in session.execute(select(Reviewer.id, Reviewer.name))}
        stmt = (
            select(Item.id, Sample.key, Model.name, Item.is_anchor)
            .join(Sample, Sample.id == Item.sample_id)  # type: ignore[arg-type]
            .join(Output, Output.id == Item.output_a_id)  # type: ignore[arg-type]
            .join(Model, Model.id == Output.model_id)  # type: ignore[arg-type]
            .where(Item.batch_id == batch_id)
            .order_by(Item.id)
        )
        items = [(int(i), str(k), str(m), bool(a)) for i, k, m, a in session.execute(stmt)]
    for who in REVIEWERS:
        if who not in people:
            people[who] = add_reviewer(engine, who)[0].id or 0
    answers = []
    with write_session(engine) as session:
        for pos, (item, key, model, anchor) in enumerate(items):
            for who in rng.choice(REVIEWERS, 3, replace=False):
                value = int(np.clip(np.rint(score(int(key[1:]), model, anchor) + rng.normal(0, 0.5)), 1, 5))
                answers.append((item, people[str(who)], pos, str(value)))
        session.execute(
            insert(Assignment),
            [
                {"batch_id": batch_id, "item_id": i, "reviewer_id": r, "occurrence": 0, "position": p,
                 "label": f"L{i}-{r}", "status": AssignmentStatus.DONE}
                for i, r, p, _v in answers
            ],
        )  # fmt: skip
        ids = {
            (int(i), int(r)): int(a)
            for a, i, r in session.execute(
                select(Assignment.id, Assignment.item_id, Assignment.reviewer_id).where(Assignment.batch_id == batch_id)
            )
        }
        session.execute(
            insert(Rating),
            [
                {"assignment_id": ids[(i, r)], "batch_id": batch_id, "item_id": i, "reviewer_id": r,
                 "dimension": "correctness", "value": v}
                for i, r, _p, v in answers
            ],
        )  # fmt: skip
    return len(answers)
