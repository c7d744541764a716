"""Stress run: 50 reviewers claiming and submitting at once on PostgreSQL, with reservations expiring.

Loads a rating batch with no plan (every slot is a pool claim) into a scratch database, then runs one
thread per reviewer: claim the next item, think a few milliseconds, submit. Some reviewers wander off
with an item open past the reservation (short on purpose) and come back to submit late; some never come
back. Their slots go to others meanwhile. At the end it checks what the issue asks: no item past k, every
item at k, and every save the app confirmed is in the database (and nothing it refused).

    python scripts/stress_claims.py [--reviewers 50] [--samples 60] [--overlap 3] [--reservation 2]
                                    [--url postgresql+psycopg://postgres@127.0.0.1:5432/test]

``--url`` is an administrative connection (default ``BLIND_REVIEW_TEST_POSTGRES_URL``, as for the tests);
the scratch database ``br_stress_<pid>`` is created next to it and dropped at the end.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

RUBRIC = """mode = "rating"
overlap = {overlap}
seed = 3
[[dimensions]]
name = "correctness"
description = "Right?"
scale = "likert"
min = 1
max = 5
level = "ordinal"
"""


@dataclass
class Tally:
    confirmed: list[int] = field(default_factory=list)  # assignment ids whose submit returned
    refused: list[int] = field(default_factory=list)  # late answers the app refused with a message
    late_kept: int = 0  # late answers saved: nobody had completed the slot meanwhile
    abandoned: int = 0
    errors: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reviewers", type=int, default=50)
    parser.add_argument("--samples", type=int, default=60)
    parser.add_argument("--models", type=int, default=3)
    parser.add_argument("--overlap", type=int, default=3)
    parser.add_argument("--reservation", type=int, default=2, help="reservation seconds (short on purpose)")
    parser.add_argument("--wander", type=float, default=0.08, help="share of claims left open past the reservation")
    parser.add_argument(
        "--url",
        default=os.environ.get("BLIND_REVIEW_TEST_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test"),
    )
    args = parser.parse_args()

    from sqlalchemy import create_engine, text
    from sqlalchemy.engine import make_url

    scratch = f"br_stress_{os.getpid()}"
    admin = create_engine(args.url, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{scratch}"'))
    url = make_url(args.url).set(database=scratch).render_as_string(hide_password=False)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            os.environ["BLIND_REVIEW_DATA_DIR"] = str(Path(tmp) / "data")
            os.environ["BLIND_REVIEW_RESERVATION_SECONDS"] = str(args.reservation)
            run(args, url, Path(tmp))
    finally:
        from storage.engine import dispose_engines

        dispose_engines()
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{scratch}" WITH (FORCE)'))
        admin.dispose()


def run(args: argparse.Namespace, url: str, tmp: Path) -> None:
    from sqlalchemy import func, select
    from sqlmodel import col

    from reviewer_app.batches.loading import load_batch
    from reviewer_app.errors import BatchClosedError
    from reviewer_app.people.people import add_reviewer
    from reviewer_app.review.reviews import next_item, submit_review
    from storage.engine import get_engine, read_session
    from storage.migrate import migrate
    from storage.models import Assignment, Item, Rating
    from tests.helpers import make_records, write_batch, write_rubric

    engine = get_engine(url)
    migrate(engine)
    models = [f"m{i}" for i in range(args.models)]
    summary = load_batch(
        engine,
        [write_batch(tmp, make_records(args.samples, models))],
        write_rubric(tmp, RUBRIC.format(overlap=args.overlap)),
        name="stress",
        open_now=True,
    )
    people = [add_reviewer(engine, f"r{i:02d}")[0] for i in range(args.reviewers)]
    tally = Tally()
    reservation = float(os.environ["BLIND_REVIEW_RESERVATION_SECONDS"])
    start = threading.Barrier(len(people))
    deadline = time.monotonic() + 300

    def complete() -> bool:
        with read_session(engine) as s:
            done = s.execute(
                select(func.count()).select_from(Assignment).where(col(Assignment.status) == "done")
            ).scalar_one()
        return bool(int(done) >= summary.items * int(args.overlap))

    def work(person_id: int, seed: int) -> None:
        rng = random.Random(seed)
        try:
            start.wait()
            while time.monotonic() < deadline:
                view = next_item(engine, summary.batch_id, person_id)
                if view is None:
                    if complete():
                        return
                    time.sleep(0.1)  # slots are held by reservations that have not run out yet
                    continue
                roll = rng.random()
                if roll < args.wander / 2:  # walks away for good: the reservation runs out
                    with tally.lock:
                        tally.abandoned += 1
                    return
                late = roll < args.wander
                time.sleep(reservation + 0.3 if late else rng.uniform(0, 0.02))
                try:
                    submit_review(engine, person_id, view.assignment_id, {"correctness": str(rng.randint(1, 5))})
                except BatchClosedError:
                    with tally.lock:
                        tally.refused.append(view.assignment_id)
                    continue
                with tally.lock:
                    tally.confirmed.append(view.assignment_id)
                    tally.late_kept += late
        except Exception as exc:  # noqa: BLE001 - reported in the table
            with tally.lock:
                tally.errors.append(f"{type(exc).__name__}: {exc}")

    t0 = time.perf_counter()
    threads = [threading.Thread(target=work, args=(p.id, i)) for i, p in enumerate(people)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - t0

    with read_session(engine) as s:
        rows = s.execute(select(col(Assignment.id), col(Assignment.item_id), col(Assignment.status))).all()
        item_ids = list(s.execute(select(col(Item.id))).scalars())
        rated = set(s.execute(select(col(Rating.assignment_id)).distinct()).scalars())
    done_ids = {a for a, _, status in rows if status == "done"}
    per_item = Counter(item for _, item, status in rows if status == "done")
    confirmed = set(tally.confirmed)
    n_items = len(item_ids)
    print(f"stress run: {len(people)} reviewers, PostgreSQL, reservations of {reservation:.0f} s, {elapsed:.1f} s")
    print(f"{'what':<52} {'value':>8}")
    for label, value in (
        ("items", n_items),
        ("k (overlap)", args.overlap),
        ("max completed ratings per item", max(per_item.values(), default=0)),
        ("min completed ratings per item", min((per_item.get(i, 0) for i in item_ids), default=0)),
        ("items past k", sum(1 for v in per_item.values() if v > args.overlap)),
        ("saves confirmed to reviewers", len(confirmed)),
        ("confirmed saves present (done, with ratings)", len(confirmed & done_ids & rated)),
        ("done assignments not confirmed to anyone", len(done_ids - confirmed)),
        ("late answers saved (slot still short of k)", tally.late_kept),
        ("late answers refused with a message", len(tally.refused)),
        ("refused answers found in the database", len(set(tally.refused) & (done_ids | rated))),
        ("claims abandoned (reservation left to expire)", tally.abandoned),
        ("unexpected errors", len(tally.errors)),
    ):
        print(f"{label:<52} {value:>8}")
    for err in tally.errors[:5]:
        print("  error:", err)
    ok = (
        max(per_item.values(), default=0) <= args.overlap
        and confirmed <= (done_ids & rated)
        and not (set(tally.refused) & (done_ids | rated))
        and not tally.errors
    )
    print("result:", "OK" if ok else "FAILED")
    if not ok:
        sys.exit(1)


if __name__ == "__main__":
    main()
