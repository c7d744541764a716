"""Validate the anytime-valid verdicts (issue 30, section 3): what daily looks do to the report's fixed-sample
test, and what the confidence sequences keep.

Each simulated study: 4 models, samples arriving one by one up to 200, each model's mean rating of a sample =
its quality + a sample effect (sd 0.5) + the output's own quality and the rating noise (sd 0.7), clipped to
the 1-5 scale; the lead looks every 10 samples (20 looks). Per study, for equal models: does any look separate
some pair (family-wise error, target <= 5%), by (a) the report's own fixed-sample test (``pair_stats``, Holm)
read at every look, (b) that test read once at the end, (c) the anytime-valid sequences (``eb_sequence``,
Bonferroni) at every look. For models 0.3 apart (best minus worst, evenly spaced): how often every sequence
holds its true difference at every look (simultaneous coverage, target >= 95%), and how many samples the
sequence needs to separate the best from the worst, beside the fixed test read once.

    .venv/bin/python scripts/validate_anytime.py [--studies 300]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from reviewer_app.analysis.anytime import asymptotic_sequence, eb_sequence  # noqa: E402
from reviewer_app.analysis.decisions import ranking_rows  # noqa: E402
from reviewer_app.analysis.inference import ALPHA  # noqa: E402
from reviewer_app.analysis.prepare import bootstrap_weights  # noqa: E402
from reviewer_app.analysis.ranking import rating_estimate  # noqa: E402

MODELS, SAMPLES, LOOK = 4, 200, 10
SPAN = 4.0  # the 1-5 scale's range: a paired difference lies in [-4, 4]


def _cells(rng: np.random.Generator, gap: float) -> tuple[np.ndarray, np.ndarray]:
    means = np.linspace(3.0 + gap / 2, 3.0 - gap / 2, MODELS)
    cells = means[None, :] + rng.normal(0, 0.5, (SAMPLES, 1)) + rng.normal(0, 0.7, (SAMPLES, MODELS))
    return np.clip(cells, 1.0, 5.0), means


def _fixed_separated(cells: np.ndarray) -> np.ndarray:
    """Which pairs (in ``np.triu_indices`` order) the report's fixed-sample ranking separates on these samples
    (its sign-flip test, Holm over the pairs; the decision does not depend on the bootstrap)."""
    n = cells.shape[0]
    models = [f"m{i}" for i in range(MODELS)]
    samples = [f"x{s}" for s in range(n)]
    frame = pd.DataFrame(
        {"sample_id": np.repeat(samples, MODELS), "model_a": models * n, "score": cells.ravel(), "reviewer": "r"}
    )
    est = rating_estimate(frame, models, samples, bootstrap_weights(n, 2, np.random.default_rng(0)))
    separated = {frozenset((p.model_a, p.model_b)) for p in ranking_rows(est, "q").pairs if p.separated}
    a, b = np.triu_indices(MODELS, 1)
    return np.array([frozenset((models[i], models[j])) in separated for i, j in zip(a, b, strict=True)])


def _sequences(cells: np.ndarray, kind: str = "asymptotic") -> tuple[np.ndarray, np.ndarray]:
    """Each pair's sequence (low, high) after every sample, in score units: arrays (pairs, samples)."""
    a, b = np.triu_indices(MODELS, 1)
    lows, highs = [], []
    for i, j in zip(a, b, strict=True):
        d = cells[:, i] - cells[:, j]
        if kind == "asymptotic":
            low, high = asymptotic_sequence(d, ALPHA / len(a), SAMPLES)
        else:
            low, high = eb_sequence((d + SPAN) / (2 * SPAN), ALPHA / len(a))
            low, high = low * 2 * SPAN - SPAN, high * 2 * SPAN - SPAN
        lows.append(low)
        highs.append(high)
    return np.array(lows), np.array(highs)


def _median(first: np.ndarray) -> str:
    done = first[np.isfinite(first)]
    return f"{np.median(done):.0f}" if len(done) else "-"


def _true_differences(means: np.ndarray, draws: int = 400_000) -> np.ndarray:
    """Each pair's true mean difference of the clipped cells (clipping at 1 and 5 bends the means a little)."""
    rng = np.random.default_rng(99)
    cells = np.clip(means[None, :] + rng.normal(0, 0.5, (draws, 1)) + rng.normal(0, 0.7, (draws, MODELS)), 1, 5)
    a, b = np.triu_indices(MODELS, 1)
    return cells[:, a].mean(axis=0) - cells[:, b].mean(axis=0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--studies", type=int, default=300)
    args = parser.parse_args()
    started = time.perf_counter()
    looks = list(range(LOOK, SAMPLES + 1, LOOK))
    daily = once = anytime = bernstein = 0
    at = np.array(looks) - 1
    for s in range(args.studies):
        cells, _ = _cells(np.random.default_rng(s), 0.0)
        daily += any(_fixed_separated(cells[:t]).any() for t in looks)
        once += bool(_fixed_separated(cells).any())
        low, high = _sequences(cells)
        anytime += bool(((low[:, at] > 0) | (high[:, at] < 0)).any())
        low, high = _sequences(cells, "bernstein")
        bernstein += bool(((low[:, at] > 0) | (high[:, at] < 0)).any())
    n = args.studies
    print("Equal models: share of studies in which some look separates some pair (family-wise error)")
    print(f"  fixed-sample test read at each of {len(looks)} looks: {daily / n:6.1%}")
    print(f"  fixed-sample test read once, at {SAMPLES} samples:      {once / n:6.1%}")
    print(f"  anytime-valid sequences, at every look:         {anytime / n:6.1%}")
    print(f"  empirical-Bernstein sequences, at every look:   {bernstein / n:6.1%}")
    covered = 0
    first_seq, first_fixed, first_eb = [], [], []
    for s in range(args.studies):
        cells, means = _cells(np.random.default_rng(10_000 + s), 0.3)
        truth = np.clip(means, 1, 5)
        a, b = np.triu_indices(MODELS, 1)
        true_diff = np.array(
            [np.mean(np.clip(cells[:, i], 1, 5) - np.clip(cells[:, j], 1, 5)) for i, j in zip(a, b, strict=True)]
        )
        del truth
        low, high = _sequences(cells)
        at = np.array(looks) - 1
        covered += bool(((low[:, at] <= true_diff[:, None]) & (high[:, at] >= true_diff[:, None])).all())
        extreme = int(np.flatnonzero((a == 0) & (b == MODELS - 1))[0])
        hit = np.flatnonzero(low[extreme, at] > 0)
        first_seq.append(looks[hit[0]] if len(hit) else np.inf)
        fixed = [t for t in looks if _fixed_separated(cells[:t])[extreme]]
        first_fixed.append(fixed[0] if fixed else np.inf)
        eb_low, _ = _sequences(cells, "bernstein")
        hit = np.flatnonzero(eb_low[extreme, at] > 0)
        first_eb.append(looks[hit[0]] if len(hit) else np.inf)
    seq, fix, eb = np.array(first_seq), np.array(first_fixed), np.array(first_eb)
    print("Models 0.3 apart (best minus worst):")
    print(f"  every sequence holds its difference at every look: {covered / n:6.1%}")
    print(
        f"  best vs worst separated by {SAMPLES} samples: sequences {np.isfinite(seq).mean():.0%} (median first "
        f"look {_median(seq)}), empirical Bernstein {np.isfinite(eb).mean():.0%}, fixed test at some look "
        f"{np.isfinite(fix).mean():.0%} (median first look {_median(fix)})"
    )
    print(f"\n{n} studies per setting; {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
