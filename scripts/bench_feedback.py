"""Benchmark production feedback (issue 11): ``import-feedback`` of a million events and ``monitor`` on them.

Writes --events events (default 1,000,000) to a temporary JSONL file and the same events to a CSV file: --models
models (default 4, the last a canary of the first from the middle of the period) over --days days (default
28), 4 scenarios, thumbs feedback, latency and time to first token, a request id on each JSONL event (the CSV
has none: its events are keyed by content). Then runs the real command line, each as its own process, timed
from process start to finish (what a lead waits for), into a fresh database:

* ``import-feedback`` of the JSONL file (target: under 30 s);
* the same again (nothing new: every request id is stored already);
* ``import-feedback`` of the CSV file into another fresh database;
* ``monitor --window 1d --format html`` and ``--window 7d --format json`` with the canary (target: under 5 s).

Each row prints wall seconds, the child's peak RSS and the 1-minute load average before it (the machine may
be shared). SQLite always; PostgreSQL too with --postgres URL (a server URL whose user may create databases:
a database ``bench_feedback`` is made there and dropped after).

    .venv/bin/python scripts/bench_feedback.py [--events 1000000] [--models 4] [--days 28]
                                               [--postgres postgresql+psycopg://postgres@127.0.0.1:5432/test]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
CLI = [sys.executable, "-m", "reviewer_app.cli"]
START_MS = 1_767_225_600_000  # 2026-01-01T00:00:00Z
DAY_MS = 86_400_000


def write_events(folder: Path, events: int, models: int, days: int) -> tuple[Path, Path]:
    """The JSONL and CSV files (same events; the CSV without request ids)."""
    rng = np.random.default_rng(11)
    ts = np.sort(START_MS + rng.integers(0, days * DAY_MS, events))
    model = rng.integers(0, models, events)
    canary = models - 1
    half = START_MS + days // 2 * DAY_MS
    model = np.where((model == canary) & (ts < half), 0, model)  # the canary starts half-way
    rate = np.where(model == canary, 0.66, 0.7)
    feedback = np.where(rng.random(events) < rate, 1, -1)
    latency = np.round(rng.gamma(2.0, 400.0, events) * np.where(model == canary, 0.9, 1.0), 1)
    ttft = np.round(rng.gamma(2.0, 60.0, events), 1)
    scenario = rng.integers(0, 4, events)
    jsonl, csv_path = folder / "feedback.jsonl", folder / "feedback.csv"
    with jsonl.open("w") as j, csv_path.open("w") as c:
        c.write("model,scenario,timestamp,feedback,latency_ms,ttft_ms\n")
        for i in range(events):
            m, s, t, f, lat, tt = model[i], scenario[i], ts[i], feedback[i], latency[i], ttft[i]
            j.write(
                f'{{"model":"model-{m}","scenario":"s{s}","timestamp":{t},"feedback":{f},"latency_ms":{lat},'
                f'"ttft_ms":{tt},"request_id":"req-{i}"}}\n'
            )
            c.write(f"model-{m},s{s},{t},{f},{lat},{tt}\n")
    return jsonl, csv_path


def run(label: str, args: list[str], env: dict[str, str]) -> tuple[str, float, float, float, str]:
    """Run the CLI with ``args`` as a child process: (label, seconds, peak RSS MB, load before, last line)."""
    load = os.getloadavg()[0]
    start = time.perf_counter()
    proc = subprocess.Popen([*CLI, *args], env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - start
    out = proc.stdout.read().decode() if proc.stdout else ""
    err = proc.stderr.read().decode() if proc.stderr else ""
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode:
        raise SystemExit(f"{label} failed ({proc.returncode}):\n{out}\n{err}")
    last = (out.strip().splitlines() or [""])[0]
    return label, seconds, usage.ru_maxrss / 1024, load, last


def bench(
    url: str, urls_csv: str, jsonl: Path, csv_path: Path, out: Path, models: int
) -> list[tuple[str, float, float, float, str]]:
    env = os.environ | {"BLIND_REVIEW_DATABASE_URL": url, "BLIND_REVIEW_DATA_DIR": str(out / "data")}
    env_csv = env | {"BLIND_REVIEW_DATABASE_URL": urls_csv}
    canary = f"model-{models - 1}=model-0"
    return [
        run("import-feedback JSONL", ["import-feedback", str(jsonl)], env),
        run("import-feedback JSONL again", ["import-feedback", str(jsonl)], env),
        run("import-feedback CSV", ["import-feedback", str(csv_path)], env_csv),
        run(
            "monitor 1d html + canary",
            ["monitor", "--window", "1d", "--format", "html", "--out", str(out / "m.html"), "--canary", canary],
            env,
        ),
        run(
            "monitor 7d json + canary",
            ["monitor", "--window", "7d", "--format", "json", "--out", str(out / "m.json"), "--canary", canary],
            env,
        ),
    ]


def _pg_database(admin: str, name: str, create: bool) -> str:
    from sqlalchemy import create_engine

    engine = create_engine(admin, isolation_level="AUTOCOMMIT")
    with engine.connect() as conn:
        conn.exec_driver_sql(f'DROP DATABASE IF EXISTS "{name}"')
        if create:
            conn.exec_driver_sql(f'CREATE DATABASE "{name}"')
    engine.dispose()
    return admin.rsplit("/", 1)[0] + "/" + name


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--models", type=int, default=4)
    parser.add_argument("--days", type=int, default=28)
    parser.add_argument("--postgres", help="PostgreSQL server URL (a database is created and dropped there)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-feedback-") as tmp:
        folder = Path(tmp)
        start = time.perf_counter()
        jsonl, csv_path = write_events(folder, args.events, args.models, args.days)
        size = jsonl.stat().st_size / 1e6
        print(
            f"{args.events:,} events, {args.models} models, {args.days} days: JSONL {size:.0f} MB, CSV "
            f"{csv_path.stat().st_size / 1e6:.0f} MB, written in {time.perf_counter() - start:.1f} s"
        )
        rows = [
            ("sqlite", *r)
            for r in bench(
                f"sqlite:///{folder / 'a.db'}", f"sqlite:///{folder / 'b.db'}", jsonl, csv_path, folder, args.models
            )
        ]
        if args.postgres:
            a, b = (_pg_database(args.postgres, n, True) for n in ("bench_feedback", "bench_feedback_csv"))
            try:
                rows += [("postgres", *r) for r in bench(a, b, jsonl, csv_path, folder, args.models)]
            finally:
                for n in ("bench_feedback", "bench_feedback_csv"):
                    _pg_database(args.postgres, n, False)
    print()
    print("| database | step | seconds | peak RSS MB | load before | output |")
    print("|---|---|---:|---:|---:|---|")
    for db, label, seconds, rss, load, last in rows:
        print(f"| {db} | {label} | {seconds:.2f} | {rss:.0f} | {load:.2f} | {last[:110]} |")
    print("\nTargets: import-feedback of 1,000,000 events under 30 s; monitor under 5 s.")


if __name__ == "__main__":
    main()
