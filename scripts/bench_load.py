"""Benchmark: load a 100,000-output batch and compare with a bare sqlite3.executemany of the same rows.

Output texts are drawn from the real AlpacaEval outputs in ../shared/data/alpaca_eval_outputs beside the
project (4,830 outputs, so the leak scan and JSON parsing see realistic text); without them it says so and
draws from the 54 outputs committed in tests/fixtures/alpaca_eval. The batch has 20,000 samples x 5 models in
5 scenarios.

    python scripts/bench_load.py [--outputs 100000]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
SHARED = ROOT.parent / "shared" / "data" / "alpaca_eval_outputs"
FIXTURE = ROOT / "tests" / "fixtures" / "alpaca_eval"

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


def make_batch(path: Path, n_outputs: int, n_models: int = 5) -> list[dict[str, object]]:
    rng = random.Random(7)
    texts = real_texts()
    rows = []
    scenarios = ["extraction", "support", "coding", "summaries", "qa"]
    for i in range(n_outputs // n_models):
        prompt = f"Request {i}: " + rng.choice(texts)[:300]
        for m in range(n_models):
            rows.append(
                {
                    "sample_id": f"s{i}",
                    "scenario": scenarios[i % 5],
                    "prompt": prompt,
                    "model": f"cand-{m}",
                    "output": rng.choice(texts),
                    "metadata": {"latency_ms": rng.randint(200, 4000), "output_tokens": rng.randint(5, 900)},
                }
            )
    with path.open("w", encoding="utf-8") as fh:
        for r in rows:
            fh.write(json.dumps(r, ensure_ascii=False) + "\n")
    return rows


def raw_insert(db: Path, rows: list[dict[str, object]]) -> float:
    """The floor: the same output rows (plus samples and items) through sqlite3.executemany, no checks."""
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("CREATE TABLE sample (id INTEGER PRIMARY KEY, key TEXT, scenario TEXT, prompt TEXT)")
    conn.execute("CREATE TABLE output (id INTEGER PRIMARY KEY, sample_id INT, model TEXT, text TEXT, meta TEXT)")
    conn.execute("CREATE TABLE item (id INTEGER PRIMARY KEY, output_id INT)")
    t0 = time.perf_counter()
    with open(db.with_suffix(".src"), "w") as _:
        pass
    samples: dict[str, int] = {}
    srows, orows = [], []
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
    elapsed = time.perf_counter() - t0
    conn.close()
    return elapsed


def raw_insert_same_schema(db: Path, rows: list[dict[str, object]]) -> float:
    """The floor for our own tables (same columns, indexes and constraints): sqlite3.executemany of the
    already-parsed rows, no checks. What we add on top of this is our parsing, checking and scanning."""
    from storage.engine import make_engine
    from storage.migrate import migrate

    engine = make_engine(f"sqlite:///{db}")
    migrate(engine)
    engine.dispose()
    conn = sqlite3.connect(db)
    conn.execute(
        "INSERT INTO batch (id, name, content_hash, mode, overlap, seed, rubric_toml, rubric_json, status, "
        "source_files, created_at) VALUES (1, 'raw', 'x', 'rating', 3, 1, '', '{}', 'open', '[]', "
        "'2026-01-01 00:00:00')"
    )
    conn.executemany(
        "INSERT INTO scenario (id, batch_id, name) VALUES (?, 1, ?)",
        [(i + 1, n) for i, n in enumerate(["extraction", "support", "coding", "summaries", "qa"])],
    )
    conn.executemany("INSERT INTO model (id, name) VALUES (?, ?)", [(m + 1, f"cand-{m}") for m in range(5)])
    conn.commit()
    scen = {n: i + 1 for i, n in enumerate(["extraction", "support", "coding", "summaries", "qa"])}
    t0 = time.perf_counter()
    samples: dict[str, int] = {}
    srows, orows = [], []
    for r in rows:
        key = str(r["sample_id"])
        if key not in samples:
            samples[key] = len(samples) + 1
            srows.append((samples[key], 1, scen[str(r["scenario"])], key, json.dumps(r["prompt"]), None, None, "[]"))
        orows.append(
            (
                len(orows) + 1,
                1,
                samples[key],
                int(str(r["model"])[-1]) + 1,
                0,
                r["output"],
                json.dumps(r["metadata"]),
                "",
                False,
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
            "leak_words, excluded) VALUES (?,?,?,?,?,?,?,?,?)",
            orows,
        )
        conn.executemany(
            "INSERT INTO item (id, batch_id, sample_id, output_a_id, output_b_id, is_gold, gold_json) "
            "VALUES (?,?,?,?,NULL,0,NULL)",
            [(o[0], 1, o[2], o[0]) for o in orows],
        )
    elapsed = time.perf_counter() - t0
    conn.close()
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--outputs", type=int, default=100_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tmpdir = Path(tmp)
        os.environ["BLIND_REVIEW_DATA_DIR"] = str(tmpdir / "data")
        batch = tmpdir / "batch.jsonl"
        rows = make_batch(batch, args.outputs)
        size_mb = batch.stat().st_size / 1e6
        (tmpdir / "rubric.toml").write_text(RUBRIC)

        from reviewer_app.services.batches import load_batch
        from storage.engine import get_engine
        from storage.migrate import migrate

        raw = raw_insert(tmpdir / "raw.db", rows)
        raw_schema = raw_insert_same_schema(tmpdir / "raw_schema.db", rows)
        engine = get_engine(f"sqlite:///{tmpdir / 'br.db'}")
        migrate(engine)
        t0 = time.perf_counter()
        summary = load_batch(engine, [batch], tmpdir / "rubric.toml", name="bench")
        ours = time.perf_counter() - t0
        t0 = time.perf_counter()
        again = load_batch(engine, [batch], tmpdir / "rubric.toml", name="bench")
        noop = time.perf_counter() - t0
        assert summary.outputs == len(rows) and again.already_loaded

    n = len(rows)
    print(f"batch: {n:,} outputs, {size_mb:.0f} MB JSONL, {len(summary.leaks):,} flagged by the leak scan")
    print(f"{'what':<52} {'seconds':>8} {'rows/s':>10}")
    print(f"{'sqlite3.executemany, same rows, bare tables':<52} {raw:>8.2f} {n / raw:>10,.0f}")
    print(f"{'sqlite3.executemany, same rows, our schema+indexes':<52} {raw_schema:>8.2f} {n / raw_schema:>10,.0f}")
    print(f"{'blind-review load-batch (parse, check, scan, write)':<52} {ours:>8.2f} {n / ours:>10,.0f}")
    print(f"{'same load again (no-op: content hash match)':<52} {noop:>8.2f} {'':>10}")
    print(
        f"ratio ours/raw (our schema): {ours / raw_schema:.2f}x, ours/raw (bare tables): {ours / raw:.2f}x "
        f"(target <= 2x); total {ours:.1f} s (target < 10 s)"
    )


if __name__ == "__main__":
    main()
