"""Benchmark the statistics of a follow-up comparison (issue 10): verdicts and behaviour drift.

Simulated frames in the storage format (``tests.support.version_chains``): a baseline batch and its follow-up
with --outputs outputs each (default 100,000: --scenarios 5 x --models 4 x 5,000 samples), 3 ratings per
output on one 1-5 dimension, and 20% of the baseline's outputs rated again as anchors in the follow-up (so
the follow-up frame has 1.2 x as many ratings). Timed, --repeat times each (all runs printed; the fastest is
the one least disturbed by other work on the machine):

* ``compare``: ``compare_ratings`` with --rounds bootstrap rounds: every scenario, the dimension and "overall",
  every model pair, verdicts, decision intervals and the joint bootstrap;
* ``drift``: ``drift_rows`` on the two outputs frames (texts of 40-400 words, latencies, finish reasons).

The issue's target is a comparison in under 5 s end to end; by default this measures the statistics part
only (no database, no rendering). Wall and CPU time (this process) per run, and the 1-minute load average
before and after (the machine may be shared).

``--e2e`` measures the whole ``compare`` instead, from the database: two batches of --outputs outputs each
loaded with ``load_batch`` into SQLite (kept at --db and reused when it is already there, since building it
takes minutes), 3 ratings per output written with the bulk insert (as ``scripts/bench_report.py`` does), model-0
0.4 points worse in scenario-0 in the candidate, 80% of the candidate's texts equal to the baseline's and a few
refusals. Timed: ``compare_batches`` (reading both batches' frames and texts, the checks, the verdicts with
--rounds bootstrap rounds, the drift) and rendering all four formats. No anchors (the follow-up load is not
part of this benchmark), so the panel-shift half of the statistics is not exercised.

    .venv/bin/python scripts/bench_compare.py [--outputs 100000] [--scenarios 5] [--models 4]
                                              [--rounds 1000] [--repeat 3] [--e2e [--db PATH]]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the panel simulator lives in tests/support, beside the package

from reviewer_app.analysis.prepare import ANCHOR  # noqa: E402
from reviewer_app.versions.compare import compare_ratings  # noqa: E402
from reviewer_app.versions.drift import drift_rows  # noqa: E402
from reviewer_app.versions.pairing import pair_models  # noqa: E402
from tests.support.version_chains import chain  # noqa: E402


def outputs_frame(ratings: pd.DataFrame, rng: np.random.Generator, scale: float) -> pd.DataFrame:
    """One row per output rated in ``ratings`` (anchors left out), with a text, timings and a finish reason."""
    own = ratings if ANCHOR not in ratings else ratings[~ratings[ANCHOR].astype(bool)]
    outs = own[["scenario", "sample_id", "model_a", "repeat_a"]].drop_duplicates()
    outs = outs.rename(columns={"model_a": "model", "repeat_a": "repeat"}).reset_index(drop=True)
    n = len(outs)
    words = (rng.integers(40, 400, n) * scale).astype(int)
    texts = np.array(["word " * k for k in range(int(words.max()) + 1)], dtype=object)[words]
    return outs.assign(
        excluded=False,
        text=texts,
        output_words=words,  # counted at load, as the storage frame has it
        latency_ms=rng.lognormal(7, 0.4, n),
        ttft_ms=rng.lognormal(5, 0.3, n),
        finish_reason=np.where(rng.random(n) < 0.02, "length", "stop"),
    )


def timed(fn, *args, **kwargs):  # type: ignore[no-untyped-def]
    wall, cpu = time.perf_counter(), time.process_time()
    out = fn(*args, **kwargs)
    return out, time.perf_counter() - wall, time.process_time() - cpu


E2E_RUBRIC = """mode = "rating"
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


def build_e2e(path: Path, n_outputs: int, n_scenarios: int, n_models: int) -> None:
    """The two batches ``baseline`` and ``candidate`` in a new SQLite database at ``path``."""
    import orjson
    from sqlalchemy import text
    from sqlmodel import Session

    from reviewer_app.batches.loading import load_batch
    from reviewer_app.people.people import add_reviewer
    from storage.engine import get_engine
    from storage.migrate import migrate
    from storage.repositories.query import bulk_insert, next_ids
    from tests.support.report_panels import item_ids

    folder = path.parent / (path.stem + "-files")
    folder.mkdir(parents=True, exist_ok=True)
    engine = get_engine(f"sqlite:///{path}")
    migrate(engine)
    samples = max(1, n_outputs // (n_scenarios * n_models))
    rng = np.random.default_rng(7)
    keys = [f"s{k}" for k in range(samples * n_scenarios)]
    scen_of = [f"scenario-{k % n_scenarios}" for k in range(len(keys))]
    effect = rng.normal(0, 0.5, len(keys))
    biases = rng.normal(0, 0.3, 20)
    reviewers = [f"rev-{k:02d}" for k in range(20)]
    for who in reviewers:
        add_reviewer(engine, who)
    base_words = rng.integers(15, 120, (len(keys), n_models))
    vocabulary = np.array(["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta"], dtype=object)
    (folder / "rubric.toml").write_text(E2E_RUBRIC, encoding="utf-8")
    for name, worse in (("baseline", 0.0), ("candidate", 0.4)):
        t = time.perf_counter()
        batch_file = folder / f"{name}.jsonl"
        with batch_file.open("wb") as f:
            for i, key in enumerate(keys):
                for m in range(n_models):
                    n = int(base_words[i, m]) + (int(rng.integers(0, 10)) if name == "candidate" and i % 5 == 0 else 0)
                    body = " ".join(vocabulary[(i + m + np.arange(n)) % len(vocabulary)])
                    if name == "candidate" and m == 0 and i % 40 == 0:
                        body = "I'm unable to help with that. " + body
                    meta = {"latency_ms": round(float(rng.lognormal(7, 0.4)), 1), "finish_reason": "stop"}
                    rec = {"sample_id": key, "scenario": scen_of[i], "prompt": f"Question {key}",
                           "model": f"model-{m}", "output": body, "metadata": meta}  # fmt: skip
                    f.write(orjson.dumps(rec) + b"\n")
        load_batch(engine, [batch_file], folder / "rubric.toml", name=name, on_leak="flag", open_now=True)
        with Session(engine) as session:
            conn = session.connection()
            batch_id = int(conn.execute(text("SELECT id FROM batch WHERE name = :n"), {"n": name}).scalar_one())
            people = {str(n): int(i) for n, i in conn.execute(text("SELECT name, id FROM reviewer"))}
            items = item_ids(session, batch_id)
            index = {k: i for i, k in enumerate(keys)}
            rows_a, rows_r = [], []
            first = next_ids(session, "assignment", 3 * len(items))
            aid = first
            stamp = "2026-11-01 09:00:00.000000"
            for (key, model, _b, _r), item in items.items():
                i, m = index[key], int(model.split("-")[1])
                q = 3.0 + 0.1 * m + effect[i] - (worse if (m == 0 and scen_of[i] == "scenario-0") else 0.0)
                for r in rng.choice(20, 3, replace=False):
                    value = int(np.clip(np.rint(q + biases[r] + rng.normal(0, 0.6)), 1, 5))
                    who = people[reviewers[r]]
                    rows_a.append({"id": aid, "batch_id": batch_id, "item_id": item, "reviewer_id": who,
                                   "occurrence": 0, "position": aid - first, "label": f"L{aid}", "swapped": False,
                                   "status": "done", "shown_at": None, "submitted_at": stamp,
                                   "seconds_spent": None})  # fmt: skip
                    rows_r.append({"assignment_id": aid, "batch_id": batch_id, "item_id": item,
                                   "reviewer_id": who, "dimension": "correctness",
                                   "value": str(value), "created_at": stamp, "updated_at": stamp})  # fmt: skip
                    aid += 1
            for k in range(0, len(rows_a), 200_000):
                bulk_insert(session, "assignment", rows_a[k : k + 200_000])
                bulk_insert(session, "rating", rows_r[k : k + 200_000])
            session.commit()
        print(f"built {name}: {len(items):,} outputs, {len(rows_r):,} ratings in {time.perf_counter() - t:.0f} s",
              file=sys.stderr)  # fmt: skip
    engine.dispose()


def main_e2e(args: argparse.Namespace) -> None:
    from reviewer_app.reporting.compare import FORMATS, render_comparison
    from reviewer_app.versions.batch_compare import compare_batches
    from storage.engine import get_engine

    path = Path(args.db)
    if not path.exists():
        build_e2e(path, args.outputs, args.scenarios, args.models)
    engine = get_engine(f"sqlite:///{path}")
    load = os.getloadavg()
    runs = []
    for run in range(args.repeat):
        result, wall, cpu = timed(compare_batches, engine, "baseline", "candidate", rounds=args.rounds, seed=run + 1)
        runs.append(("compare_batches", run + 1, wall, cpu))
        _, wall2, cpu2 = timed(lambda r=result: [render_comparison(r, f) for f in FORMATS])
        runs.append(("render (4 formats)", run + 1, wall2, cpu2))
        runs.append(("end to end", run + 1, wall + wall2, cpu + cpu2))
    load_after = os.getloadavg()
    print(
        f"end to end from SQLite ({path}): {result.shared_samples:,} shared samples, {len(result.comparison.rows)} "
        f"verdict rows, {len(result.drift)} drift rows, {args.rounds:,} rounds"
    )
    print(
        f"load average (1/5/15 min) before: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; "
        f"after: {load_after[0]:.2f} {load_after[1]:.2f} {load_after[2]:.2f} ({os.cpu_count()} CPUs)"
    )
    print()
    print(f"{'part':<20} {'run':>4} {'wall s':>8} {'CPU s':>8}")
    for part, run, wall, cpu in runs:
        print(f"{part:<20} {run:>4} {wall:>8.2f} {cpu:>8.2f}")
    for part in dict.fromkeys(r[0] for r in runs):
        mine = [r for r in runs if r[0] == part]
        print(f"{part:<20} {'best':>4} {min(r[2] for r in mine):>8.2f} {min(r[3] for r in mine):>8.2f}")
    verdicts = pd.Series([r.verdict for r in result.comparison.rows]).value_counts().to_dict()
    flagged = sorted({(d.scenario, d.model, d.metric) for d in result.drift if d.flag})
    print(f"\nverdicts (model-0 0.4 worse in scenario-0): {verdicts}; drift flagged: {flagged}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--outputs", type=int, default=100_000, help="outputs per batch (3 ratings each)")
    ap.add_argument("--scenarios", type=int, default=5)
    ap.add_argument("--models", type=int, default=4)
    ap.add_argument("--rounds", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=3, help="times to run each part (default 3)")
    ap.add_argument("--e2e", action="store_true", help="compare end to end from a SQLite database")
    ap.add_argument("--db", default="/tmp/bench_compare_e2e.db", help="--e2e: the database (built if missing)")
    args = ap.parse_args()
    if args.e2e:
        main_e2e(args)
        return
    samples = max(1, args.outputs // (args.scenarios * args.models))
    models = [f"model-{k}" for k in range(args.models)]
    scenarios = [f"scenario-{k}" for k in range(args.scenarios)]
    rng = np.random.default_rng(20261130)
    t = time.perf_counter()
    base_q = {s: {m: 3.0 + 0.1 * k for k, m in enumerate(models)} for s in scenarios}
    new_q = {s: {m: q - (0.4 if (s, m) == (scenarios[0], models[0]) else 0.0) for m, q in qs.items()}
             for s, qs in base_q.items()}  # fmt: skip
    data = chain(rng, base_q, new_q, n_samples=samples, panel_shift=-0.2)
    base_out, cand_out = outputs_frame(data.baseline, rng, 1.0), outputs_frame(data.candidate, rng, 1.1)
    pairs = pair_models(models, models)
    print(
        f"simulated {len(base_out):,} + {len(cand_out):,} outputs, {len(data.baseline):,} + {len(data.candidate):,} "
        f"ratings in {time.perf_counter() - t:.1f} s",
        file=sys.stderr,
    )
    load = os.getloadavg()
    runs = []
    for run in range(args.repeat):
        result, wall, cpu = timed(
            compare_ratings, data.baseline, data.candidate, data.rubric, pairs, seed=run + 1, rounds=args.rounds
        )
        runs.append(("compare", run + 1, wall, cpu, len(result.rows)))
        drift, wall, cpu = timed(drift_rows, base_out, cand_out, pairs)
        runs.append(("drift", run + 1, wall, cpu, len(drift)))
    load_after = os.getloadavg()
    print(
        f"{len(base_out):,} + {len(cand_out):,} outputs ({args.scenarios} scenarios x {args.models} models x "
        f"{samples:,} samples), {len(data.baseline):,} + {len(data.candidate):,} ratings, {args.rounds:,} rounds"
    )
    print(
        f"load average (1/5/15 min) before: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; "
        f"after: {load_after[0]:.2f} {load_after[1]:.2f} {load_after[2]:.2f} ({os.cpu_count()} CPUs)"
    )
    print()
    print(f"{'part':<8} {'run':>4} {'wall s':>8} {'CPU s':>8} {'rows':>6}")
    for part, run, wall, cpu, n in runs:
        print(f"{part:<8} {run:>4} {wall:>8.2f} {cpu:>8.2f} {n:>6}")
    for part in ("compare", "drift"):
        mine = [r for r in runs if r[0] == part]
        print(f"{part:<8} {'best':>4} {min(r[2] for r in mine):>8.2f} {min(r[3] for r in mine):>8.2f}")
    verdicts = pd.Series([r.verdict for r in result.rows]).value_counts().to_dict()
    print(f"\nverdicts (one version 0.4 worse in one scenario, panel 0.2 stricter): {verdicts}")


if __name__ == "__main__":
    main()
