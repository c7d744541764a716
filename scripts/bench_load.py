"""Benchmark: load a batch and compare with a bare sqlite3.executemany of the same rows; time and peak memory.

Output texts are drawn from the real AlpacaEval outputs in ../shared/data/alpaca_eval_outputs beside the
project (4,830 outputs, so the leak scan and JSON parsing see realistic text); without them it says so and
draws from the 54 outputs committed in tests/fixtures/alpaca_eval. The batch has samples x 5 models in 5
scenarios (100,000 outputs: 154 MB of JSONL).

Each load runs in a process of its own (``load_batch`` on a fresh SQLite database, then the same load again,
a no-op), so its peak RSS is that of the load alone. ``--base DIR`` also runs the loads with the code of
another checkout (e.g. a worktree of the commit before a change), alternating with this one so both see the
same machine; ratios are taken pair by pair. Several ``--outputs`` show how peak memory grows with the file.

    python scripts/bench_load.py [--outputs 100000 300000] [--runs 3] [--base /tmp/base] [--keep /tmp/files]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data" / "alpaca_eval_outputs"
FIXTURE = ROOT / "tests" / "fixtures" / "alpaca_eval"
SCENARIOS = ["extraction", "support", "coding", "summaries", "qa"]

RUBRIC = """mode = "rating"
overlap = 3
seed = 1
[[dimensions]]
name = "correctness"
description = "Right?"
scale = "likert"
min = 1
max = 5
level = "ordinal"
"""

# Run in a child process with the code under test first on sys.path (PYTHONPATH): one load, then the same
# load again (recognised by its content hash), and this process's peak RSS.
CHILD = """
import json, os, sys, time
from pathlib import Path

def high_water():
    # VmHWM, this process's own peak RSS in MB. Not ru_maxrss: on Linux that also counts the parent's RSS at
    # the fork that started this process (the benchmark's parent holds every row for the raw inserts).
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise SystemExit("no VmHWM in /proc/self/status: peak memory is measured on Linux only")
batch, rubric, folder = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
os.environ["BLIND_REVIEW_DATA_DIR"] = str(folder / "data")
from reviewer_app.batches.loading import load_batch
from storage.engine import get_engine
from storage.migrate import migrate
engine = get_engine(f"sqlite:///{folder / 'br.db'}")
migrate(engine)
rss_before = high_water()
t0, c0 = time.perf_counter(), time.process_time()
summary = load_batch(engine, [batch], rubric, name="bench")
load, cpu = time.perf_counter() - t0, time.process_time() - c0
t0 = time.perf_counter()
again = load_batch(engine, [batch], rubric, name="bench")
noop = time.perf_counter() - t0
assert again.already_loaded
print(json.dumps({"load": load, "cpu": cpu, "noop": noop, "outputs": summary.outputs, "leaks": len(summary.leaks),
                  "rss_before": rss_before, "peak": high_water(), "module": __import__("reviewer_app").__file__}))
"""


def real_texts() -> list[str]:
    files = sorted(SHARED.glob("*/model_outputs.json"))
    if not files:
        print(
            f"note: the AlpacaEval outputs are not in {SHARED}; drawing output texts from the small sample in "
            f"{FIXTURE.relative_to(ROOT)} instead (same kind of text, far fewer distinct outputs)",
            file=sys.stderr,
        )
        files = sorted(FIXTURE.glob("*/model_outputs.json"))
    texts: list[str] = []
    for f in files:
        texts += [r["output"] for r in json.loads(f.read_text())]
    return texts


def make_batch(path: Path, n_outputs: int, n_models: int = 5) -> None:
    """The batch file, written a sample at a time (the same file for the same size as earlier versions of
    this script, which built every row in memory first)."""
    rng = random.Random(7)
    texts = real_texts()
    with path.open("w", encoding="utf-8") as fh:
        for i in range(n_outputs // n_models):
            prompt = f"Request {i}: " + rng.choice(texts)[:300]
            for m in range(n_models):
                row = {
                    "sample_id": f"s{i}",
                    "scenario": SCENARIOS[i % 5],
                    "prompt": prompt,
                    "model": f"cand-{m}",
                    "output": rng.choice(texts),
                    "metadata": {"latency_ms": rng.randint(200, 4000), "output_tokens": rng.randint(5, 900)},
                }
                fh.write(json.dumps(row, ensure_ascii=False) + "\n")


def read_rows(path: Path) -> list[dict[str, Any]]:
    with path.open("rb") as fh:
        return [json.loads(line) for line in fh]


def raw_insert(db: Path, rows: list[dict[str, Any]]) -> tuple[float, float]:
    """The floor: the same output rows (plus samples and items) through sqlite3.executemany, no checks."""
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("CREATE TABLE sample (id INTEGER PRIMARY KEY, key TEXT, scenario TEXT, prompt TEXT)")
    conn.execute("CREATE TABLE output (id INTEGER PRIMARY KEY, sample_id INT, model TEXT, text TEXT, meta TEXT)")
    conn.execute("CREATE TABLE item (id INTEGER PRIMARY KEY, output_id INT)")
    t0, c0 = time.perf_counter(), time.process_time()
    samples: dict[str, int] = {}
    srows: list[tuple[Any, ...]] = []
    orows: list[tuple[Any, ...]] = []
    for r in rows:
        key = str(r["sample_id"])
        if key not in samples:
            samples[key] = len(samples) + 1
            srows.append((samples[key], key, r["scenario"], json.dumps(r["prompt"])))
        orows.append((len(orows) + 1, samples[key], r["model"], r["output"], json.dumps(r["metadata"])))
    with conn:
        conn.executemany("INSERT INTO sample VALUES (?,?,?,?)", srows)
        conn.executemany("INSERT INTO output VALUES (?,?,?,?,?)", orows)
        conn.executemany("INSERT INTO item VALUES (?,?)", [(i, i) for i in range(1, len(orows) + 1)])
    elapsed, cpu = time.perf_counter() - t0, time.process_time() - c0
    conn.close()
    return elapsed, cpu


def raw_insert_same_schema(db: Path, rows: list[dict[str, Any]]) -> tuple[float, float]:
    """The floor for our own tables (same columns, indexes and constraints, migrated by this checkout):
    sqlite3.executemany of the already-parsed rows, no checks. The per-output counts and per-item pool keys
    that a load stores are computed before the clock starts, so the floor is the insert alone."""
    from storage.engine import make_engine
    from storage.migrate import migrate
    from storage.models import pool_key, text_counts

    engine = make_engine(f"sqlite:///{db}")
    migrate(engine)
    engine.dispose()
    conn = sqlite3.connect(db)
    conn.execute(
        "INSERT INTO batch (id, name, content_hash, mode, overlap, seed, rubric_toml, rubric_json, status, "
        "source_files, created_at) VALUES (1, 'raw', 'x', 'rating', 3, 1, '', '{}', 'open', '[]', "
        "'2026-01-01 00:00:00')"
    )
    conn.executemany("INSERT INTO scenario (id, batch_id, name) VALUES (?, 1, ?)", list(enumerate(SCENARIOS, 1)))
    conn.executemany("INSERT INTO model (id, name) VALUES (?, ?)", [(m + 1, f"cand-{m}") for m in range(5)])
    conn.commit()
    scen = {n: i + 1 for i, n in enumerate(SCENARIOS)}
    counts = [text_counts(str(r["output"])) for r in rows]
    keys = [pool_key(1, i) for i in range(1, len(rows) + 1)]
    t0, c0 = time.perf_counter(), time.process_time()
    samples: dict[str, int] = {}
    srows: list[tuple[Any, ...]] = []
    orows: list[tuple[Any, ...]] = []
    for r, (n_chars, n_words) in zip(rows, counts, strict=True):
        key = str(r["sample_id"])
        if key not in samples:
            samples[key] = len(samples) + 1
            srows.append((samples[key], 1, scen[str(r["scenario"])], key, json.dumps(r["prompt"]), None, None, "[]"))
        model = int(str(r["model"])[-1]) + 1
        orows.append(
            (
                len(orows) + 1,
                1,
                samples[key],
                model,
                0,
                r["output"],
                json.dumps(r["metadata"]),
                "",
                False,
                n_chars,
                n_words,
            )
        )
    with conn:
        conn.executemany(
            "INSERT INTO sample (id, batch_id, scenario_id, key, prompt_json, reference, criteria, "
            "images_json) VALUES (?,?,?,?,?,?,?,?)",
            srows,
        )
        conn.executemany(
            'INSERT INTO output (id, batch_id, sample_id, model_id, "repeat", text, metadata_json, '
            "leak_words, excluded, n_chars, n_words) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
            orows,
        )
        conn.executemany(
            "INSERT INTO item (id, batch_id, sample_id, output_a_id, output_b_id, is_gold, gold_json, pool_key) "
            "VALUES (?,?,?,?,NULL,0,NULL,?)",
            [(o[0], 1, o[2], o[0], k) for o, k in zip(orows, keys, strict=True)],
        )
    elapsed, cpu = time.perf_counter() - t0, time.process_time() - c0
    conn.close()
    return elapsed, cpu


def run_load(code: Path, batch: Path, rubric: Path) -> dict[str, Any]:
    """One load in a child process importing the code in ``code``; the whole process is timed too."""
    with tempfile.TemporaryDirectory(dir=batch.parent) as tmp:
        env = dict(os.environ, PYTHONPATH=str(code))
        t0 = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-c", CHILD, str(batch), str(rubric), tmp],
            cwd=code,
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        wall = time.perf_counter() - t0
    if done.returncode != 0:
        raise SystemExit(f"the load with the code in {code} failed:\n{done.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    assert Path(result["module"]).resolve().is_relative_to(code.resolve()), result["module"]
    result["process"] = wall
    return result


def loadavg() -> str:
    return Path("/proc/loadavg").read_text().split()[0] if Path("/proc/loadavg").exists() else "?"


def raw_floors(folder: Path, batch: Path) -> tuple[tuple[float, float], tuple[float, float]]:
    rows = read_rows(batch)
    sys.path.insert(0, str(ROOT))
    raw = raw_insert(folder / "raw.db", rows)
    raw_schema = raw_insert_same_schema(folder / "raw_schema.db", rows)
    for db in folder.glob("raw*.db*"):
        db.unlink()
    return raw, raw_schema


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--outputs", type=int, nargs="+", default=[100_000])
    parser.add_argument("--runs", type=int, default=1, help="loads per code and size (alternating with --base)")
    parser.add_argument(
        "--base",
        action="append",
        default=[],
        metavar="[LABEL=]DIR",
        help="a checkout of other code to load with as well (label 'before' unless given); repeatable",
    )
    parser.add_argument("--keep", type=Path, help="keep the batch files in this folder and reuse them")
    parser.add_argument("--no-raw", action="store_true", help="skip the sqlite3.executemany floors")
    args = parser.parse_args()
    codes = [("after", ROOT)]
    for spec in args.base:
        label, _, folder = spec.rpartition("=")
        codes.append((label or "before", Path(folder).resolve()))
    table: list[tuple[str, ...]] = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = args.keep or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        rubric = folder / "rubric.toml"
        rubric.write_text(RUBRIC)
        for n in args.outputs:
            batch = folder / f"batch-{n}.jsonl"
            if not batch.exists():
                make_batch(batch, n)
            size = f"{batch.stat().st_size / 1e6:.0f}"
            raw_schema = raw_schema_cpu = float("nan")
            if not args.no_raw:
                load_avg = loadavg()
                (raw, raw_cpu), (raw_schema, raw_schema_cpu) = raw_floors(folder, batch)
                blank = ("",) * 4
                for what, wall, cpu in (
                    ("sqlite3.executemany, bare tables", raw, raw_cpu),
                    ("sqlite3.executemany, our schema", raw_schema, raw_schema_cpu),
                ):
                    table.append((f"{n:,}", size, what, f"{wall:.2f}", f"{cpu:.2f}", *blank, load_avg))
            results: dict[str, list[dict[str, Any]]] = {label: [] for label, _ in codes}
            for _ in range(args.runs):
                for label, code in codes:
                    load_avg = loadavg()
                    r = run_load(code, batch, rubric)
                    r["loadavg"] = load_avg
                    results[label].append(r)
                    print(
                        f"  {n:,} outputs, {label}: load {r['load']:.2f} s ({r['cpu']:.2f} s CPU), process "
                        f"{r['process']:.2f} s, peak RSS {r['peak']:.0f} MB (load avg {load_avg})",
                        file=sys.stderr,
                    )
            for label, _ in codes:
                rs = results[label]
                load = statistics.median(r["load"] for r in rs)
                cpu = statistics.median(r["cpu"] for r in rs)
                table.append(
                    (
                        f"{n:,}",
                        size,
                        f"load-batch, {label} ({rs[0]['leaks']:,} flagged)",
                        f"{load:.2f}",
                        f"{cpu:.2f}",
                        f"{statistics.median(r['process'] for r in rs):.2f}",
                        f"{statistics.median(r['noop'] for r in rs):.2f}",
                        f"{max(r['peak'] for r in rs):.0f}",
                        f"{load / raw_schema:.2f}x / {cpu / raw_schema_cpu:.2f}x" if raw_schema == raw_schema else "",
                        " ".join(r["loadavg"] for r in rs),
                    )
                )
            for label, _ in codes[1:]:
                pairs = list(zip(results["after"], results[label], strict=True))
                walls = ", ".join(f"{a['load'] / b['load']:.2f}" for a, b in pairs)
                cpus = ", ".join(f"{a['cpu'] / b['cpu']:.2f}" for a, b in pairs)
                table.append((f"{n:,}", size, f"after / {label}, run by run", walls, cpus, "", "", "", "", ""))
    head = (
        "outputs",
        "MB",
        "what",
        "load s",
        "CPU s",
        "process s",
        "reload s",
        "peak RSS MB",
        "/ raw: wall / CPU",
        "load avg",
    )
    widths = [max(len(row[i]) for row in [head, *table]) for i in range(len(head))]
    for row in [head, *table]:
        print("| " + " | ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)) + " |")
    print(
        f"medians of {args.runs} run(s); '/ raw': the load's time / CPU time over the sqlite3.executemany into "
        "our schema. Targets: "
        "<= 10 s at 100,000 outputs, <= 2x that raw insert, peak RSS growing with the largest record, not the file"
    )


if __name__ == "__main__":
    main()
