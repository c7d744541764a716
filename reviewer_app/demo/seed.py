"""Load the demo batches, create the demo people and give them work; safe to run again.

Run by ``blind-review demo``. A second run finds the batches already loaded (same content), keeps the
people and their ratings, and prints fresh sign-in links (the old links stop working).
"""

from __future__ import annotations

import csv
import hashlib
import json
import math
import random
import tempfile
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

from sqlalchemy.engine import Engine

from reviewer_app.batches.catalog import batch_rubric, find_batch
from reviewer_app.batches.loading import load_batch
from reviewer_app.demo.feedback import write_demo_feedback
from reviewer_app.demo.judge_run import record_demo_judge, sample_effect
from reviewer_app.domain.enums import AssignmentStatus
from reviewer_app.errors import NotFoundError
from reviewer_app.people.people import add_reviewer, get_person, new_link
from reviewer_app.production.feedback import import_feedback
from reviewer_app.ratings.files import import_ratings
from reviewer_app.review.assignment import assign

HERE = Path(__file__).resolve().parent
# (name, file, rubric, baseline): demo-v2 is a follow-up round of demo (the baseline's rubric and samples, each
# shown again with the baseline's own outputs as anchors), so the lead's "Compare versions" has something to
# compare.
BATCHES: tuple[tuple[str, str, str | None, str | None], ...] = (
    ("demo", "demo.jsonl", "rubric.toml", None),
    ("demo-pairwise", "demo_pairwise.jsonl", "rubric_pairwise.toml", None),
    ("demo-v2", "demo_v2.jsonl", None, "demo"),
)
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
# The next versions in demo-v2 (make_files.version_two): dynamo-2 got better at support, cirrus-mini worse at
# data; the rest are the same outputs. Anchors show the old outputs and are judged by DEMO_QUALITY.
V2_QUALITY = {"support": {"dynamo-2": 0.70}, "data": {"cirrus-mini": 0.35}}
COLLEAGUE_BIAS = {"demo-colleague-1": 0.06, "demo-colleague-2": -0.04}
# How long each colleague takes, as a share of a careful reader's time (see _seconds_for). The second skims at
# about an eighth of it, so the lead's Reviewers tab shows what the fast-answer flag looks like, with its reason,
# beside the leniency flags; the other one, and anyone who tries the demo at a normal pace, is not flagged.
COLLEAGUE_PACE = {"demo-colleague-1": 1.0, "demo-colleague-2": 0.12}


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
    for name, data_file, rubric_file, baseline in BATCHES:
        rubric = HERE / rubric_file if rubric_file else None
        # Every sample shown again as an anchor: the demo has 12 samples per scenario, and a verdict needs 10
        # anchored ones (aggregation.compare.MIN_VERDICT_SAMPLES); a real eval set has 50-200+ and keeps 20%.
        # A public secret: the demo is sample data, and its labels, orders and answers look the same every time.
        secret = hashlib.sha256(f"blind-review demo:{name}".encode()).hexdigest()
        summary = load_batch(
            engine,
            [HERE / data_file],
            rubric,
            name=name,
            follow_up=baseline,
            anchor_share=1.0,
            public_secret=secret,
            open_now=True,
        )
        if baseline is None:  # a recorded LLM judge run, for the report's "Judge vs panel" section (idempotent)
            record_demo_judge(engine, summary.batch_id, DEMO_QUALITY)
        if summary.already_loaded:
            continue
        assign(engine, name, reviewers)
        colleagues = {
            get_person(engine, c).id: (COLLEAGUE_BIAS.get(c, 0.0), COLLEAGUE_PACE.get(c, 1.0)) for c in reviewers[1:]
        }
        _prefill(engine, summary.batch_id, colleagues, V2_QUALITY if baseline else {})
    with tempfile.TemporaryDirectory() as folder:  # imported like any export; a second run adds nothing
        import_feedback(engine, write_demo_feedback(Path(folder) / "demo-feedback.jsonl"), progress=False)
        _judged_batch(engine, Path(folder), reviewers[1:])
    return people


JUDGED = "demo-judged"
JUDGED_SAMPLES = 6  # of each scenario's 12, rated by the panel; the recorded judge rates all 12


def _judged_batch(engine: Engine, folder: Path, colleagues: list[str]) -> None:
    """The demo's judge-assisted batch: the demo's outputs again, the panel's ratings (imported, as a team that
    rated elsewhere would) of a random 6 of each scenario's 12 samples, and the recorded judge's ratings of all
    of them, so that the report shows a judge-assisted ranking beside the panel's. Loaded closed and assigned to
    nobody: no reviewer is shown it."""
    rubric = (HERE / "rubric.toml").read_text(encoding="utf-8")
    rubric = rubric.replace('instructions = "', 'instructions = "Rated in part; an LLM judge rated every answer. ', 1)
    summary = load_batch(
        engine,
        [HERE / "demo.jsonl"],
        None,
        rubric_text=rubric,
        name=JUDGED,
        public_secret=hashlib.sha256(f"blind-review demo:{JUDGED}".encode()).hexdigest(),
    )
    record_demo_judge(engine, summary.batch_id, DEMO_QUALITY, per_sample=True)
    if summary.already_loaded:
        return
    records = [json.loads(line) for line in (HERE / "demo.jsonl").read_text(encoding="utf-8").splitlines() if line]
    by_scenario: dict[str, list[str]] = {}
    for r in records:
        keys = by_scenario.setdefault(r["scenario"], [])
        if r["sample_id"] not in keys:
            keys.append(r["sample_id"])
    picked = {
        k for keys in by_scenario.values() for k in random.Random(f"demo-judged:{keys[0]}").sample(keys, JUDGED_SAMPLES)
    }
    dims = batch_rubric(find_batch(engine, JUDGED))
    path = folder / "demo-judged-ratings.csv"
    with path.open("w", encoding="utf-8", newline="") as f:
        out = csv.writer(f)
        out.writerow(["reviewer", "sample_id", "model", "dimension", "score"])
        for name in colleagues:
            rng = random.Random(f"demo-judged:{name}")
            for r in records:
                if r["sample_id"] not in picked:
                    continue
                for dim in dims.dimensions_for(r["scenario"]):
                    model, key = r["model"], r["sample_id"]
                    quality = {model: DEMO_QUALITY.get(r["scenario"], {}).get(model, 0.6) + sample_effect(key, model)}
                    value = _judge(rng, quality, r["model"], None, COLLEAGUE_BIAS.get(name, 0.0), dim.allowed_values())
                    out.writerow([name, r["sample_id"], r["model"], dim.name, value])
    import_ratings(engine, JUDGED, path)


def _prefill(
    engine: Engine, batch_id: int, colleagues: dict[int, tuple[float, float]], changed: dict[str, dict[str, float]]
) -> None:
    """Answer every item of the scripted colleagues (reviewer id -> bias and pace), all in one transaction.

    Noisy judgements around ``DEMO_QUALITY`` (with a follow-up round's ``changed`` models on top, except on
    anchor items, which show the baseline's outputs), seeded so every demo looks the same; pairwise answers follow a
    Bradley-Terry choice between the two qualities. Each answer gets a plausible time spent (see
    :func:`_seconds_for`), so the lead page's seconds per item look like a real panel's. One transaction
    rather than one per answer: the demo's ~200 answers are written in well under a second.
    """
    from storage.engine import write_session
    from storage.models import utcnow
    from storage.repositories import demo as demo_repo
    from storage.repositories.batches import batches as batch_repo
    from storage.repositories.review import answers as ratings_repo
    from storage.repositories.review import assignments as assignment_repo

    now = utcnow()
    with write_session(engine) as session:
        batch = batch_repo.get_batch(session, batch_id)
        assert batch is not None
        rubric = batch_rubric(batch)
        rows: list[dict[str, Any]] = []
        for reviewer_id, (bias, pace) in colleagues.items():
            rng = random.Random(f"demo:{batch_id}:{reviewer_id}")
            clock = random.Random(f"demo-time:{batch_id}:{reviewer_id}")
            notes = random.Random(f"demo-notes:{batch_id}:{reviewer_id}")  # comments and can't-judge
            queue = [
                a
                for a in assignment_repo.reviewer_assignments(session, batch_id, reviewer_id)
                if a.status == AssignmentStatus.PENDING
            ]
            timed = []
            for a in queue:
                item, _sample, scenario, out_a, out_b = ratings_repo.item_content(session, a.item_id)
                words = out_a.n_words + (out_b.n_words if out_b is not None else 0)
                seconds = _seconds_for(clock, pace, len(rubric.dimensions_for(scenario)), words)
                quality = DEMO_QUALITY.get(scenario, {})
                if not item.is_anchor:
                    quality = {**quality, **changed.get(scenario, {})}
                timed.append((a, scenario, quality, seconds))
            shown = now - timedelta(seconds=sum(spent for _a, _s, _q, spent in timed) + 600)
            for a, scenario, quality, spent in timed:
                assert a.id is not None
                left, right = demo_repo.shown_models(session, a.id)
                draw = notes.random()
                submitted = shown + timedelta(seconds=spent)
                finished = {"shown_at": shown, "submitted_at": submitted, "seconds_spent": spent}
                shown = submitted
                if draw < CANT_JUDGE_SHARE:
                    reason = CANT_JUDGE_REASONS[int(draw / CANT_JUDGE_SHARE * len(CANT_JUDGE_REASONS))]
                    assignment_repo.update_assignment(
                        session, a.id, status=AssignmentStatus.SKIPPED, cant_judge=reason, **finished
                    )
                    continue
                values = []
                for dim in rubric.dimensions_for(scenario):
                    value = _judge(rng, quality, left, right, bias, dim.allowed_values())
                    values.append(_share(value, dim.allowed_values()))
                    row = {"assignment_id": a.id, "batch_id": batch_id, "item_id": a.item_id}
                    rows.append({**row, "reviewer_id": reviewer_id, "dimension": dim.name, "value": value})
                comment = _comment(notes, values) if draw < CANT_JUDGE_SHARE + COMMENT_SHARE else None
                assignment_repo.update_assignment(
                    session, a.id, status=AssignmentStatus.DONE, comment=comment, **finished
                )
        ratings_repo.upsert_ratings(session, rows, now)


CANT_JUDGE_SHARE = 0.04
COMMENT_SHARE = 0.25
CANT_JUDGE_REASONS = (
    "I can't check these numbers without the source data.",
    "Outside my field: I would be guessing.",
)
# What a reviewer writes beside a low, a middling and a high judgement: so the lead page's comments read like
# a real panel's (and show that a comment says *why*, which a score cannot).
COMMENTS = (
    ("Misses the second half of the question.", "States a wrong figure as fact.", "Ignores the requested format."),
    ("Right, but padded with generic advice.", "Correct, though the tone is stiff.", "Fine; a bit long."),
    ("Exactly what was asked, and concise.", "Clear steps; I would send this.", "Good, and it flags its assumptions."),
)


def _share(value: str, allowed: list[str]) -> float:
    """Where an answer sits on its scale, 0 (worst) to 1 (best); pairwise answers count as the middle."""
    if value not in allowed or len(allowed) < 2 or not value.lstrip("-").replace(".", "").isdigit():
        return 0.5
    return allowed.index(value) / (len(allowed) - 1)


def _comment(rng: random.Random, shares: list[float]) -> str:
    mean = sum(shares) / len(shares) if shares else 0.5
    band = COMMENTS[0 if mean < 0.4 else 1 if mean < 0.75 else 2]
    return band[rng.randrange(len(band))]


def _seconds_for(clock: random.Random, pace: float, n_dimensions: int, words: int) -> float:
    """A plausible time for one item: about 15 s to take in the prompt, 4 s per question answered and the
    answer(s) read at 3 words a second (a careful expert: a short answer takes half a minute, the demo's
    2,000-word one over ten minutes), times ``pace`` and a log-normal spread (about +-40%), so no two items take
    the same time."""
    careful = 15.0 + 4.0 * n_dimensions + words / 3.0
    return round(pace * careful * clock.lognormvariate(0.0, 0.4), 1)


def _judge(
    rng: random.Random, quality: dict[str, float], left: str, right: str | None, bias: float, allowed: list[str]
) -> str:
    """One scripted answer: a score on the scale in rating mode, left / right / tie / both_bad in pairwise."""
    q_left = quality.get(left, 0.6) + bias + rng.gauss(0, 0.12)
    if right is None:
        position = min(max(q_left, 0.0), 0.999) * len(allowed)
        return allowed[int(position)]
    q_right = quality.get(right, 0.6) + bias + rng.gauss(0, 0.12)
    if max(q_left, q_right) < 0.35:
        return "both_bad"
    if abs(q_left - q_right) < 0.04:
        return "tie"
    p_left = 1 / (1 + math.exp(-(q_left - q_right) * 12))
    return "left" if rng.random() < p_left else "right"
