"""Simulated panels with an LLM judge and a known truth (issue 29, section 3), for the tests of
``analysis.judge_ppi`` and ``scripts/validate_ppi.py``.

Every output of every sample has a quality (sample effect + the output's own); a reviewer's rating is the
model's mean + quality + the reviewer's leniency + noise (the statistician's components of issue 28: sample
0.25, output 0.125, leniency 0.15, residual 0.5), K = 3 reviewers of 30 per output, on a random subset of the
samples. The truth of a model is what this panel gives on average: its mean + the mean leniency of the 30.
The judge rates every output: the model's mean + quality + its own offset + noise, and then what it gets
wrong on purpose (a favourite model, length).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

REVIEWERS, K = 30, 3
SAMPLE_SD, OUTPUT_SD, LENIENCY_SD, RESIDUAL_SD = 0.5, math.sqrt(0.125), math.sqrt(0.15), math.sqrt(0.5)
LENGTH_BY_MODEL = np.array([0.0, 0.5, 1.0, 1.5])  # mean output length (in SD units) of each model: correlated


@dataclass(frozen=True)
class Judge:
    """A simulated judge: its noise, a bias for the first model only, a bias per SD of output length, and
    whether it ignores the outputs altogether (pure noise)."""

    name: str
    noise_sd: float = 0.3
    favourite: float = 0.0
    length: float = 0.0
    useless: bool = False
    offset: float = 0.2  # every judge reads the scale its own way


GOOD = Judge("good")
NOISY = Judge("noisy", noise_sd=1.0)
FAVOURS_M0 = Judge("biased for m0 (+0.5)", favourite=0.5)
LENGTH = Judge("length-biased (+0.3/SD)", length=0.3)
USELESS = Judge("pure noise", noise_sd=1.0, useless=True)
JUDGES = (GOOD, NOISY, FAVOURS_M0, LENGTH, USELESS)


@dataclass(frozen=True)
class JudgePanel:
    judge: pd.DataFrame  # sample_id, model, score: every output
    panel: pd.DataFrame  # sample_id, model, reviewer, score: the outputs of the labelled samples
    truth: np.ndarray  # (M,) each model's mean rating by this panel's reviewers
    models: list[str]
    samples: list[int]
    labelled: list[int]


def judge_panel(
    rng: np.random.Generator,
    judge: Judge,
    fraction: float,
    *,
    samples: int = 100,
    means: np.ndarray | None = None,
) -> JudgePanel:
    """One panel: ``samples`` samples of 4 models (equal means by default), the judge on every output and the
    panel's K ratings on each output of a random ``fraction`` of the samples."""
    mu = np.full(4, 3.0) if means is None else np.asarray(means, dtype=float)
    m = len(mu)
    models = [f"m{i}" for i in range(m)]
    quality = rng.normal(0, SAMPLE_SD, samples)[:, None] + rng.normal(0, OUTPUT_SD, (samples, m))
    leniency = rng.normal(0, LENIENCY_SD, REVIEWERS)
    length = LENGTH_BY_MODEL[np.arange(m) % len(LENGTH_BY_MODEL)][None, :] + rng.normal(0, 1.0, (samples, m))
    if judge.useless:
        scores = 3.0 + rng.normal(0, judge.noise_sd, (samples, m))
    else:
        scores = mu[None, :] + quality + judge.offset + rng.normal(0, judge.noise_sd, (samples, m))
        scores[:, 0] += judge.favourite
        scores += judge.length * (length - length.mean()) / length.std()
    judge_frame = pd.DataFrame(
        {"sample_id": np.repeat(np.arange(samples), m), "model": np.tile(models, samples), "score": scores.ravel()}
    )
    n = max(1, round(fraction * samples))
    labelled = np.sort(rng.choice(samples, n, replace=False))
    s = np.repeat(labelled, m * K)
    k = np.tile(np.repeat(np.arange(m), K), n)
    who = np.argsort(rng.random((n * m, REVIEWERS)), axis=1)[:, :K].ravel()  # K distinct reviewers per output
    y = mu[k] + quality[s, k] + leniency[who] + rng.normal(0, RESIDUAL_SD, len(s))
    panel = pd.DataFrame(
        {"sample_id": s, "model": [models[i] for i in k], "reviewer": [f"r{r}" for r in who], "score": y}
    )
    return JudgePanel(
        judge_frame, panel, mu + leniency.mean(), models, list(range(samples)), [int(x) for x in labelled]
    )
