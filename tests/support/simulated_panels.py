"""Simulated review panels with a known truth, in the storage frame format (for tests and benchmarks).

A rating is ``clip(round(quality[scenario][model] + sample effect + reviewer bias + noise), min, max)`` (not
rounded to whole points on a continuous dimension);
a pairwise answer follows Bradley-Terry with the given strengths plus a tie probability.
"""

from __future__ import annotations

import math
from itertools import combinations

import numpy as np
import pandas as pd

from reviewer_app.analysis.prepare import bootstrap_weights
from reviewer_app.analysis.ranking import Estimate, rating_estimate
from reviewer_app.domain.enums import Level, Mode, Scale
from reviewer_app.domain.rubric import PAIRWISE_DIMENSION, Dimension, Rubric


def likert(name: str, lo: int = 1, hi: int = 5, level: Level = "ordinal") -> Dimension:
    return Dimension(name=name, description=name, scale=Scale.LIKERT, level=level, min=lo, max=hi)


def continuous(
    name: str, lo: float = 0.0, hi: float = 100.0, level: Level = "interval", higher_is_better: bool = True
) -> Dimension:
    """A continuous dimension: the panel's latent score, unrounded, clipped to [lo, hi]."""
    return Dimension(
        name=name,
        description=name,
        scale=Scale.CONTINUOUS,
        level=level,
        min=lo,
        max=hi,
        higher_is_better=higher_is_better,
    )


def _assign(rng: np.random.Generator, n_items: int, n_reviewers: int, overlap: int) -> np.ndarray:
    """(n_items x overlap) distinct reviewer indices per item, uniformly at random."""
    keys = rng.random((n_items, n_reviewers))
    return np.argsort(keys, axis=1)[:, :overlap]


def _positions(reviewers: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """0-based place of each rating in its reviewer's queue (a random order per reviewer)."""
    order = np.lexsort((rng.random(len(reviewers)), reviewers))
    pos = np.empty(len(reviewers), dtype=int)
    sorted_rev = reviewers[order]
    starts = np.r_[0, np.flatnonzero(np.diff(sorted_rev)) + 1]
    run = np.arange(len(order)) - np.repeat(starts, np.diff(np.r_[starts, len(order)]))
    pos[order] = run
    return pos


def rating_panel(
    rng: np.random.Generator,
    quality: dict[str, dict[str, float]],
    *,
    n_samples: int,
    biases: list[float],
    overlap: int = 3,
    noise_sd: float = 0.8,
    sample_sd: float = 0.5,
    dims: tuple[Dimension, ...] = (likert("correctness"),),
    repeats: int = 1,
) -> tuple[pd.DataFrame, pd.DataFrame, Rubric]:
    """A rating-mode batch: every model answers every sample of every scenario (``repeats`` times)."""
    frames, outs = [], []
    item0 = 0
    for scen, q in quality.items():
        models = list(q)
        s_idx, m_idx, rep = (
            a.ravel()
            for a in np.meshgrid(np.arange(n_samples), np.arange(len(models)), np.arange(repeats), indexing="ij")
        )
        n_items = len(s_idx)
        sample_effect = rng.normal(0, sample_sd, n_samples)
        who = _assign(rng, n_items, len(biases), overlap)
        item = np.repeat(np.arange(n_items), overlap)
        reviewer = who.ravel()
        latent = (
            np.array([q[m] for m in models])[m_idx][item] + sample_effect[s_idx][item] + np.asarray(biases)[reviewer]
        )
        for d in dims:
            assert d.min is not None and d.max is not None
            raw = latent + rng.normal(0, noise_sd, len(item))
            if d.scale == Scale.CONTINUOUS:
                value = np.round(np.clip(raw, d.min, d.max), 2)  # stored as text such as "12.37"
            else:
                value = np.clip(np.rint(raw), d.min, d.max).astype(int)
            frames.append(
                pd.DataFrame(
                    {
                        "scenario": scen,
                        "sample_id": (np.char.add(f"{scen}-", s_idx[item].astype(str))),
                        "item_id": item + item0,
                        "is_gold": False,
                        "reviewer": np.char.add("r", reviewer.astype(str)),
                        "occurrence": 0,
                        "position": 0,
                        "swapped": False,
                        "dimension": d.name,
                        "value": value.astype(str),
                        "model_a": np.array(models)[m_idx][item],
                        "model_b": None,
                        "repeat_a": rep[item],
                        "repeat_b": None,
                        "seconds_spent": 30.0,
                    }
                )
            )
        outs.append(
            pd.DataFrame(
                {
                    "scenario": scen,
                    "sample_id": np.char.add(f"{scen}-", s_idx.astype(str)),
                    "model": np.array(models)[m_idx],
                    "repeat": rep,
                    "excluded": False,
                    "leak_words": "",
                    "output_chars": rng.integers(200, 2000, n_items),
                    "output_words": rng.integers(40, 400, n_items),
                    "latency_ms": rng.lognormal(7, 0.4, n_items) * (1 + m_idx),
                    "ttft_ms": rng.lognormal(5, 0.3, n_items),
                }
            )
        )
        item0 += n_items
    ratings = pd.concat(frames, ignore_index=True)
    assignments = ratings[["item_id", "reviewer"]].drop_duplicates()
    assignments = assignments.assign(position=_positions(assignments["reviewer"].str[1:].astype(int).to_numpy(), rng))
    ratings = ratings.drop(columns="position").merge(assignments, on=["item_id", "reviewer"])
    rubric = Rubric(mode=Mode.RATING, overlap=overlap, dimensions=dims, seed=7)
    return ratings, pd.concat(outs, ignore_index=True), rubric


def expected_likert(mean: float, biases: list[float], sd: float, lo: int, hi: int) -> float:
    """Exact expected rating: mean over reviewers of E[clip(round(mean + bias + N(0, sd)), lo, hi)]."""

    def cdf(x: float) -> float:
        return 0.5 * (1 + math.erf(x / (sd * math.sqrt(2))))

    total = 0.0
    for b in biases:
        mu = mean + b
        for k in range(lo, hi + 1):
            upper = 1.0 if k == hi else cdf(k + 0.5 - mu)
            lower = 0.0 if k == lo else cdf(k - 0.5 - mu)
            total += k * (upper - lower)
    return total / len(biases)


def pairwise_panel(
    rng: np.random.Generator,
    strength: dict[str, dict[str, float]],
    *,
    n_samples: int,
    n_reviewers: int,
    overlap: int = 2,
    tie_prob: float = 0.1,
) -> tuple[pd.DataFrame, pd.DataFrame, Rubric]:
    """A pairwise batch: every pair of models on every sample, answered by ``overlap`` reviewers each."""
    frames = []
    item0 = 0
    for scen, st in strength.items():
        pairs = list(combinations(list(st), 2))
        s_idx, p_idx = (a.ravel() for a in np.meshgrid(np.arange(n_samples), np.arange(len(pairs)), indexing="ij"))
        n_items = len(s_idx)
        who = _assign(rng, n_items, n_reviewers, overlap)
        item = np.repeat(np.arange(n_items), overlap)
        a = np.array([p[0] for p in pairs])[p_idx][item]
        b = np.array([p[1] for p in pairs])[p_idx][item]
        diff = np.array([st[x] for x in a]) - np.array([st[x] for x in b])
        u = rng.random(len(item))
        a_wins = rng.random(len(item)) < 1 / (1 + np.exp(-diff))
        outcome = np.where(u < tie_prob, "tie", np.where(a_wins, "a", "b"))
        swapped = rng.random(len(item)) < 0.5
        shown = np.where(outcome == "tie", "tie", np.where((outcome == "a") ^ swapped, "left", "right"))
        frames.append(
            pd.DataFrame(
                {
                    "scenario": scen,
                    "sample_id": np.char.add(f"{scen}-", s_idx[item].astype(str)),
                    "item_id": item + item0,
                    "is_gold": False,
                    "reviewer": np.char.add("r", who.ravel().astype(str)),
                    "occurrence": 0,
                    "position": 0,
                    "swapped": swapped,
                    "dimension": "overall",
                    "value": shown,
                    "model_a": a,
                    "model_b": b,
                    "repeat_a": 0,
                    "repeat_b": 0,
                    "seconds_spent": 20.0,
                }
            )
        )
        item0 += n_items
    ratings = pd.concat(frames, ignore_index=True)
    ratings["position"] = rng.permutation(len(ratings))
    rubric = Rubric(mode=Mode.PAIRWISE, overlap=overlap, dimensions=(PAIRWISE_DIMENSION,), seed=7)
    outputs = pd.DataFrame(
        columns=["scenario", "sample_id", "model", "repeat", "excluded", "leak_words", "output_chars", "output_words"]
    )
    return ratings, outputs, rubric


def estimate_from_scores(
    rng: np.random.Generator,
    means: dict[str, float],
    *,
    n_samples: int,
    noise_sd: float | dict[str, float] = 0.5,
    sample_sd: float = 0.5,
    rounds: int = 200,
) -> Estimate:
    """A rating-mode :class:`Estimate` from one continuous score per model and sample: the model's mean plus
    a sample effect shared by all models plus the model's own noise (for tests of the decisions alone)."""
    sample_effect = rng.normal(0, sample_sd, n_samples)
    rows = []
    for model, mean in means.items():
        sd = noise_sd[model] if isinstance(noise_sd, dict) else noise_sd
        score = mean + sample_effect + rng.normal(0, sd, n_samples)
        rows.append(pd.DataFrame({"sample_id": np.arange(n_samples), "model_a": model, "score": score}))
    frame = pd.concat(rows, ignore_index=True)
    samples = list(range(n_samples))
    return rating_estimate(frame, list(means), samples, bootstrap_weights(n_samples, rounds, rng))


ERRATIC_TRUTH = {"m1": 4, "m2": 3}


def erratic_reviewer_study(seed: int) -> tuple[pd.DataFrame, set[int]]:
    """A ratings frame with a known truth for adjudication: 40 samples, m1 (true score 4) and m2 (3) on a 1-5
    "c", three reviewers per output answering the truth plus a little noise (SD 0.3), except that the third
    answers at random on a quarter of the items; and the items it answered at random."""
    rng = np.random.default_rng(seed)
    rows, erratic_items = [], set()
    for s in range(40):
        for m, q in ERRATIC_TRUTH.items():
            item = s * 2 + (m == "m2")
            for k in range(3):
                erratic = k == 2 and rng.random() < 0.25
                if erratic:
                    erratic_items.add(item)
                score = rng.integers(1, 6) if erratic else int(np.clip(np.rint(q + rng.normal(0, 0.3)), 1, 5))
                rows.append({"scenario": "qa", "sample_id": f"s{s}", "item_id": item, "is_gold": False,
                             "reviewer": f"r{k}", "occurrence": 0, "position": s, "swapped": False, "dimension": "c",
                             "value": str(score), "model_a": m, "model_b": None, "is_anchor": False})  # fmt: skip
    return pd.DataFrame(rows), erratic_items


def model_gap(frame: pd.DataFrame) -> float:
    """m1's mean score minus m2's, every answer counted once."""
    means = frame.assign(score=frame["value"].astype(float)).groupby("model_a")["score"].mean()
    return float(means["m1"] - means["m2"])
