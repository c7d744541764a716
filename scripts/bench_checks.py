"""Benchmark: what automatic checks add to ``load-batch`` (issue 11: less than 50% on 100,000 outputs).

The batch of ``scripts/bench_load.py`` (real AlpacaEval texts from ../shared when it is there, else the small
committed sample; samples x 5 models in 5 scenarios), loaded as it is and again with every sample carrying
checks. Each load runs in a process of its own on a fresh SQLite database (``bench_load.run_load``); the two
alternate, --runs times, so both see the same machine, and each pair gives a ratio. Mixes (--mix):

* ``prose``: max_words 300, not_contains "as an AI", a regex for a closing sentence: checks a team puts on
  free-text answers;
* ``format``: json, max_chars 4000, contains "the": a structured-output scenario (prose outputs fail json at
  its first character, the cheap path);
* ``schema``: json_schema with a small object schema (outputs fail to parse, so validation rarely runs:
  measures the parse path, not the validator).

    python scripts/bench_checks.py [--outputs 100000] [--runs 2] [--mix prose format] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_load import RUBRIC, loadavg, make_batch, run_load  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
MIXES = {
    "prose": [
        {"type": "max_words", "value": 300},
        {"type": "not_contains", "text": "as an AI"},
        {"type": "regex", "pattern": r"[.!?]\s*$", "name": "ends a sentence"},
    ],
    "format": [{"type": "json"}, {"type": "max_chars", "value": 4000}, {"type": "contains", "text": "the"}],
    "schema": [{"type": "json_schema", "schema": {"type": "object", "required": ["answer"]}}],
}


def with_checks(plain: Path, out: Path, checks: list[dict[str, object]]) -> None:
    with plain.open(encoding="utf-8") as src, out.open("w", encoding="utf-8") as dst:
        for line in src:
            record = json.loads(line)
            record["checks"] = checks
            dst.write(json.dumps(record, ensure_ascii=False) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--outputs", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--mix", nargs="+", choices=sorted(MIXES), default=["prose", "format"])
    parser.add_argument("--keep", type=Path, default=Path("/tmp/bench-checks"), help="folder for the batch files")
    args = parser.parse_args()
    args.keep.mkdir(parents=True, exist_ok=True)
    plain = args.keep / f"plain-{args.outputs}.jsonl"
    if not plain.exists():
        make_batch(plain, args.outputs)
    rubric = args.keep / "rubric.toml"
    rubric.write_text(RUBRIC)
    files = {"none": plain}
    for mix in args.mix:
        path = args.keep / f"{mix}-{args.outputs}.jsonl"
        if not path.exists():
            with_checks(plain, path, MIXES[mix])
        files[mix] = path
    print(f"{args.outputs:,} outputs; load average before: {loadavg()}", flush=True)
    times: dict[str, list[float]] = {name: [] for name in files}
    peaks: dict[str, list[float]] = {name: [] for name in files}
    for _ in range(args.runs):
        for name, path in files.items():
            result = run_load(ROOT, path, rubric)
            times[name].append(result["load"])
            peaks[name].append(result["peak"])
            print(f"  {name}: load {result['load']:.2f} s (cpu {result['cpu']:.2f} s), peak {result['peak']:.0f} MB",
                  flush=True)  # fmt: skip
    print()
    print("| checks | checks per output | load s (median) | added vs none (median of run ratios) | peak MB |")
    print("|---|---|---|---|---|")
    for name in files:
        ratios = [t / b for t, b in zip(times[name], times["none"], strict=True)]
        n = 0 if name == "none" else len(MIXES[name])
        print(f"| {name} | {n} | {statistics.median(times[name]):.2f} | {statistics.median(ratios) - 1:+.0%} | "
              f"{max(peaks[name]):.0f} |")  # fmt: skip
    print(f"\nload average after: {loadavg()}")


if __name__ == "__main__":
    main()
