"""Validate ``compare``'s verdicts on simulated panels with a known truth (issue 28, point 1).

Each case simulates --panels pairs of batches (``tests.support.version_chains``): one scenario of --samples
samples, two models ("m", "o"), 2 of 4 reviewers per output (noise sd 0.6 on a 1-5 scale, reviewers' leniency sd
0.3), a new panel of 4 reviewers in the follow-up. Per case, the share of panels with:

* false verdict: a regression or improvement of a model that did not change (any of its rows: the dimension
  and "overall");
* false change: a significant change of any size ("change") of a model that did not change;
* power: every row of the changed model a regression (tolerance verdict) / "worse" (change of any size).

Cases: the same models with a new panel; a new panel 0.3 points stricter; a real 0.3 drop of "m" at the default
tolerance (0.25 points, 0.05 overall) and at tolerance 0; and, anchored, a new panel 0.3 stricter with half of
the baseline's outputs shown again (anchored compare must keep no false verdict). The "before" columns are the
code before issue 28 (verdicts on each row's 95% interval given the panel, no Holm), measured on these panels
(100 each) with the same script's cases: they are printed, not recomputed.

    .venv/bin/python scripts/validate_compare.py [--panels 100] [--samples 300]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from reviewer_app.versions.compare import compare_ratings  # noqa: E402
from reviewer_app.versions.pairing import pair_models  # noqa: E402
from tests.support.version_chains import chain  # noqa: E402

PAIRS = pair_models(["m", "o"], ["m", "o"])
CHANGES = ("regression", "improvement")
# (case, false verdict, power) on the code before issue 28, 100 panels each
BEFORE = {
    "new panel": (0.24, None),
    "new panel 0.3 stricter": (0.58, None),
    "0.3 drop, default tolerance": (0.18, 0.46),
    "0.3 drop, tolerance 0": (0.67, 0.83),
    "anchored, new panel 0.3 stricter": (0.0, None),
}


def run_case(name: str, panels: int, samples: int) -> tuple[float, float, float | None, float | None]:
    drop = 0.3 if "drop" in name else 0.0
    shift = -0.3 if "stricter" in name else 0.0
    tol, share = (0.0, 0.0) if "tolerance 0" in name else (0.25, 0.05)
    anchors = 0.5 if name.startswith("anchored") else 0.0
    false = false_any = found = found_any = 0
    for k in range(panels):
        data = chain(
            np.random.default_rng(5000 + k),
            {"x": {"m": 3.2, "o": 3.0}},
            {"x": {"m": 3.2 - drop, "o": 3.0}},
            n_samples=samples,
            n_reviewers=4,
            overlap=2,
            bias_sd=0.3,
            noise_sd=0.6,
            anchor_share=anchors,
            panel_shift=shift,
        )
        rows = compare_ratings(
            data.baseline, data.candidate, data.rubric, PAIRS, seed=k, rounds=20, tolerance=tol, tolerance_share=share
        ).rows
        unchanged = [r for r in rows if drop == 0 or r.model == "o"]
        false += any(r.verdict in CHANGES for r in unchanged)
        false_any += any(r.change != "not significant" for r in unchanged)
        if drop:
            dropped = [r for r in rows if r.model == "m"]
            found += all(r.verdict == "regression" for r in dropped)
            found_any += all(r.change == "worse" for r in dropped)
    power = (found / panels, found_any / panels) if drop else (None, None)
    return false / panels, false_any / panels, power[0], power[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--panels", type=int, default=100)
    parser.add_argument("--samples", type=int, default=300)
    args = parser.parse_args()

    def pct(v: float | None) -> str:
        return "–" if v is None else f"{100 * v:.0f}%"

    head = ("case", "false verdict", "before", "false change", "power", "before", "power (any size)", "seconds")
    print(" | ".join(head))
    print("|".join("---" for _ in head))
    for name, (false_before, power_before) in BEFORE.items():
        start = time.perf_counter()
        false, false_any, power, power_any = run_case(name, args.panels, args.samples)
        cells = (name, pct(false), pct(false_before), pct(false_any), pct(power), pct(power_before), pct(power_any),
                 f"{time.perf_counter() - start:.1f}")  # fmt: skip
        print(" | ".join(cells), flush=True)


if __name__ == "__main__":
    main()
