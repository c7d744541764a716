"""Benchmark: the full report on 100,000 outputs x 3 ratings = 300,000 ratings (6 models, 5 scenarios, 1,000
bootstrap rounds), beside a straightforward per-round pandas groupby bootstrap of the rating means measured in
the same run.

    .venv/bin/python scripts/bench_report.py [--ratings 300000 | --outputs 100000] [--rounds 1000]
                                             [--naive-rounds 50] [--repeat 3]

Every output gets 3 ratings, so --ratings N is --outputs N/3. The report is timed --repeat times (the
fastest run is the one least disturbed by other work on the machine; all are printed) and the 1-minute load
average is printed before the first run. The naive loop is timed on --naive-rounds rounds and scaled to
--rounds (it is linear in rounds).
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

from reviewer_app.aggregation.prepare import bootstrap_weights, sub_rng  # noqa: E402
from reviewer_app.aggregation.ranking import rating_estimate  # noqa: E402
from reviewer_app.aggregation.report import build_report  # noqa: E402
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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    size = ap.add_mutually_exclusive_group()
    size.add_argument("--outputs", type=int, default=100_000, help="outputs to simulate (3 ratings each)")
    size.add_argument("--ratings", type=int, help="ratings to simulate (sets --outputs to a third of it)")
    ap.add_argument("--rounds", type=int, default=1000)
    ap.add_argument("--naive-rounds", type=int, default=50)
    ap.add_argument("--repeat", type=int, default=3, help="times to compute the report (default 3)")
    args = ap.parse_args()
    if args.ratings is not None:
        args.outputs = args.ratings // 3
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
