"""Benchmark: Next for a reviewer with nothing planned (a pool claim) at 10k, 100k and 1M outputs.

Builds, once per size and database, a rating-mode database (k = 3, no plan) with four batches of the same
size: ``open`` (no slot taken yet), ``adaptive`` (the same with ``allocation = "adaptive"``: every sample held
back, every scenario's state open, so claims release samples by the rule), ``nearfull`` (``--full`` of the
items, 99% by default, already hold k done answers, the rest none: a batch near its end) and, up to
``--complete-max`` outputs, ``complete`` (every item at k: Next finds nothing). Rows go in through the storage
bulk insert, not through JSONL records. Then it times the service path of Next, ``reviews.next_item`` (claim
the slot and mark it shown, one transaction), for ``--reviewers`` reviewers taking turns; each claimed item is
answered (not timed) so the next Next claims again. Every run starts from the same state: the bench reviewers'
assignments and ratings are deleted before it (and the adaptive batch's samples held back again).

With ``--before DIR`` (a worktree of an older commit, e.g. ``git worktree add /tmp/base 0c7315f``) each
measurement runs in a child process with that code on ``PYTHONPATH`` and again with this tree's code,
alternating which goes first, so both see the same machine; the databases are the same (built with this
tree's schema: the older code ignores the new columns and index). The script copies itself into
``DIR/scripts`` when it is not there. The slow older code stops after ``--budget`` seconds per run (never
before 20 claims), so its percentiles rest on fewer claims: the ``n`` column says how many.

    python scripts/bench_claims.py [--sizes 10000,100000,1000000] [--claims 240] [--reviewers 8]
        [--cache-dir /tmp/bench-claims] [--database-url postgresql+psycopg://postgres@127.0.0.1:5432/test]
        [--before /tmp/base-claims] [--rounds 2] [--explain] [--drop]

``--database-url`` adds PostgreSQL: an administrative URL; scratch databases ``bench_claims_<size>`` are
created next to it and kept for the next run (``--drop`` drops them at the end). SQLite files live in
``--cache-dir``. ``--explain`` prints the query plan of the pool walk on each database.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

RUBRIC = """mode = "rating"
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
MODELS = ("m-alpha", "m-beta", "m-gamma", "m-delta")
SCENARIOS = ("qa", "summaries", "code", "support", "data")
CHUNK = 50_000
FILLERS = ("fill-0", "fill-1", "fill-2")


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


# --- building (this tree's code, in the driver's process) ---------------------------------------------


def batches_for(size: int, full: float, complete_max: int) -> list[tuple[str, float]]:
    out = [("open", 0.0), ("adaptive", 0.0), ("nearfull", full)]
    if size <= complete_max:
        out.append(("complete", 1.0))
    return out


def expected_items(size: int, full: float, complete_max: int) -> int:
    return size * len(batches_for(size, full, complete_max))


def put(session: Any, table: str, rows: list[dict[str, Any]]) -> None:
    """The storage bulk insert; on PostgreSQL, COPY (the build of a 1M-output database in minutes, not an
    hour: only the benchmark's set-up, not what it measures)."""
    from storage.repositories.query import bulk_insert

    if not rows or session.get_bind().dialect.name != "postgresql":
        bulk_insert(session, table, rows)
        return
    columns = list(rows[0])
    cursor = session.connection().connection.dbapi_connection.cursor()
    with cursor.copy(f'COPY "{table}" ({", ".join(columns)}) FROM STDIN') as copy:
        for row in rows:
            copy.write_row(tuple(row[c] for c in columns))


def build(url: str, size: int, full: float, complete_max: int) -> None:
    from reviewer_app.batches.rubric_file import parse_rubric_text
    from reviewer_app.domain.enums import BatchStatus
    from reviewer_app.domain.keyed_random import secret_bytes
    from storage.engine import analyze, get_engine, write_session
    from storage.migrate import migrate
    from storage.models import Batch, Scenario, pool_key, text_counts, utcnow
    from storage.repositories.batches.batches import model_ids
    from storage.repositories.query import next_ids

    engine = get_engine(url)
    migrate(engine)
    rubric = parse_rubric_text(RUBRIC)
    adaptive = parse_rubric_text('allocation = "adaptive"\n' + RUBRIC)
    fillers: list[int] = []
    from reviewer_app.people.people import add_reviewer

    for name in FILLERS:
        fillers.append(add_reviewer(engine, name)[0].id)
    t0 = time.perf_counter()
    for name, share in batches_for(size, full, complete_max):
        rng = random.Random(f"{name}:{size}")
        with write_session(engine) as s:
            batch = Batch(
                name=name,
                content_hash=hashlib.sha256(f"{name}:{size}".encode()).hexdigest(),
                mode=rubric.mode,
                overlap=rubric.overlap,
                seed=1000 + size,
                rubric_toml=RUBRIC,
                rubric_json=(adaptive if name == "adaptive" else rubric).to_json(),
                status=BatchStatus.OPEN,  # a batch is loaded closed unless opened (December 2026)
                opened_at=utcnow(),
            )
            s.add(batch)
            s.flush()
            assert batch.id is not None
            scenario_ids = []
            for sc_name in SCENARIOS:
                sc = Scenario(batch_id=batch.id, name=sc_name)
                s.add(sc)
                s.flush()
                assert sc.id is not None
                scenario_ids.append(sc.id)
            models = model_ids(s, list(MODELS))
            n_samples = size // len(MODELS)
            sample_start = next_ids(s, "sample", n_samples)
            out_start = next_ids(s, "output", size)
            item_start = next_ids(s, "item", size)
            for lo in range(0, n_samples, CHUNK // len(MODELS)):
                hi = min(n_samples, lo + CHUNK // len(MODELS))
                samples, outputs, items = [], [], []
                for i in range(lo, hi):
                    samples.append(
                        {
                            "id": sample_start + i,
                            "batch_id": batch.id,
                            "scenario_id": scenario_ids[i % len(SCENARIOS)],
                            "key": f"s{i}",
                            "prompt_json": json.dumps(f"Question {i}: explain the trade-offs of the approach."),
                            "reference": None,
                            "criteria": None,
                            "images_json": "[]",
                        }
                    )
                    for m, model in enumerate(MODELS):
                        n = i * len(MODELS) + m
                        text = f"Answer {i} by {model}. " + "A plausible paragraph of an answer. " * 6
                        n_chars, n_words = text_counts(text)
                        outputs.append(
                            {
                                "id": out_start + n,
                                "batch_id": batch.id,
                                "sample_id": sample_start + i,
                                "model_id": models[model],
                                "repeat": 0,
                                "text": text,
                                "metadata_json": "{}",
                                "leak_words": "",
                                "excluded": False,
                                "shown_text": None,
                                "n_chars": n_chars,
                                "n_words": n_words,
                            }
                        )
                        items.append(
                            {
                                "id": item_start + n,
                                "batch_id": batch.id,
                                "sample_id": sample_start + i,
                                "output_a_id": out_start + n,
                                "output_b_id": None,
                                "is_gold": False,
                                "gold_json": None,
                                "pool_key": pool_key(secret_bytes(batch.secret), item_start + n),
                                "held_back": name == "adaptive",
                            }
                        )
                put(s, "sample", samples)
                put(s, "output", outputs)
                put(s, "item", items)
            full_items = [item_start + n for n in range(size) if rng.random() < share] if share < 1 else None
            if full_items is None:
                full_items = [item_start + n for n in range(size)]
            a_start = next_ids(s, "assignment", len(full_items) * len(fillers))
            for lo in range(0, len(full_items), CHUNK):
                rows = []
                for j, item_id in enumerate(full_items[lo : lo + CHUNK], start=lo):
                    for f, reviewer_id in enumerate(fillers):
                        rows.append(
                            {
                                "id": a_start + j * len(fillers) + f,
                                "batch_id": batch.id,
                                "item_id": item_id,
                                "reviewer_id": reviewer_id,
                                "occurrence": 0,
                                "position": j,
                                "label": f"fill-{j}",
                                "swapped": False,
                                "status": "done",
                            }
                        )
                put(s, "assignment", rows)
            if name == "adaptive":  # every scenario open, nearer or further from a decision: the rule picks
                from reviewer_app.domain.allocation import ScenarioAllocation
                from storage.repositories.batches.allocation import write_states

                held = n_samples // len(SCENARIOS)
                states = [
                    ScenarioAllocation(sc_name, "open", 40, 3, 10 * (1 + i), len(MODELS) * 3, held=held)
                    for i, sc_name in enumerate(SCENARIOS)
                ]
                write_states(s, batch.id, states, utcnow())
        print(f"  built batch {name!r}: {size:,} outputs, {share:.1%} full ({time.perf_counter() - t0:.0f} s)")
    analyze(engine)


def add_bench_reviewers(url: str, count: int) -> None:
    from sqlmodel import select

    from reviewer_app.people.people import add_reviewer
    from storage.engine import get_engine, read_session
    from storage.migrate import migrate
    from storage.models import Reviewer

    engine = get_engine(url)
    try:
        migrate(engine)  # a database cached by an earlier run gets this tree's newer revisions
    except Exception as exc:  # noqa: BLE001 - migrated by a newer tree: its extra columns do not matter here
        print(f"  (not migrated: {exc})")
    with read_session(engine) as s:
        have = set(s.exec(select(Reviewer.name)).all())
    for i in range(count):
        if f"bench-{i:02d}" not in have:
            add_reviewer(engine, f"bench-{i:02d}")


def reset(url: str) -> None:
    """Delete what earlier runs left: every assignment (and rating) of a bench reviewer."""
    from sqlalchemy import text

    from storage.engine import get_engine

    engine = get_engine(url)
    who = "SELECT id FROM reviewer WHERE name LIKE 'bench-%'"
    with engine.begin() as conn:
        conn.execute(text(f"DELETE FROM rating WHERE reviewer_id IN ({who})"))
        conn.execute(text(f"DELETE FROM assignment WHERE reviewer_id IN ({who})"))
        # The adaptive batch holds every sample back again, its states counting no release.
        adaptive = "SELECT id FROM batch WHERE name = 'adaptive'"
        conn.execute(text(f"UPDATE item SET held_back = TRUE WHERE batch_id IN ({adaptive})"))
        conn.execute(text(f"UPDATE pool_scenario SET released = 0 WHERE batch_id IN ({adaptive})"))


def count_items(url: str) -> int | None:
    from sqlalchemy import text

    from storage.engine import get_engine

    try:
        with get_engine(url).connect() as conn:
            return int(conn.execute(text("SELECT count(*) FROM item")).scalar_one())
    except Exception:  # noqa: BLE001 - no schema yet
        return None


# --- one measurement (the code on sys.path: this tree's or the older one's) ------------------------------


def worker(url: str, batch: str, claims: int, reviewers: int, budget: float, least: int, out: Path) -> None:
    from sqlmodel import select

    from reviewer_app.review.reviews import next_item, submit_review
    from storage.engine import get_engine, read_session
    from storage.models import Batch, Reviewer

    engine = get_engine(url)
    with read_session(engine) as s:
        batch_id = s.exec(select(Batch.id).where(Batch.name == batch)).one()
        people = [s.exec(select(Reviewer.id).where(Reviewer.name == f"bench-{i:02d}")).one() for i in range(reviewers)]
    times: list[float] = []
    cpu: list[float] = []  # this process's CPU time per Next: SQLite's work included, PostgreSQL's server not
    nones = 0
    warm = len(people)  # one untimed claim each first: imports, compiled statements, the first connection
    started = time.perf_counter()
    for n in range(warm + claims):
        person = people[n % len(people)]
        c, t = time.process_time(), time.perf_counter()
        view = next_item(engine, batch_id, person)
        elapsed, used = time.perf_counter() - t, time.process_time() - c
        if n >= warm:
            times.append(elapsed)
            cpu.append(used)
        if view is None:
            nones += 1
        else:
            submit_review(engine, person, view.assignment_id, {"correctness": str(1 + n % 5)})
        if len(times) >= least and time.perf_counter() - started > budget:
            break
    out.write_text(json.dumps({"times": times, "cpu": cpu, "nones": nones}))


def explain(url: str, batch: str) -> list[str]:
    """The plan of each pool-walk query one claim runs (captured as sent, then EXPLAINed)."""
    from sqlalchemy import event
    from sqlmodel import select

    from reviewer_app.review.reviews import next_item
    from storage.engine import get_engine, read_session
    from storage.models import Batch, Reviewer

    engine = get_engine(url)
    seen: list[tuple[str, Any]] = []

    def capture(_conn: Any, _cursor: Any, statement: str, parameters: Any, _context: Any, _many: bool) -> None:
        if "pool_key" in statement and statement.lstrip().upper().startswith("SELECT"):
            seen.append((statement, parameters))

    with read_session(engine) as s:
        batch_id = s.exec(select(Batch.id).where(Batch.name == batch)).one()
        person = s.exec(select(Reviewer.id).where(Reviewer.name == "bench-00")).one()
    event.listen(engine, "before_cursor_execute", capture)
    try:
        next_item(engine, batch_id, person)
    finally:
        event.remove(engine, "before_cursor_execute", capture)
    lines = []
    prefix = "EXPLAIN QUERY PLAN " if engine.dialect.name == "sqlite" else "EXPLAIN (ANALYZE, COSTS OFF) "
    with engine.connect() as conn:
        for statement, parameters in seen[:1]:
            lines.append(" ".join(statement.split()))
            for row in conn.exec_driver_sql(prefix + statement, parameters):
                lines.append("    " + " | ".join(str(v) for v in row))
    return lines


# --- the driver --------------------------------------------------------------------------------------------


def run_child(code: Path, url: str, batch: str, args: argparse.Namespace, tmp: Path) -> dict[str, Any]:
    script = code / "scripts" / "bench_claims.py"
    if not script.exists():
        shutil.copy(Path(__file__), script)
    out = tmp / f"out-{time.monotonic_ns()}.json"
    env = dict(os.environ, PYTHONPATH=str(code))
    cmd = [sys.executable, str(script), "--worker", "--url", url, "--batch", batch, "--out", str(out)]
    cmd += ["--claims", str(args.claims if batch != "complete" else args.complete_claims)]
    cmd += ["--reviewers", str(args.reviewers), "--budget", str(args.budget), "--min-claims", str(args.min_claims)]
    subprocess.run(cmd, cwd=code, env=env, check=True)
    result: dict[str, Any] = json.loads(out.read_text())
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="10000,100000,1000000")
    parser.add_argument("--claims", type=int, default=240)
    parser.add_argument("--complete-claims", type=int, default=20)
    parser.add_argument("--reviewers", type=int, default=8)
    parser.add_argument("--full", type=float, default=0.99)
    parser.add_argument("--complete-max", type=int, default=100_000)
    parser.add_argument("--budget", type=float, default=60.0, help="seconds per run before stopping early")
    parser.add_argument("--min-claims", type=int, default=20, help="claims a run makes whatever the budget")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--runs-file", default=None, help="where runs are saved (default: runs.jsonl in the cache)")
    parser.add_argument("--table-only", action="store_true", help="print the table of the runs saved so far")
    parser.add_argument("--cache-dir", default=str(Path(tempfile.gettempdir()) / "bench-claims"))
    parser.add_argument("--database-url", default=None, help="PostgreSQL admin URL: also measure PostgreSQL")
    parser.add_argument("--no-sqlite", action="store_true")
    parser.add_argument("--batches", default="open,adaptive,nearfull,complete")
    parser.add_argument("--before", default=None, help="worktree of the older code to compare with")
    parser.add_argument("--explain", action="store_true")
    parser.add_argument("--drop", action="store_true", help="drop the PostgreSQL scratch databases at the end")
    # the child's side
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--url", help=argparse.SUPPRESS)
    parser.add_argument("--batch", help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.url, args.batch, args.claims, args.reviewers, args.budget, args.min_claims, Path(args.out))
        return

    from sqlalchemy import create_engine, text
    from sqlalchemy.engine import make_url

    from storage.engine import dispose_engines

    sizes = [int(s) for s in args.sizes.split(",")]
    wanted = args.batches.split(",")
    cache = Path(args.cache_dir)
    cache.mkdir(parents=True, exist_ok=True)
    targets: list[tuple[str, int, str]] = []
    admin = None
    for size in sizes:
        if not args.no_sqlite:
            targets.append(("SQLite", size, f"sqlite:///{cache / f'claims-{size}.db'}"))
        if args.database_url and not args.table_only:
            name = f"bench_claims_{size}"
            admin = admin or create_engine(args.database_url, isolation_level="AUTOCOMMIT")
            with admin.connect() as conn:
                if not conn.execute(text("SELECT 1 FROM pg_database WHERE datname = :n"), {"n": name}).first():
                    conn.execute(text(f'CREATE DATABASE "{name}"'))
            url = make_url(args.database_url).set(database=name).render_as_string(hide_password=False)
            targets.append(("PostgreSQL", size, url))

    codes: list[tuple[str, Path]] = [("after", ROOT)]
    if args.before:
        codes.insert(0, ("before", Path(args.before).resolve()))
    # Every run is appended as it ends, so the table can be printed from several invocations.
    saved = Path(args.runs_file) if args.runs_file else cache / "runs.jsonl"
    explains: list[str] = []
    with tempfile.TemporaryDirectory() as tmp_name:
        if not args.table_only:
            tmp = Path(tmp_name)
            os.environ.setdefault("BLIND_REVIEW_DATA_DIR", str(tmp / "data"))
            for db, size, url in targets:
                expected = expected_items(size, args.full, args.complete_max)
                if count_items(url) != expected:
                    dispose_engines()  # count_items' connection: not to the file about to be replaced
                    if db == "SQLite":
                        for suffix in ("", "-wal", "-shm"):
                            Path(url.split("///", 1)[1] + suffix).unlink(missing_ok=True)
                    else:
                        assert admin is not None
                        name = make_url(url).database
                        with admin.connect() as conn:
                            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
                            conn.execute(text(f'CREATE DATABASE "{name}"'))
                    print(f"building {db} at {size:,} outputs ...", flush=True)
                    build(url, size, args.full, args.complete_max)
                add_bench_reviewers(url, args.reviewers)
                for batch, _share in batches_for(size, args.full, args.complete_max):
                    if batch not in wanted:
                        continue
                    for r in range(args.rounds):
                        order = codes if r % 2 == 0 else list(reversed(codes))
                        for code_name, code in order:
                            if batch == "adaptive" and code_name == "before":
                                continue  # an older tree cannot read an adaptive rubric: compare with "open"
                            reset(url)
                            dispose_engines()
                            load = os.getloadavg()[0]
                            got = run_child(code, url, batch, args, tmp)
                            run = {"db": db, "size": size, "batch": batch, "code": code_name, "load": load, **got}
                            with saved.open("a") as f:
                                f.write(json.dumps(run) + "\n")
                            print(
                                f"  {db} {size:,} {batch} {code_name}: {len(got['times'])} claims, "
                                f"p50 {statistics.median(got['times']) * 1000:.1f} ms (load {load:.2f})",
                                flush=True,
                            )
                if args.explain:
                    reset(url)
                    for batch in ("open", "nearfull"):
                        explains.append(f"{db}, {size:,} outputs, batch {batch!r}:")
                        explains += explain(url, batch)
                reset(url)
                dispose_engines()
            if args.drop and admin is not None:
                with admin.connect() as conn:
                    for db, _size, url in targets:
                        if db == "PostgreSQL":
                            conn.execute(text(f'DROP DATABASE IF EXISTS "{make_url(url).database}" WITH (FORCE)'))
    if admin is not None:
        admin.dispose()
    results: dict[tuple[str, int, str, str], list[float]] = {}
    cpus: dict[tuple[str, int, str, str], list[float]] = {}
    nones: dict[tuple[str, int, str, str], int] = {}
    loads: list[float] = []
    for line in saved.read_text().splitlines() if saved.exists() else []:
        run = json.loads(line)
        key = (run["db"], run["size"], run["batch"], run["code"])
        results.setdefault(key, []).extend(run["times"])
        cpus.setdefault(key, []).extend(run.get("cpu", []))
        nones[key] = nones.get(key, 0) + run["nones"]
        loads.append(run["load"])
    if not results:
        return
    batch_order = ["open", "adaptive", "nearfull", "complete"]
    results = dict(
        sorted(
            results.items(),
            key=lambda kv: (kv[0][0] != "SQLite", kv[0][1], batch_order.index(kv[0][2]), kv[0][3] != "before"),
        )
    )
    code_names = sorted({k[3] for k in results}, key=lambda c: c != "before")

    print()
    print(f"Next with no plan (reviews.next_item), {args.reviewers} reviewers taking turns; times in ms")
    print(f"load average (1 min) at the start of each run: {min(loads):.2f}-{max(loads):.2f}")
    print("| database | outputs | batch | code | n | p50 | p95 | max | CPU p50 (n) | found nothing (with warm-up) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for key, times in results.items():
        db, size, batch, code_name = key
        ms = [t * 1000 for t in times]
        cpu = [t * 1000 for t in cpus[key]]
        cpu_cell = f"{statistics.median(cpu):.1f} ({len(cpu)})" if cpu else "-"
        print(
            f"| {db} | {size:,} | {batch} | {code_name} | {len(ms)} | {statistics.median(ms):.1f} | "
            f"{pct(ms, 0.95):.1f} | {max(ms):.1f} | {cpu_cell} | {nones[key]} |"
        )
    print()
    print("| database | batch | code | p50 100k / 10k | p50 1M / 10k |")
    print("|---|---|---|---|---|")
    for db in ("SQLite", "PostgreSQL"):
        for batch in ("open", "nearfull"):
            for code_name in code_names:
                base = results.get((db, 10_000, batch, code_name))
                if not base:
                    continue
                cells = []
                for size in (100_000, 1_000_000):
                    other = results.get((db, size, batch, code_name))
                    cells.append(f"{statistics.median(other) / statistics.median(base):.2f}" if other else "-")
                print(f"| {db} | {batch} | {code_name} | {cells[0]} | {cells[1]} |")
    if "before" in code_names:
        print()
        print("| database | outputs | batch | p50 before / after | p95 before / after |")
        print("|---|---|---|---|---|")
        for (db, size, batch, code_name), times in results.items():
            if code_name != "after" or (db, size, batch, "before") not in results:
                continue
            before = results[(db, size, batch, "before")]
            print(
                f"| {db} | {size:,} | {batch} | {statistics.median(before) / statistics.median(times):.1f}x | "
                f"{pct(before, 0.95) / pct(times, 0.95):.1f}x |"
            )
    if explains:
        print()
        print("\n".join(explains))


if __name__ == "__main__":
    main()
