"""Benchmark: the REST API against the CLI for the report and the ratings export, at 300,000 ratings.

The database is the report benchmark's simulated panel (``bench_report.build_database``: 100,000 outputs x 3
ratings, 6 models, 5 scenarios, SQLite), built once under --db-dir and reused. Then, alternating, per run:

* CLI: ``python -m reviewer_app.cli report bench --format json --out FILE`` and ``export-ratings bench
  --format csv --out FILE``, each its own process, timed from start to exit (start-up included: what a
  pipeline calling the CLI waits);
* API: the same through ``blind-review serve`` (started once, warm), ``GET /api/v1/batches/bench/report`` and
  ``GET /api/v1/batches/bench/ratings`` through the Python client, timed from request to file written;
* service: the service functions the two call (``batch_report`` + ``write_report``, ``export_ratings``) in this
  process, warm: what neither front end can go below, so the API's own cost is API minus service.

The table shows each run and the best of each; the goal (issue 31) is the API within 10% of the CLI. Both
outputs are compared (the report's JSON apart from ``generated_at``; the export byte for byte).

    .venv/bin/python scripts/bench_api.py [--ratings 300000] [--runs 3] [--db-dir /tmp/bench-report]
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "scripts")]

from bench_report import build_database  # noqa: E402

from reviewer_app.client import BlindReview  # noqa: E402
from tests.support.app_server import Server  # noqa: E402


def cli(db: Path, *args: str) -> float:
    env = dict(os.environ, BLIND_REVIEW_DATABASE_URL=f"sqlite:///{db}", BLIND_REVIEW_DATA_DIR=str(db.parent))
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "reviewer_app.cli", *args], env=env, cwd=ROOT, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    return time.perf_counter() - start


def timed(call: object) -> float:
    start = time.perf_counter()
    call()  # type: ignore[operator]
    return time.perf_counter() - start


def in_process(db: Path, out: Path) -> tuple[float, float]:
    """The report and the export by the service functions, in this process (the engine and imports warm)."""
    from reviewer_app.ratings.export import export_ratings
    from reviewer_app.results.batch_reports import batch_report, write_report
    from storage.engine import get_engine

    engine = get_engine(f"sqlite:///{db}")
    report = timed(lambda: write_report(batch_report(engine, batch="bench"), "json", out / "svc-report.json"))
    export = timed(lambda: export_ratings(engine, "bench", "csv", out / "svc-ratings.csv"))
    return report, export


def token_for(db: Path) -> str:
    from reviewer_app.people.api_tokens import issue_api_token, revoke_api_tokens
    from reviewer_app.people.people import add_reviewer
    from storage.engine import get_engine

    engine = get_engine(f"sqlite:///{db}")
    try:
        add_reviewer(engine, "bench-lead", "lead")
    except Exception:  # noqa: BLE001 - made by an earlier run: a fresh token below
        revoke_api_tokens(engine, "bench-lead")
    token = issue_api_token(engine, "bench-lead", label=f"bench-{time.time_ns()}")[1]
    engine.dispose()
    return token


def same(a: Path, b: Path, *, report: bool) -> bool:
    if not report:
        return a.read_bytes() == b.read_bytes()
    pattern = re.compile(rb'"generated_at": *"[^"]*"')
    return pattern.sub(b"", a.read_bytes()) == pattern.sub(b"", b.read_bytes())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ratings", type=int, default=300_000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--db-dir", type=Path, default=Path("/tmp/bench-report"))
    args = ap.parse_args()
    args.db_dir.mkdir(parents=True, exist_ok=True)
    n_outputs = args.ratings // 3
    db = args.db_dir / f"bench-{n_outputs * 3}-random-labels.db"
    if not db.exists():
        print(f"building {db} (once)...", file=sys.stderr)
        build_database(db, n_outputs)
    token = token_for(db)
    out = args.db_dir / "api-bench"
    out.mkdir(exist_ok=True)
    server = Server(f"sqlite:///{db}", db.parent, out / "serve.log")
    load = os.getloadavg()
    rows: list[tuple[str, str, int, float]] = []
    try:
        with BlindReview(server.url, token, timeout=3600) as br:
            br.me()  # a first request: the server's imports and connections are warm, as in a deployment
            for run in range(1, args.runs + 1):
                steps = [
                    (
                        "report json",
                        "CLI",
                        lambda: cli(db, "report", "bench", "--format", "json", "--out", str(out / "cli-report.json")),
                    ),  # fmt: skip
                    (
                        "report json",
                        "API",
                        lambda: timed(lambda: br.report_file("bench", out / "api-report.json", format="json")),
                    ),  # fmt: skip
                    (
                        "export csv",
                        "CLI",
                        lambda: cli(
                            db, "export-ratings", "bench", "--format", "csv", "--out", str(out / "cli-ratings.csv")
                        ),
                    ),  # fmt: skip
                    (
                        "export csv",
                        "API",
                        lambda: timed(lambda: br.export_ratings("bench", out / "api-ratings.csv")),
                    ),  # fmt: skip
                ]
                if run % 2 == 0:  # alternate who goes first within each pair
                    steps = [steps[1], steps[0], steps[3], steps[2]]
                for what, how, step in steps:
                    seconds = step()
                    rows.append((what, how, run, seconds))
                    print(f"  {what} {how} run {run}: {seconds:.2f} s", file=sys.stderr)
                report_s, export_s = in_process(db, out)
                rows += [("report json", "service", run, report_s), ("export csv", "service", run, export_s)]
    finally:
        server.stop()
    after = os.getloadavg()
    print(f"{n_outputs * 3:,} ratings (SQLite: {db}); report with 1,000 bootstrap rounds")
    print(f"load average (1 min) before {load[0]:.2f}, after {after[0]:.2f} ({os.cpu_count()} CPUs)\n")
    print(f"{'operation':<12} {'via':<8} " + " ".join(f"{'run ' + str(r):>7}" for r in range(1, args.runs + 1))
          + f" {'best':>7}")  # fmt: skip
    best: dict[tuple[str, str], float] = {}
    for what in ("report json", "export csv"):
        for how in ("CLI", "API", "service"):
            times = [s for w, h, _r, s in rows if (w, h) == (what, how)]
            best[(what, how)] = min(times)
            print(f"{what:<12} {how:<8} " + " ".join(f"{t:>7.2f}" for t in times) + f" {min(times):>7.2f}")
    print()
    for what, report in (("report json", True), ("export csv", False)):
        ratio = best[(what, "API")] / best[(what, "CLI")]
        name = "report.json" if report else "ratings.csv"
        identical = same(out / f"cli-{name}", out / f"api-{name}", report=report)
        own = best[(what, "API")] / best[(what, "service")]
        print(
            f"{what}: API / CLI = {ratio:.2f} (best of each; goal <= 1.10); API / service in process = {own:.2f}; "
            f"same output: {'yes' if identical else 'NO'}"
        )


if __name__ == "__main__":
    main()
