"""Load the demo batches, create the demo people and give them work; safe to run again.

Run by ``blind-review demo``. A second run finds the batches already loaded (same content), keeps the
people and their ratings, and prints fresh sign-in links (the old links stop working).
"""

from __future__ import annotations

import hashlib
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
# (name, role): the first reviewer is "you"; the two colleagues have already done some work.
PEOPLE = (("demo-reviewer", "reviewer"), ("demo-colleague-1", "reviewer"), ("demo-colleague-2", "reviewer"),
          ("demo-lead", "lead"), ("demo-admin", "admin"))
PREFILLED_ITEMS = 8  # per colleague and batch, so the lead page has something to show


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
            _prefill(engine, summary.batch_id, get_person(engine, colleague).id)
    return people


def _prefill(engine: Engine, batch_id: int, reviewer_id: int) -> None:
    """Answer a few items as a colleague would (deterministic pseudo-answers; never shown as real data)."""
    for _ in range(PREFILLED_ITEMS):
        view = reviews.next_item(engine, batch_id, reviewer_id)
        if view is None:
            return
        answers = {}
        for dim in view.dimensions:
            allowed = dim.allowed_values()
            digest = hashlib.sha256(f"{reviewer_id}:{view.assignment_id}:{dim.name}".encode()).digest()
            # Lean to the upper half so the scores look like a real panel's rather than noise.
            answers[dim.name] = allowed[min(len(allowed) - 1, len(allowed) // 2 + digest[0] % (len(allowed) // 2 + 1))]
        reviews.submit_review(engine, reviewer_id, view.assignment_id, answers)
