"""Validate ``blind-review plan`` (issue 30, section 1): is the power it predicts the power the report has?

For three designs, the plan's power (``analysis.power.power``: panels drawn from the variance components and
decided by the report's sign-flip test with Holm, 2,000 panels) is set beside the share of fully simulated
batches in which the report itself (``build_report``: its preparation, reviewer-design check, estimate and
ranking) separates the best model from the worst, in the right direction. Each simulated batch draws every
term of the components: a sample effect, an output's own quality, k reviewers per output drawn from a pool of
30 with their leniency, and each rating's noise, on a continuous scale wide enough never to clip. Target: the
two within 5 points on every design.

    .venv/bin/python scripts/validate_plan.py [--batches 200]
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from reviewer_app.analysis.power import Components, simulated_power  # noqa: E402
from reviewer_app.analysis.report import build_report  # noqa: E402
from reviewer_app.domain.enums import Mode  # noqa: E402
from reviewer_app.domain.rubric import Rubric  # noqa: E402
from tests.support.simulated_panels import continuous  # noqa: E402

POOL = 30
# (name, components, models, samples, k, gap)
DESIGNS = (
    ("4 models, k=1, noisy ratings", Components(0.3, 0.1, 0.1, 0.8), 4, 80, 1, 0.5),
    ("6 models, k=2, varied outputs", Components(0.3, 0.5, 0.05, 0.3), 6, 120, 2, 0.5),
    ("3 models, k=3, lenient reviewers", Components(0.2, 0.2, 0.3, 0.5), 3, 40, 3, 0.5),
)


def _batch(rng: np.random.Generator, comp: Components, models: int, samples: int, k: int, gap: float) -> pd.DataFrame:
    means = np.linspace(gap, 0.0, models)
    leniency = rng.normal(0, math.sqrt(comp.reviewer), POOL)
    s_idx, m_idx = (a.ravel() for a in np.meshgrid(np.arange(samples), np.arange(models), indexing="ij"))
    cells = len(s_idx)
    quality = means[m_idx] + rng.normal(0, math.sqrt(comp.sample), samples)[s_idx]
    quality += rng.normal(0, math.sqrt(comp.output), cells)
    who = np.argsort(rng.random((cells, POOL)), axis=1)[:, :k]
    item = np.repeat(np.arange(cells), k)
    reviewer = who.ravel()
    value = quality[item] + leniency[reviewer] + rng.normal(0, math.sqrt(comp.residual), len(item))
    return pd.DataFrame(
        {
            "scenario": "s",
            "sample_id": np.char.add("x", s_idx[item].astype(str)),
            "item_id": item,
            "is_gold": False,
            "reviewer": np.char.add("r", reviewer.astype(str)),
            "occurrence": 0,
            "position": 0,
            "swapped": False,
            "dimension": "q",
            "value": np.round(value, 4).astype(str),
            "model_a": np.array([f"m{i}" for i in range(models)])[m_idx][item],
            "model_b": None,
            "repeat_a": 0,
            "repeat_b": None,
            "seconds_spent": 30.0,
        }
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--batches", type=int, default=200)
    args = parser.parse_args()
    rubric = Rubric(mode=Mode.RATING, overlap=1, dimensions=(continuous("q", -100.0, 100.0),), seed=1)
    outputs = pd.DataFrame(columns=["scenario", "sample_id", "model", "repeat", "excluded"])
    started = time.perf_counter()
    print(f"{'design':<34} {'samples':>7} {'plan':>6} {'report':>7} {'MC se':>6} {'gap':>6}")
    for name, comp, models, samples, k, gap in DESIGNS:
        predicted = simulated_power(comp, models, samples, k, gap, seed=7).power
        hits = 0
        for b in range(args.batches):
            ratings = _batch(np.random.default_rng(b), comp, models, samples, k, gap)
            report = build_report(ratings, outputs, rubric, batch="v", seed=b, rounds=100, diagnostics=False)
            (scenario,) = report.scenarios
            pair = next(
                p for p in scenario.pairs
                if p.dimension == "q" and {p.model_a, p.model_b} == {"m0", f"m{models - 1}"}
            )  # fmt: skip
            hits += bool(pair.separated and pair.model_a == "m0")
        share = hits / args.batches
        se = math.sqrt(share * (1 - share) / args.batches)
        print(f"{name:<34} {samples:>7} {predicted:>6.1%} {share:>7.1%} {se:>6.1%} {100 * (share - predicted):>+5.1f}")
    print(f"\n{args.batches} simulated batches per design; {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
