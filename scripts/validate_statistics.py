"""Validate the report's statistics on simulated panels with a known truth (issue 28): size, power, coverage.

Every case draws --panels panels and runs them through the report's public code (``rating_estimate``,
``ranking_rows``, ``means_reliability``, ``compare_ratings``), and prints one table row per measure, beside
its target:

* equal models: 4 models of equal mean, 50 samples, 3 reviewers per output (leniency sd 0.39, residual sd 0.71,
  output sd 0.35: a paired difference of variance 0.68); the share of pairs separated (per-pair size) and of
  panels with any pair separated (family-wise error), both at most 5%;
* a 0.2 gap: 4 models evenly spaced over 0.2 in the same setting; the power to separate the best from the worst
  at the samples the report now advises (80% targeted) and at those of the 2.8-standard-error rule it replaced
  (4 x --panels panels each);
* model CIs: how often each model's 95% interval holds its true mean, at 12 and at 100 samples;
* reliability of means: how often the 95% CI of the split-half reliability holds its true value (0.9, 8 models,
  100 samples);
* compare without anchors: ``validate_compare``'s cases "new panel" (false verdicts) and "0.3 drop, default
  tolerance" (power), at --panels panels of 300 samples.

CASES is a list of (name, function): a function takes the number of panels and returns its rows (measure,
value, target), so a further case is one more entry.

* reviewers by model: 4 equal models, each model's outputs mostly rated by its own two of 6 reviewers
  (leniency -0.6 to +0.6), 60 samples; family-wise error and per-pair size of the plain means and of the
  reviewer-adjusted estimate the report now uses on such designs;
* new panel: 4 equal models, 8 reviewers drawn from N(0, 0.4^2) per panel; how often this panel's interval and
  the new panel's interval hold the score of the population of panels.

    .venv/bin/python scripts/validate_statistics.py [--panels 200] [--quick]
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

from validate_compare import run_case  # noqa: E402

from reviewer_app.analysis.decisions import ranking_rows  # noqa: E402
from reviewer_app.analysis.power import Components, samples_needed  # noqa: E402
from reviewer_app.analysis.prepare import bootstrap_weights  # noqa: E402
from reviewer_app.analysis.ranking import rating_estimate  # noqa: E402
from reviewer_app.analysis.reliability import means_reliability  # noqa: E402
from reviewer_app.analysis.reviewer_effects import (  # noqa: E402
    adjust_for_reviewers,
    confounded_mask,
    panel_variance,
)
from tests.support.simulated_panels import estimate_from_scores  # noqa: E402

Row = tuple[str, float | int | None, str]  # measure, value (a share, or a count), target
Case = Callable[[int], list[Row]]

# The statistician's setting (issue 28, point 5): a paired difference of variance 2 (0.125 + 0.65 / 3) = 0.68.
COMPONENTS = Components(sample=0.25, output=0.125, reviewer=0.15, residual=0.5)
K = 3


def _panel(rng: np.random.Generator, means: np.ndarray, samples: int) -> pd.DataFrame:
    """Ratings one by one: every model's output of every sample rated by K of 30 reviewers."""
    c, m = COMPONENTS, len(means)
    s = np.repeat(np.arange(samples), m * K)
    model = np.tile(np.repeat(np.arange(m), K), samples)
    reviewer = rng.integers(0, 30, len(s))
    y = (
        means[model]
        + rng.normal(0, math.sqrt(c.sample), samples)[s]
        + rng.normal(0, math.sqrt(c.output), (samples, m))[s, model]
        + rng.normal(0, math.sqrt(c.reviewer), 30)[reviewer]
        + rng.normal(0, math.sqrt(c.residual), len(s))
    )
    return pd.DataFrame({"sample_id": s, "model_a": [f"m{i}" for i in model], "score": y})


def _separations(means: np.ndarray, samples: int, panels: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Per panel: the number of pairs separated, and whether the best and worst are separated the right way."""
    rng = np.random.default_rng(seed)
    names = [f"m{i}" for i in range(len(means))]
    count, extreme = np.zeros(panels, dtype=int), np.zeros(panels, dtype=bool)
    for p in range(panels):
        est = rating_estimate(
            _panel(rng, means, samples), names, list(range(samples)), bootstrap_weights(samples, 10, rng)
        )
        pairs = ranking_rows(est, "q").pairs
        count[p] = sum(r.separated for r in pairs)
        ends = next(r for r in pairs if {r.model_a, r.model_b} == {names[0], names[-1]})
        extreme[p] = ends.separated and ends.model_a == names[0]
    return count, extreme


def equal_models(panels: int) -> list[Row]:
    count, _ = _separations(np.zeros(4), 50, panels, seed=1)
    return [("per-pair false separations", count.sum() / (6 * panels), "<= 5%"),
            ("family-wise error", float((count > 0).mean()), "<= 5%")]  # fmt: skip


def gap_power(panels: int) -> list[Row]:
    means = np.linspace(0.2, 0.0, 4)
    advice = samples_needed(COMPONENTS, 4, K, 0.2)
    assert advice is not None
    old = math.ceil(2.8**2 * COMPONENTS.difference_variance(K) / 0.2**2)
    _, at_advice = _separations(means, advice, 4 * panels, seed=2)  # a power needs more panels than a size
    _, at_old = _separations(means, old, 4 * panels, seed=3)
    return [("samples advised (statistician: about 240)", advice, "-"),
            ("power at the advice", float(at_advice.mean()), "80%"),
            (f"power at the old rule's {old} samples", float(at_old.mean()), "(was called 80%)")]  # fmt: skip


def _coverage(samples: int, panels: int) -> float:
    rng = np.random.default_rng(4 + samples)
    truth = {"a": 3.2, "b": 3.0, "c": 2.9}
    held = total = 0
    for _ in range(panels):
        est = estimate_from_scores(rng, truth, n_samples=samples, noise_sd=0.8, rounds=400)
        for row in ranking_rows(est, "q").rows:
            total += 1
            held += row.ci_low is not None and row.ci_high is not None and row.ci_low <= truth[row.model] <= row.ci_high
    return held / total


def model_cis(panels: int) -> list[Row]:
    return [(f"model CI coverage, {g} samples", _coverage(g, panels), "95%") for g in (12, 100)]


def reliability(panels: int) -> list[Row]:
    rng = np.random.default_rng(6)
    err = 1.0 / 100  # noise sd 1, 100 samples: the means' error variance
    q = np.linspace(0.0, 1.0, 8)
    q *= np.sqrt(0.9 / 0.1 * err / np.var(q, ddof=1))  # reliability var(q) / (var(q) + err) = 0.9
    means = {f"m{i}": float(x) for i, x in enumerate(q)}
    held = 0
    for p in range(panels):
        row = means_reliability(estimate_from_scores(rng, means, n_samples=100, noise_sd=1.0, rounds=10), "d", f"p{p}")
        held += (
            row is not None and row.ci_low is not None and row.ci_high is not None and row.ci_low <= 0.9 <= row.ci_high
        )
    return [("reliability-of-means CI coverage (truth 0.9)", held / panels, "95%")]


def compare_without_anchors(panels: int) -> list[Row]:
    false, false_any, _, _ = run_case("new panel", panels, 300)
    _, _, power, power_any = run_case("0.3 drop, default tolerance", panels, 300)
    return [("new panel: false verdicts", false, "<= 5%"),
            ("new panel: false changes of any size", false_any, "<= 5%"),
            ("0.3 drop: found (tolerance verdict)", power, "-"),
            ("0.3 drop: found (change of any size)", power_any, "-")]  # fmt: skip


def _by_reviewer(rng: np.random.Generator, leniency: np.ndarray, preference: np.ndarray, samples: int) -> pd.DataFrame:
    """Every model's output of every sample rated by 2 reviewers, reviewer r taking model m's with weight
    preference[m, r]; equal models: sample effect + the reviewer's leniency + noise (unrounded)."""
    m, r = preference.shape
    rows = []
    sample_effect = rng.normal(0, 0.5, samples)
    for s in range(samples):
        for k in range(m):
            for who in rng.choice(r, size=2, replace=False, p=preference[k] / preference[k].sum()):
                rows.append((s, f"m{k}", f"r{who}", 3.0 + sample_effect[s] + leniency[who] + rng.normal(0, 0.8)))
    return pd.DataFrame(rows, columns=["sample_id", "model_a", "reviewer", "score"])


def reviewers_by_model(panels: int) -> list[Row]:
    """Issue 28 point 2: each model's outputs mostly to its own two of 6 reviewers (leniency -0.6 to +0.6)."""
    rng = np.random.default_rng(7)
    leniency = np.array([-0.6, -0.3, 0.0, 0.0, 0.3, 0.6])
    preference = np.full((4, 6), 0.05)
    for k in range(4):
        preference[k, [(2 * k) % 6, (2 * k + 1) % 6]] = 1.0
    names = [f"m{i}" for i in range(4)]
    plain, adjusted = np.zeros(panels, dtype=int), np.zeros(panels, dtype=int)
    for p in range(panels):
        frame = _by_reviewer(rng, leniency, preference, 60)
        w = bootstrap_weights(60, 10, rng)
        plain[p] = sum(r.separated for r in ranking_rows(rating_estimate(frame, names, list(range(60)), w), "q").pairs)
        part, design = adjust_for_reviewers(frame, names)
        est = rating_estimate(part, names, list(range(60)), w)
        est.confounded = confounded_mask(names, design)
        adjusted[p] = sum(r.separated for r in ranking_rows(est, "q").pairs)
    return [("plain means: family-wise error", float((plain > 0).mean()), "(was the report)"),
            ("plain means: per-pair false separations", plain.sum() / (6 * panels), "-"),
            ("reviewer-adjusted: family-wise error", float((adjusted > 0).mean()), "<= 5%"),
            ("reviewer-adjusted: per-pair false separations", adjusted.sum() / (6 * panels), "<= 5%")]  # fmt: skip


def new_panel(panels: int) -> list[Row]:
    """Issue 28 point 4: how often a model's interval holds the score of the population of panels (3.0), with
    8 reviewers drawn from N(0, 0.4^2) per panel and each output rated by 2 of them at random."""
    rng = np.random.default_rng(8)
    names = [f"m{i}" for i in range(4)]
    plain = panel = total = 0
    for _ in range(panels):
        frame = _by_reviewer(rng, rng.normal(0, 0.4, 8), np.ones((4, 8)), 60)
        est = rating_estimate(frame, names, list(range(60)), bootstrap_weights(60, 200, rng))
        spread = panel_variance(frame, names)
        assert spread is not None
        est.panel_var, est.panel_reviewers = spread[1], spread[2]
        for row in ranking_rows(est, "q").rows:
            total += 1
            plain += row.ci_low is not None and row.ci_high is not None and row.ci_low <= 3.0 <= row.ci_high
            panel += (
                row.panel_ci_low is not None
                and row.panel_ci_high is not None
                and row.panel_ci_low <= 3.0 <= row.panel_ci_high
            )
    return [("this panel's CI: coverage of a new panel's score", plain / total, "(this panel's only)"),
            ("new panel's CI: coverage", panel / total, "95%")]  # fmt: skip


CASES: list[tuple[str, Case]] = [
    ("equal models", equal_models),
    ("0.2 gap", gap_power),
    ("model CIs", model_cis),
    ("reliability of means", reliability),
    ("compare without anchors", compare_without_anchors),
    ("reviewers by model", reviewers_by_model),
    ("new panel", new_panel),
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--panels", type=int, default=200, help="panels per case (default 200)")
    parser.add_argument("--quick", action="store_true", help="100 panels per case (Monte Carlo error 2-4 points)")
    args = parser.parse_args()
    panels = 100 if args.quick else args.panels

    def cell(v: float | int | None) -> str:
        if v is None:
            return "–"
        return str(v) if isinstance(v, int) else f"{100 * v:.1f}%"

    head = ("case", "measure", "value", "target", "seconds")
    print(f"{panels} panels per case")
    print(" | ".join(head))
    print("|".join("---" for _ in head))
    for name, case in CASES:
        start = time.perf_counter()
        rows = case(panels)
        seconds = f"{time.perf_counter() - start:.1f}"
        for n, (measure, value, target) in enumerate(rows):
            print(" | ".join((name, measure, cell(value), target, seconds if n == len(rows) - 1 else "")), flush=True)


if __name__ == "__main__":
    main()
