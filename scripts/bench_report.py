"""Benchmark the report two ways.

In process (the default): the full report on simulated frames, 100,000 outputs x 3 ratings = 300,000 ratings
(6 models, 5 scenarios, 1,000 bootstrap rounds), beside a straightforward per-round pandas groupby bootstrap
of the rating means measured in the same run.

    .venv/bin/python scripts/bench_report.py [--ratings 300000 | --outputs 100000] [--rounds 1000]
                                             [--naive-rounds 50] [--repeat 3]

Every output gets 3 ratings, so --ratings N is --outputs N/3. The report is timed --repeat times (the
fastest run is the one least disturbed by other work on the machine; all are printed) and the 1-minute load
average is printed before the first run. The naive loop is timed on --naive-rounds rounds and scaled to
--rounds (it is linear in rounds).

End to end (--e2e): a SQLite database with the same simulated panel (1 Likert dimension, 20 reviewers,
output texts of 100-1,100 characters) is built once under --db-dir and reused; then
``python -m reviewer_app.cli report bench --format json --out FILE`` runs as its own process, from process
start to file written, alternating with the same command on another checkout (--base, e.g. a worktree of
the commit before the change, imported through PYTHONPATH) when one is given; wall time and peak RSS
(the child's ru_maxrss) per run, the two JSON files compared byte for byte apart from ``generated_at``.
Then the lead page's report cache: the first and second visit through ``cached_batch_report``.

    .venv/bin/python scripts/bench_report.py --e2e --ratings 300000 [--base /tmp/base] [--runs 3]
                                             [--db-dir /tmp/bench-report]

The base copy of the database is the same file migrated down to the base's newest revision (by this
checkout's revisions), so the old code reads the same rows in its own schema.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the panel simulator lives in tests/support, beside the package

from reviewer_app.analysis.prepare import bootstrap_weights, sub_rng  # noqa: E402
from reviewer_app.analysis.ranking import rating_estimate  # noqa: E402
from reviewer_app.analysis.report import build_report  # noqa: E402
from reviewer_app.reporting.formats import render  # noqa: E402
from tests.support.simulated_panels import rating_panel  # noqa: E402


def naive_bootstrap(frame: pd.DataFrame, rounds: int, seed: int) -> pd.DataFrame:
    """Per round: resample samples with replacement, concatenate their ratings, groupby model mean."""
    rng = np.random.default_rng(seed)
    samples = frame["sample_id"].unique()
    by_sample = frame.set_index("sample_id")
    out = []
    for _ in range(rounds):
        drawn = rng.choice(samples, size=len(samples), replace=True)
        out.append(by_sample.loc[drawn].groupby("model_a")["score"].mean())
    return pd.DataFrame(out)


MODELS = [f"model-{k}" for k in range(6)]
SCENARIOS = [f"scenario-{k}" for k in range(5)]
RUBRIC = """mode = "rating"
overlap = 3
seed = 20261130

[[dimensions]]
name = "correctness"
description = "Is every fact right?"
scale = "likert"
min = 1
max = 5
level = "ordinal"
"""
WORDS = "the total is due on the invoice and the reviewer checks every line of the answer for facts".split()


def simulate(n_outputs: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The panel of the in-process benchmark: 6 models x 5 scenarios, 20 reviewers, 3 ratings per output."""
    n_samples = n_outputs // (len(MODELS) * len(SCENARIOS))
    rng = np.random.default_rng(0)
    quality = {s: {m: 3.0 + 0.1 * i - 0.05 * j for i, m in enumerate(MODELS)} for j, s in enumerate(SCENARIOS)}
    ratings, outputs, _ = rating_panel(
        rng, quality, n_samples=n_samples, biases=[-0.3, -0.1, 0.0, 0.1, 0.3] * 4, overlap=3
    )
    return ratings, outputs


def build_database(path: Path, n_outputs: int) -> None:
    """Load the simulated outputs with ``load_batch`` and write the panel's answers (half of them as shown
    in the app, half as imported) straight into the assignment and rating tables with the bulk insert."""
    import orjson
    from sqlalchemy import text
    from sqlmodel import Session

    from reviewer_app.batches.loading import load_batch
    from reviewer_app.people.people import add_reviewer
    from reviewer_app.review.blinding import draw_labels
    from storage.engine import get_engine
    from storage.migrate import migrate
    from storage.repositories.query import bulk_insert, next_ids
    from tests.support.report_panels import item_ids

    folder = path.parent / (path.stem + "-files")
    folder.mkdir(parents=True, exist_ok=True)
    engine = get_engine(f"sqlite:///{path}")
    migrate(engine)
    t = time.perf_counter()
    ratings, outputs = simulate(n_outputs)
    rng = np.random.default_rng(1)
    batch_file = folder / "batch.jsonl"
    lengths = rng.integers(15, 190, len(outputs))
    words = rng.integers(0, len(WORDS), int(lengths.sum()))
    with batch_file.open("wb") as f:
        start = 0
        for i, (scen, key, model, lat, ttft) in enumerate(
            zip(outputs["scenario"], outputs["sample_id"], outputs["model"], outputs["latency_ms"],
                outputs["ttft_ms"], strict=True)
        ):  # fmt: skip
            n = int(lengths[i])
            text_ = " ".join(WORDS[w] for w in words[start : start + n])
            start += n
            meta = {"latency_ms": round(float(lat), 1), "ttft_ms": round(float(ttft), 1), "output_tokens": n}
            rec = {"sample_id": key, "scenario": scen, "prompt": f"Question {key}", "model": model, "output": text_,
                   "metadata": meta}  # fmt: skip
            f.write(orjson.dumps(rec) + b"\n")
    (folder / "rubric.toml").write_text(RUBRIC, encoding="utf-8")
    print(f"simulated {len(outputs):,} outputs in {time.perf_counter() - t:.1f} s", file=sys.stderr)
    t = time.perf_counter()
    load_batch(engine, [batch_file], folder / "rubric.toml", name="bench", open_now=True)
    print(f"loaded them in {time.perf_counter() - t:.1f} s", file=sys.stderr)
    t = time.perf_counter()
    for who in sorted(ratings["reviewer"].unique()):
        add_reviewer(engine, who)
    with Session(engine) as session:
        conn = session.connection()
        batch_id = int(conn.execute(text("SELECT id FROM batch WHERE name = 'bench'")).scalar_one())
        people = {str(name): int(rid) for name, rid in conn.execute(text("SELECT name, id FROM reviewer")).all()}
        items = pd.DataFrame(
            [(k, a, i) for (k, a, _b, _r), i in item_ids(session, batch_id).items()],
            columns=["sample_id", "model_a", "item"],
        )
        frame = ratings.merge(items, on=["sample_id", "model_a"], validate="many_to_one")
        showings = frame[["item", "reviewer", "position"]].drop_duplicates(["item", "reviewer"])
        first = next_ids(session, "assignment", len(showings))
        aid = np.arange(first, first + len(showings))
        shown = aid % 2 == 0
        stamp = "2026-11-01 09:00:00.000000"
        # Random labels, as the app and imports draw them: queries that walk the (batch, label) index read the
        # assignments at random, as they do on real data (sequential labels hid that).
        labels = draw_labels(random.Random(1), len(showings))
        rows = [
            {"id": int(a), "batch_id": batch_id, "item_id": int(i), "reviewer_id": people[r], "occurrence": 0,
             "position": int(p), "label": lab, "swapped": False, "status": "done",
             "shown_at": stamp if s else None, "submitted_at": stamp, "seconds_spent": 30.0 if s else None}
            for a, i, r, p, s, lab in zip(aid, showings["item"], showings["reviewer"], showings["position"], shown,
                                          labels, strict=True)
        ]  # fmt: skip
        for k in range(0, len(rows), 200_000):
            bulk_insert(session, "assignment", rows[k : k + 200_000])
        frame = frame.merge(showings.assign(aid=aid)[["item", "reviewer", "aid"]], on=["item", "reviewer"])
        rows = [
            {"assignment_id": int(a), "batch_id": batch_id, "item_id": int(i), "reviewer_id": people[r],
             "dimension": d, "value": v, "created_at": stamp, "updated_at": stamp}
            for a, i, r, d, v in zip(frame["aid"], frame["item"], frame["reviewer"], frame["dimension"],
                                     frame["value"], strict=True)
        ]  # fmt: skip
        for k in range(0, len(rows), 200_000):
            bulk_insert(session, "rating", rows[k : k + 200_000])
        session.commit()
    engine.dispose()
    print(f"wrote {len(ratings):,} ratings in {time.perf_counter() - t:.1f} s", file=sys.stderr)


def base_copy(path: Path, base: Path) -> Path:
    """The database for the base checkout: the same rows, migrated down (by this checkout's revisions) to the
    base's newest revision, so the old code reads its own schema."""
    import shutil

    from alembic import command

    from storage.engine import get_engine
    from storage.migrate import alembic_config

    head = max(
        f.name.split("_", 1)[0] for f in (base / "storage/migrations/versions").glob("[0-9][0-9][0-9][0-9]_*.py")
    )
    copy = path.with_name(f"{path.stem}-base-{head}.db")
    if not copy.exists():
        shutil.copyfile(path, copy)
        engine = get_engine(f"sqlite:///{copy}")
        command.downgrade(alembic_config(engine), head)
        engine.dispose()
    return copy


def run_report(checkout: Path | None, db: Path, out: Path) -> tuple[float, float, int]:
    """One ``report`` process: wall seconds from start to exit (the file written), CPU seconds (user +
    system: what the process itself needed, whatever else the machine was doing) and peak RSS in KiB."""
    env = dict(os.environ, BLIND_REVIEW_DATABASE_URL=f"sqlite:///{db}", BLIND_REVIEW_DATA_DIR=str(db.parent))
    if checkout is not None:
        env["PYTHONPATH"] = str(checkout)
    cmd = [sys.executable, "-m", "reviewer_app.cli", "report", "bench", "--format", "json", "--out", str(out)]
    t = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, cwd=checkout or ROOT, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode:
        raise SystemExit(f"report failed ({proc.returncode}): {' '.join(cmd)}")
    return wall, usage.ru_utime + usage.ru_stime, int(usage.ru_maxrss)


def same_report(a: Path, b: Path) -> bool:
    """Equal bytes once the one clock-dependent field is blanked."""
    pattern = re.compile(rb'"generated_at": *"[^"]*"')
    return pattern.sub(b"", a.read_bytes()) == pattern.sub(b"", b.read_bytes())


def cached_visits(db: Path) -> list[tuple[float, float]]:
    """The lead page's first and second visit to the results, through the cache the page uses: (wall, CPU)
    seconds of each, in this process (the second is the data-revision query and a dictionary lookup)."""
    from reviewer_app.results.report_cache import ReportCache
    from storage.engine import get_engine

    engine = get_engine(f"sqlite:///{db}")
    cache = ReportCache()
    with engine.connect() as conn:
        batch_id = int(conn.exec_driver_sql("SELECT id FROM batch WHERE name = 'bench'").scalar_one())
    visits = []
    for _ in range(3):
        t, c = time.perf_counter(), time.process_time()
        cache.report(engine, batch_id, rounds=1000)
        visits.append((time.perf_counter() - t, time.process_time() - c))
    assert cache.builds == 1
    return visits


def main_e2e(args: argparse.Namespace) -> None:
    n_outputs = args.outputs
    args.db_dir.mkdir(parents=True, exist_ok=True)
    db = args.db_dir / f"bench-{n_outputs * 3}-random-labels.db"  # built before 1 Dec 2026: sequential labels
    if not db.exists():
        build_database(db, n_outputs)
    base_db = base_copy(db, args.base) if args.base else None
    load = os.getloadavg()
    rows: list[tuple[str, int, float, float, int]] = []
    outs = {}
    for run in range(args.runs):
        order = [("after", None, db)] + ([("before", args.base, base_db)] if args.base else [])
        for label, checkout, path in order if run % 2 == 0 else order[::-1]:
            assert path is not None
            out = args.db_dir / f"report-{label}.json"
            wall, cpu, rss = run_report(checkout, path, out)
            outs[label] = out
            rows.append((label, run + 1, wall, cpu, rss))
            print(f"  {label} run {run + 1}: {wall:.2f} s, CPU {cpu:.2f} s, {rss / 1024:,.0f} MiB", file=sys.stderr)
    load_after = os.getloadavg()
    visits = [] if args.skip_cache else cached_visits(db)
    print(f"{n_outputs:,} outputs x 3 = {n_outputs * 3:,} ratings (SQLite: {db}); 1,000 bootstrap rounds")
    print(f"load average (1/5/15 min) before: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; "
          f"after: {load_after[0]:.2f} {load_after[1]:.2f} {load_after[2]:.2f} ({os.cpu_count()} CPUs)")  # fmt: skip
    print()
    print(f"{'code':<8} {'run':>4} {'wall s':>8} {'CPU s':>8} {'peak RSS MiB':>13}")
    for label, run, wall, cpu, rss in rows:
        print(f"{label:<8} {run:>4} {wall:>8.2f} {cpu:>8.2f} {rss / 1024:>13,.0f}")
    best: dict[str, tuple[float, float]] = {}
    for label in dict.fromkeys(r[0] for r in rows):
        mine = [r for r in rows if r[0] == label]
        best[label] = (min(r[2] for r in mine), min(r[3] for r in mine))
        rss_max = max(r[4] for r in mine)
        print(f"{label:<8} {'best':>4} {best[label][0]:>8.2f} {best[label][1]:>8.2f} {rss_max / 1024:>13,.0f}")
    if args.base:
        (bw, bc), (aw, ac) = best["before"], best["after"]
        same = same_report(outs["before"], outs["after"])
        print(f"\nbefore/after, best of each: wall {bw / aw:.1f}x, CPU {bc / ac:.1f}x; "
              f"same JSON apart from generated_at: {'yes' if same else 'NO'}")  # fmt: skip
    if visits:
        (w1, c1), *later = visits
        print(f"lead page cache (ReportCache.report): first visit {w1:.2f} s wall / {c1:.2f} s CPU; then "
              + ", ".join(f"{w * 1000:.0f} ms wall / {c * 1000:.0f} ms CPU" for w, c in later))  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    size = ap.add_mutually_exclusive_group()
    size.add_argument("--outputs", type=int, default=100_000, help="outputs to simulate (3 ratings each)")
    size.add_argument("--ratings", type=int, help="ratings to simulate (sets --outputs to a third of it)")
    ap.add_argument("--rounds", type=int, default=1000)
    ap.add_argument("--naive-rounds", type=int, default=50)
    ap.add_argument("--repeat", type=int, default=3, help="times to compute the report (default 3)")
    ap.add_argument("--e2e", action="store_true", help="time `blind-review report` processes on a database")
    ap.add_argument("--base", type=Path, help="--e2e: a checkout of the code to compare with (PYTHONPATH)")
    ap.add_argument("--runs", type=int, default=3, help="--e2e: report processes per checkout (default 3)")
    ap.add_argument("--skip-cache", action="store_true", help="--e2e: leave out the lead page's cached visits")
    ap.add_argument("--db-dir", type=Path, default=Path("/tmp/bench-report"), help="--e2e: where databases live")
    args = ap.parse_args()
    if args.ratings is not None:
        args.outputs = args.ratings // 3
    if args.e2e:
        main_e2e(args)
        return
    models = [f"model-{k}" for k in range(6)]
    scenarios = [f"scenario-{k}" for k in range(5)]
    n_samples = args.outputs // (len(models) * len(scenarios))
    rng = np.random.default_rng(0)
    quality = {s: {m: 3.0 + 0.1 * i - 0.05 * j for i, m in enumerate(models)} for j, s in enumerate(scenarios)}
    t = time.perf_counter()
    ratings, outputs, rubric = rating_panel(
        rng, quality, n_samples=n_samples, biases=[-0.3, -0.1, 0.0, 0.1, 0.3] * 4, overlap=3
    )
    t_sim = time.perf_counter() - t

    load = os.getloadavg()[0]
    runs = []
    for _ in range(max(1, args.repeat)):
        t = time.perf_counter()
        report = build_report(ratings, outputs, rubric, batch="bench", seed=1, rounds=args.rounds)
        runs.append(time.perf_counter() - t)
    t_report = min(runs)
    t = time.perf_counter()
    for fmt in ("json", "csv", "md", "html"):
        render(report, fmt)
    t_render = time.perf_counter() - t

    one = ratings[ratings["scenario"] == scenarios[0]].assign(score=lambda f: f["value"].astype(float))
    samples = sorted(one["sample_id"].unique())
    t = time.perf_counter()
    rating_estimate(one, models, samples, bootstrap_weights(len(samples), args.rounds, sub_rng(1, "bench")))
    t_vec = time.perf_counter() - t
    t = time.perf_counter()
    naive_bootstrap(one, args.naive_rounds, seed=1)
    t_naive = (time.perf_counter() - t) * args.rounds / args.naive_rounds

    n_out = len(outputs)
    print(
        f"{n_out:,} outputs x 3 ratings = {len(ratings):,} ratings; {len(models)} models, {len(scenarios)} scenarios, "
        f"{n_samples:,} samples per scenario, {args.rounds:,} bootstrap rounds (simulated in {t_sim:.1f} s)"
    )
    print(f"1-minute load average before the first run: {load:.2f} ({os.cpu_count()} CPUs)")
    print(f"report runs: {', '.join(f'{r:.2f}' for r in runs)} s (the fastest is shown below)")
    print()
    print(f"{'what':<62} {'seconds':>9}")
    print(f"{'-' * 62} {'-' * 9}")
    print(f"{'full report (agreement, rankings, composite, diagnostics, ...)':<62} {t_report:>9.2f}")
    print(f"{'render json + csv + md + html':<62} {t_render:>9.2f}")
    print(f"{'rating bootstrap, 1 scenario, vectorised (weights @ sums)':<62} {t_vec:>9.3f}")
    label = f"rating bootstrap, 1 scenario, pandas groupby loop (x{args.rounds // args.naive_rounds})"
    print(f"{label:<62} {t_naive:>9.2f}")
    print(f"{'  naive loop for all 5 scenarios (estimated)':<62} {t_naive * len(scenarios):>9.2f}")
    print()
    print(
        f"speed-up of the bootstrap: {t_naive / t_vec:,.0f}x; full report under 5 s: "
        f"{'yes' if t_report + t_render < 5 else 'NO'}"
    )


if __name__ == "__main__":
    main()
