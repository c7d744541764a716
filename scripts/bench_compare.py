"""Benchmark the statistics of a follow-up comparison (issue 10): verdicts and behaviour drift.

Simulated frames in the storage format (``tests.support.version_chains``): a baseline batch and its follow-up
with --outputs outputs each (default 100,000: --scenarios 5 x --models 4 x 5,000 samples), 3 ratings per
output on one 1-5 dimension, and 20% of the baseline's outputs rated again as anchors in the follow-up (so
the follow-up frame has 1.2 x as many ratings). Timed, --repeat times each (all runs printed; the fastest is
the one least disturbed by other work on the machine):

* ``compare``: ``compare_ratings`` with --rounds bootstrap rounds: every scenario, the dimension and "overall",
  every model pair, verdicts, decision intervals and the joint bootstrap;
* ``drift``: ``drift_rows`` on the two outputs frames (texts of 40-400 words, latencies, finish reasons).

The issue's target is a comparison in under 5 s end to end; this measures the statistics part only (no
database, no rendering). Wall and CPU time (this process) per run, and the 1-minute load average before and
after (the machine may be shared).

    .venv/bin/python scripts/bench_compare.py [--outputs 100000] [--scenarios 5] [--models 4]
                                              [--rounds 1000] [--repeat 3]
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

from reviewer_app.aggregation.compare import ANCHOR, compare_ratings  # noqa: E402
from reviewer_app.aggregation.drift import drift_rows  # noqa: E402
from reviewer_app.services.model_pairing import pair_models  # noqa: E402
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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--outputs", type=int, default=100_000, help="outputs per batch (3 ratings each)")
    ap.add_argument("--scenarios", type=int, default=5)
    ap.add_argument("--models", type=int, default=4)
    ap.add_argument("--rounds", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=3, help="times to run each part (default 3)")
    args = ap.parse_args()
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
