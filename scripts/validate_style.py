"""Style control against simulations with a known truth (issue 32, section 1).

Rating mode: three models of equal quality, one of which ("verbose") writes 200 more words; every rating is
3 + 0.5 per 100 words + the sample's difficulty + noise, so "verbose" wins only by length. Pairwise mode: the
same outputs, each pair judged 3 times with P(first wins) = sigmoid(0.8 x z(relative length difference)).
A fourth setting gives "strong" a real edge (0.4 points; 0.5 log-odds) at the same length.

Per setting, over --studies simulated studies (300 samples, the report's 1,000-round cluster bootstrap):

* how often "verbose" tops the ranking as rated, and how often it still does under style control (1/3 is chance
  among three equal models);
* how often the style-controlled interval of "verbose" lies wholly above another model's controlled score
  (a false "better" after control; the 95% intervals make ~2.5% per side a fair rate for one comparison);
* the coverage of the length coefficient's 95% interval (rating: its true 0.5 points per 100 words; pairwise:
  0.8 log-odds per SD), and the mean controlled gap between "verbose" and "plain" (truth 0);
* the time of one style-controlled ranking at the size of a 300,000-rating scenario.

    .venv/bin/python scripts/validate_style.py [--studies 200]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from reviewer_app.analysis.prepare import bootstrap_weights, sub_rng  # noqa: E402
from reviewer_app.analysis.ranking import rating_estimate  # noqa: E402
from reviewer_app.analysis.style_control import style_features, style_ranking  # noqa: E402
from tests.analysis.test_style_control import MODELS, _outputs, _rating_frame  # noqa: E402

ROUNDS = 1000


def rating_study(seed: int, strong: float) -> dict[str, float]:
    rng = np.random.default_rng(seed)
    outputs = _outputs(300, {"verbose": 200}, rng)
    frame = _rating_frame(outputs, {"strong": strong}, 0.5, rng)
    samples = sorted(frame["sample_id"].unique())
    w = bootstrap_weights(len(samples), ROUNDS, sub_rng(seed, "samples", "qa"))
    est = rating_estimate(frame, MODELS, samples, w)
    features = style_features(outputs, samples, MODELS)
    assert features is not None
    return summarise(style_ranking(est, features, w, scenario="qa", dimension="overall", unit="points"), 0.5)


def pairwise_study(seed: int, strong: float) -> dict[str, float]:
    from tests.analysis.test_style_control import _pairwise  # the same simulation as the tests

    return summarise(_pairwise({"verbose": 200}, {"strong": strong}, per_sd=0.8, seed=seed, rounds=ROUNDS), 0.8)


def summarise(ranked: object, true_length: float) -> dict[str, float]:
    rows = {r.model: r for r in ranked.rows}  # type: ignore[attr-defined]
    verbose, plain = rows["verbose"], rows["plain"]
    others = [r for m, r in rows.items() if m != "verbose"]
    length = next(c for c in ranked.coefficients if c.feature == "length")  # type: ignore[attr-defined]
    return {
        "raw_top": float(verbose.rank == 1),
        "controlled_top": float(verbose.controlled_rank == 1),
        "false_better": float(any(verbose.ci_low > o.controlled for o in others if o.model == "plain")),
        "covered": float(length.ci_low <= true_length <= length.ci_high),
        "gap": verbose.controlled - plain.controlled,
        "strong_top": float(rows["strong"].controlled_rank == 1),
    }


def timing() -> tuple[float, float]:
    """One scenario of a 300,000-rating batch (5 scenarios): 20,000 samples x 3 models x 1-2 ratings ~ 60,000
    ratings here, rating mode; and pairwise at 5,000 samples x 3 pairs x 3 judgements."""
    rng = np.random.default_rng(0)
    outputs = _outputs(20_000, {"verbose": 200}, rng)
    frame = _rating_frame(outputs, {}, 0.5, rng)
    samples = sorted(frame["sample_id"].unique())
    w = bootstrap_weights(len(samples), ROUNDS, sub_rng(0, "samples", "qa"))
    est = rating_estimate(frame, MODELS, samples, w)
    features = style_features(outputs, samples, MODELS)
    assert features is not None
    start = time.perf_counter()
    style_ranking(est, features, w, scenario="qa", dimension="overall", unit="points")
    rating_s = time.perf_counter() - start
    from tests.analysis import test_style_control as t

    start = time.perf_counter()
    t._pairwise(
        {"verbose": 200}, {}, per_sd=0.8, seed=1, rounds=ROUNDS
    )  # includes simulating and the BT fit: an upper bound
    return rating_s, time.perf_counter() - start


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--studies", type=int, default=200)
    args = ap.parse_args()
    load = os.getloadavg()[0]
    print(f"{args.studies} studies per setting, 300 samples (pairwise 400), 3 models, {ROUNDS} bootstrap rounds; "
          f"load average {load:.2f}\n")  # fmt: skip
    print(f"{'setting':<34} {'raw top':>8} {'ctrl top':>9} {'false >':>8} {'length CI cov':>14} "
          f"{'mean gap':>9} {'sd gap':>7} {'strong top':>11}")  # fmt: skip
    for name, study, strong in (
        ("rating, wins only by length", rating_study, 0.0),
        ("rating, strong +0.4 same length", rating_study, 0.4),
        ("pairwise, wins only by length", pairwise_study, 0.0),
        ("pairwise, strong +0.5 same length", pairwise_study, 0.5),
    ):
        runs = [study(seed, strong) for seed in range(args.studies)]
        mean = {k: float(np.mean([r[k] for r in runs])) for k in runs[0]}
        sd_gap = float(np.std([r["gap"] for r in runs]))
        print(f"{name:<34} {mean['raw_top']:>8.1%} {mean['controlled_top']:>9.1%} {mean['false_better']:>8.1%} "
              f"{mean['covered']:>14.1%} {mean['gap']:>+9.3f} {sd_gap:>7.3f} {mean['strong_top']:>11.1%}")  # fmt: skip
    rating_s, pairwise_s = timing()
    print(f"\nrating: one style-controlled ranking of 20,000 samples x 3 models, 1,000 rounds: {rating_s:.2f} s")
    print(f"pairwise: 400 samples x 3 pairs x 3 judgements, simulation and fits included: {pairwise_s:.2f} s")


if __name__ == "__main__":
    main()
