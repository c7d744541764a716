"""Validate the judge's report card (issue 29, section 2) on simulated panels with a known truth.

Each panel: 3 models (means 2.2, 3.0, 3.8 on a 1-5 scale), 40 samples, 4 simulated reviewers on every output
(leniency +0.1, -0.1, 0 and 0, noise sd 0.6, sample effect sd 0.7: ``tests/support/simulated_panels.py``). The
fourth reviewer's ratings are the judge's, so the "reviewer" judge is exactly as good as a reviewer and, its
leniency being the panel's mean, favours no model. The other judges are that reviewer made worse: +1 point on
one model ("favours m1"), +0.8 per 100 words of the answer ("likes length"), noise of sd 1 on top of its own
("noisier"), or uniform noise ("random");
"noisy panel" is the reviewer judge with panels whose noise sd is 4 (alpha near 0). Per judge, the share of
panels with each verdict, how often the Alternative Annotator Test passed, and how often some model was
flagged as favoured (the reviewer judge's rate is the bias test's family-wise false-flag rate).

    .venv/bin/python scripts/validate_judge_card.py [--panels 100] [--rounds 200]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from reviewer_app.analysis.judge_measures import judge_cards  # noqa: E402
from tests.support.simulated_panels import rating_panel  # noqa: E402

QUALITY = {"qa": {"m1": 2.2, "m2": 3.0, "m3": 3.8}}


def _shift(judge: pd.DataFrame, by: pd.Series | float) -> pd.DataFrame:
    value = (judge["value"].astype(int) + by).round().clip(1, 5).astype(int).astype(str)
    return judge.assign(value=value)


def _favours(judge: pd.DataFrame, _words: pd.Series, _rng: np.random.Generator) -> pd.DataFrame:
    return _shift(judge, (judge["model_a"] == "m1") * 1.0)


def _length(judge: pd.DataFrame, words: pd.Series, _rng: np.random.Generator) -> pd.DataFrame:
    per_row = words.reindex(pd.MultiIndex.from_frame(judge[["sample_id", "model_a"]])).to_numpy() / 100
    return _shift(judge, pd.Series(0.8 * per_row, index=judge.index))


def _noisier(judge: pd.DataFrame, _words: pd.Series, rng: np.random.Generator) -> pd.DataFrame:
    return _shift(judge, pd.Series(rng.normal(0, 1.0, len(judge)), index=judge.index))


def _random(judge: pd.DataFrame, _words: pd.Series, rng: np.random.Generator) -> pd.DataFrame:
    return judge.assign(value=rng.integers(1, 6, len(judge)).astype(str))


Make = Callable[[pd.DataFrame, pd.Series, np.random.Generator], pd.DataFrame]
JUDGES: dict[str, tuple[Make | None, float]] = {
    "reviewer": (None, 0.6),
    "favours m1": (_favours, 0.6),
    "likes length": (_length, 0.6),
    "noisier": (_noisier, 0.6),
    "random": (_random, 0.6),
    "noisy panel": (None, 4.0),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--panels", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=200)
    args = parser.parse_args()
    started = time.perf_counter()
    print(
        f"{'judge':<14} {'stands in':>9} {'triage':>7} {'not trusted':>11} {'AAT passed':>10} {'a model flagged':>15}"
    )
    for name, (make, noise) in JUDGES.items():
        verdicts: Counter[str] = Counter()
        passed = flagged = 0
        for k in range(args.panels):
            rng = np.random.default_rng(1000 + k)
            ratings, outputs, rubric = rating_panel(
                rng, QUALITY, n_samples=40, biases=[0.1, -0.1, 0.0, 0.0], overlap=4, noise_sd=noise, sample_sd=0.7
            )
            judge = ratings[ratings["reviewer"] == "r3"].assign(reviewer="judge", rater_role="judge", shown=False)
            lengths = outputs.rename(columns={"output_words": "n_words"})[["sample_id", "model", "n_words"]]
            words = lengths.set_index(["sample_id", "model"])["n_words"]
            if make is not None:
                judge = make(judge.reset_index(drop=True), words, rng)
            panel = ratings[ratings["reviewer"] != "r3"].reset_index(drop=True)
            (card,) = judge_cards(panel, judge, rubric, lengths, seed=k, rounds=args.rounds)
            verdicts[card.verdict] += 1
            passed += bool(card.agreement[0].passed)
            flagged += any(b.favours for b in card.bias)
        n = args.panels
        print(
            f"{name:<14} {verdicts['stands_in'] / n:>9.0%} {verdicts['triage_only'] / n:>7.0%} "
            f"{verdicts['not_trusted'] / n:>11.0%} {passed / n:>10.0%} {flagged / n:>15.0%}"
        )
    print(f"\n{args.panels} panels per judge, {args.rounds} bootstrap rounds, {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
