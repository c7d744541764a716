"""Validate the judge-assisted ranking (prediction-powered inference, issue 29 section 3) on simulated panels
with a known truth.

Each panel: 4 models of equal mean, 100 samples, a judge that rated every output and the panel's 3 ratings of
each output of a random 20%, 35% or 50% of the samples (``tests/support/judge_panels.py``: the statistician's
variance components, 30 reviewers of random leniency). Five judges: good (noise sd 0.3), noisy (sd 1.0),
biased for one model (+0.5 on m0 only), length-biased (+0.3 per SD of an output-length covariate whose mean
rises with the model: 0, 0.5, 1, 1.5 SD), and pure noise (unrelated to the outputs). Every panel runs through
the module's public code (``judge_assisted_estimate`` then the report's ``ranking_rows``) beside the panel's
ratings alone (``rating_estimate`` on the labelled samples) and the judge's alone. Per judge and share
rated, the table gives:

* coverage: how often a model's 95% interval holds its truth (target >= 93%), and the panel-only one's;
* width: the mean interval width relative to the panel-only one's, the mean lambda, and the effective number
  of panel-rated samples the judge was worth (of the n actually rated);
* false separations of the equal models: per pair and per panel (family-wise), both <= 5%;
* the verdict on the judge's favourite: the share of panels in which m0 is separated from some other model,
  by the judge-assisted ranking and by the judge's ratings alone.

    .venv/bin/python scripts/validate_ppi.py [--panels 200] [--quick]
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from reviewer_app.analysis.decisions import Ranking, ranking_rows  # noqa: E402
from reviewer_app.analysis.judge_ppi import judge_assisted_estimate  # noqa: E402
from reviewer_app.analysis.prepare import bootstrap_weights  # noqa: E402
from reviewer_app.analysis.ranking import rating_estimate  # noqa: E402
from tests.support.judge_panels import JUDGES, Judge, judge_panel  # noqa: E402

FRACTIONS = (0.2, 0.35, 0.5)
SAMPLES = 100
ROUNDS = 400


@dataclass
class Tally:
    """Counts over the panels of one case."""

    intervals: int = 0
    held: int = 0
    panel_held: int = 0
    width: float = 0.0
    panel_width: float = 0.0
    lam: float = 0.0
    effective: float = 0.0
    labelled: float = 0.0
    pairs: int = 0
    false_pairs: int = 0
    panels: int = 0
    any_false: int = 0
    favourite: int = 0
    judge_favourite: int = 0


def _covered(ranking: Ranking, truth: dict[str, float]) -> tuple[int, float]:
    held, width = 0, 0.0
    for row in ranking.rows:
        assert row.ci_low is not None and row.ci_high is not None
        held += row.ci_low <= truth[row.model] <= row.ci_high
        width += row.ci_high - row.ci_low
    return held, width


def _favourite_separated(ranking: Ranking) -> bool:
    return any(p.separated and "m0" in (p.model_a, p.model_b) for p in ranking.pairs)


def run_case(judge: Judge, fraction: float, panels: int, seed: int) -> Tally:
    rng = np.random.default_rng(seed)
    t = Tally()
    for _ in range(panels):
        sim = judge_panel(rng, judge, fraction, samples=SAMPLES)
        truth = dict(zip(sim.models, sim.truth.tolist(), strict=True))
        ppi = judge_assisted_estimate(sim.judge, sim.panel, sim.models, sim.samples, rng, rounds=ROUNDS)
        ranked = ranking_rows(ppi.estimate, "q")
        panel_frame = sim.panel.rename(columns={"model": "model_a"})
        alone = ranking_rows(
            rating_estimate(panel_frame, sim.models, sim.labelled, bootstrap_weights(len(sim.labelled), ROUNDS, rng)),
            "q",
        )
        judge_frame = sim.judge.rename(columns={"model": "model_a"})
        judge_only = ranking_rows(
            rating_estimate(judge_frame, sim.models, sim.samples, bootstrap_weights(len(sim.samples), 10, rng)), "q"
        )
        held, width = _covered(ranked, truth)
        panel_held, panel_width = _covered(alone, truth)
        t.intervals += len(ranked.rows)
        t.held += held
        t.panel_held += panel_held
        t.width += width
        t.panel_width += panel_width
        t.lam += float(ppi.lam.sum())
        t.effective += float(ppi.effective.sum())
        t.labelled += float(ppi.labelled.sum())
        false = sum(p.separated for p in ranked.pairs)
        t.pairs += len(ranked.pairs)
        t.false_pairs += false
        t.panels += 1
        t.any_false += false > 0
        t.favourite += _favourite_separated(ranked)
        t.judge_favourite += _favourite_separated(judge_only)
    return t


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--panels", type=int, default=200, help="panels per case (default 200)")
    parser.add_argument("--quick", action="store_true", help="100 panels per case (Monte Carlo error 1-2 points)")
    args = parser.parse_args()
    panels = 100 if args.quick else args.panels

    def pct(x: float) -> str:
        return f"{100 * x:.1f}%"

    head = (
        "judge",
        "rated",
        "coverage",
        "panel-only coverage",
        "width vs panel",
        "lambda",
        "effective n (of n)",
        "false pairs",
        "any false",
        "m0 separated",
        "m0 sep. judge alone",
        "seconds",
    )
    print(f"{panels} panels per case, {SAMPLES} samples, 4 equal models; targets: coverage >= 93%, false <= 5%")
    print(" | ".join(head))
    print("|".join("---" for _ in head))
    worst = 1.0
    for c, judge in enumerate(JUDGES):
        for f, fraction in enumerate(FRACTIONS):
            start = time.perf_counter()
            t = run_case(judge, fraction, panels, seed=100 * c + f)
            coverage = t.held / t.intervals
            worst = min(worst, coverage)
            cells = (
                judge.name,
                f"{fraction:.0%}",
                pct(coverage),
                pct(t.panel_held / t.intervals),
                f"{t.width / t.panel_width:.2f}",
                f"{t.lam / t.intervals:.2f}",
                f"{t.effective / t.intervals:.0f} ({t.labelled / t.intervals:.0f})",
                pct(t.false_pairs / t.pairs),
                pct(t.any_false / t.panels),
                pct(t.favourite / t.panels),
                pct(t.judge_favourite / t.panels),
                f"{time.perf_counter() - start:.1f}",
            )
            print(" | ".join(cells), flush=True)
    print(f"lowest coverage: {pct(worst)}")


if __name__ == "__main__":
    main()
