"""Load the demo batches, create the demo people and give them work; safe to run again.

Run by ``blind-review demo``. A second run finds the batches already loaded (same content), keeps the
people and their ratings, and prints fresh sign-in links (the old links stop working).
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy.engine import Engine

from reviewer_app.errors import NotFoundError
from reviewer_app.services import reviews
from reviewer_app.services.assignment import assign
from reviewer_app.services.batches import load_batch
from reviewer_app.services.reviewers import add_reviewer, get_person, new_link

HERE = Path(__file__).resolve().parent
BATCHES = (("demo", "demo.jsonl", "rubric.toml"), ("demo-pairwise", "demo_pairwise.jsonl", "rubric_pairwise.toml"))
# (name, role): the first reviewer is "you"; the two colleagues have already done all of their work.
PEOPLE = (
    ("demo-reviewer", "reviewer"),
    ("demo-colleague-1", "reviewer"),
    ("demo-colleague-2", "reviewer"),
    ("demo-lead", "lead"),
    ("demo-admin", "admin"),
)
# The scripted colleagues' idea of each fictional model (0..1, per scenario), so the lead page shows what a
# real panel looks like: a clear leader in one scenario, a tie in another, a weak model. Made up, like the models.
DEMO_QUALITY = {
    "support": {"aurora-7b": 0.72, "borealis-xl": 0.74, "cirrus-mini": 0.60, "dynamo-2": 0.45},
    "data": {"aurora-7b": 0.55, "borealis-xl": 0.85, "cirrus-mini": 0.62, "dynamo-2": 0.40},
    "code": {"aurora-7b": 0.66, "borealis-xl": 0.70, "cirrus-mini": 0.68, "dynamo-2": 0.50},
}
COLLEAGUE_BIAS = {"demo-colleague-1": 0.06, "demo-colleague-2": -0.04}


@dataclass(frozen=True)
class DemoPerson:
    name: str
    role: str
    link: str


def seed_demo(engine: Engine) -> list[DemoPerson]:
    """Load the demo batches, create or refresh the demo people, assign, and return everyone's sign-in link."""
    people = []
    for name, role in PEOPLE:
        try:
            get_person(engine, name)
            link = new_link(engine, name)
        except NotFoundError:
            _person, link = add_reviewer(engine, name, role)
        people.append(DemoPerson(name, role, link))
    reviewers = [n for n, r in PEOPLE if r == "reviewer"]
    for name, data_file, rubric_file in BATCHES:
        summary = load_batch(engine, [HERE / data_file], HERE / rubric_file, name=name)
        if summary.already_loaded:
            continue
        assign(engine, name, reviewers)
        for colleague in reviewers[1:]:
            _prefill(engine, summary.batch_id, get_person(engine, colleague).id, COLLEAGUE_BIAS.get(colleague, 0.0))
    return people


def _prefill(engine: Engine, batch_id: int, reviewer_id: int, bias: float) -> None:
    """Answer every item of a scripted colleague: noisy judgements around ``DEMO_QUALITY`` (seeded, so every
    demo looks the same). Pairwise answers follow a Bradley-Terry choice between the two qualities."""
    rng = random.Random(f"demo:{batch_id}:{reviewer_id}")
    while (view := reviews.next_item(engine, batch_id, reviewer_id)) is not None:
        left, right = _shown_models(engine, view.assignment_id)
        quality = DEMO_QUALITY.get(view.scenario, {})
        answers = {}
        for dim in view.dimensions:
            q_left = quality.get(left, 0.6) + bias + rng.gauss(0, 0.12)
            if right is not None:
                q_right = quality.get(right, 0.6) + bias + rng.gauss(0, 0.12)
                if max(q_left, q_right) < 0.35:
                    answers[dim.name] = "both_bad"
                elif abs(q_left - q_right) < 0.04:
                    answers[dim.name] = "tie"
                else:
                    p_left = 1 / (1 + math.exp(-(q_left - q_right) * 12))
                    answers[dim.name] = "left" if rng.random() < p_left else "right"
            else:
                allowed = dim.allowed_values()
                position = min(max(q_left, 0.0), 0.999) * len(allowed)
                answers[dim.name] = allowed[int(position)]
        reviews.submit_review(engine, reviewer_id, view.assignment_id, answers)


def _shown_models(engine: Engine, assignment_id: int) -> tuple[str, str | None]:
    from storage.engine import read_session
    from storage.repositories.assignments import shown_models

    with read_session(engine) as session:
        return shown_models(session, assignment_id)
