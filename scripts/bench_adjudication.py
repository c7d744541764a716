"""Benchmark the Adjudicate page's work at scale: the queue (every disputed item of a batch, found with the
report's rule on the batch's ratings) and one case, as the page asks for them on every run.

The database is ``bench_report.py --e2e``'s simulated panel (1 Likert dimension, 20 reviewers, 3 ratings per
output, half shown in the app), built once per size under --db-dir and reused. Timed per size: the page's one
call (``open_case``: queue and its first case) the first time after the ratings changed (it finds the disputes)
and again (they are kept per ratings revision), the queue alone, and recording a ruling; --runs times each, the
fastest and the median printed, with the 1-minute load average.

    .venv/bin/python scripts/bench_adjudication.py [--ratings 30000,300000] [--runs 3] [--db-dir /tmp/bench-report]
"""

from __future__ import annotations

import argparse
import functools
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from reviewer_app.adjudication import open_case, queue, rule  # noqa: E402
from reviewer_app.errors import NotFoundError  # noqa: E402
from reviewer_app.people.people import add_reviewer, get_person  # noqa: E402
from scripts.bench_report import build_database  # noqa: E402
from storage.engine import get_engine  # noqa: E402


def timed(fn: Callable[[], object], runs: int) -> list[float]:
    out = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t)
    return out


def cell(xs: list[float]) -> str:
    return f"{min(xs):.2f} (median {statistics.median(xs):.2f})"


def measure(n: int, runs: int, db_dir: Path) -> str:
    """The table's row for a batch of ``n`` ratings (its database built first if need be)."""
    db = db_dir / f"bench-{n}.db"
    if not db.exists():
        db_dir.mkdir(parents=True, exist_ok=True)
        build_database(db, n // 3)
    engine = get_engine(f"sqlite:///{db}")
    try:
        lead = get_person(engine, "bench-lead")
    except NotFoundError:  # the first run on this database
        add_reviewer(engine, "bench-lead", "lead")
        lead = get_person(engine, "bench-lead")
    t = time.perf_counter()
    q, case = open_case(engine, lead, 1, None)  # the first run after the batch's ratings changed: finds them
    first = time.perf_counter() - t
    assert case is not None, "the simulated panel has no dispute"
    page = timed(functools.partial(open_case, engine, lead, 1, None), runs)
    alone = timed(functools.partial(queue, engine, lead, 1), runs)
    ruling = timed(functools.partial(rule, engine, lead, 1, case.token, "3", "benchmark ruling"), runs)
    engine.dispose()
    return f"| {n:,} | {len(q.tokens):,} | {first:.2f} | {cell(page)} | {cell(alone)} | {cell(ruling)} |"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ratings", default="30000,300000", help="comma-separated sizes (ratings)")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--db-dir", type=Path, default=Path("/tmp/bench-report"))
    args = ap.parse_args()
    print(f"load average (1 min): {os.getloadavg()[0]:.2f}")
    print("| ratings | disputes | first page run (s) | later page runs (s) | queue alone (s) | record a ruling (s) |")
    print("|---|---|---|---|---|---|")
    for n in (int(x) for x in args.ratings.split(",")):
        print(measure(n, args.runs, args.db_dir), flush=True)


if __name__ == "__main__":
    main()
