"""Simulated follow-up rounds with a known truth: a baseline batch and its follow-up, with anchors.

An output's true quality is ``quality[scenario][model] + sample effect + output effect``; the sample effect
is the same in both rounds (the same eval set), each output has its own effect. A rating is
``clip(rint(true quality + reviewer bias + round shift + noise), 1, 5)``. The follow-up round rates every
candidate output and, as anchors, a random ``anchor_share`` of the baseline's outputs again (the same true
quality), all with ``panel_shift`` added: a stricter panel has a negative shift. Frames have the columns of
``storage.repositories.frames.ratings_frame``; the follow-up's also ``is_anchor``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from reviewer_app.analysis.prepare import ANCHOR
from reviewer_app.domain.enums import Mode
from reviewer_app.domain.rubric import Dimension, Rubric
from tests.support.simulated_panels import likert


@dataclass(frozen=True)
class Chain:
    baseline: pd.DataFrame
    candidate: pd.DataFrame
    rubric: Rubric


def _rate(
    rng: np.random.Generator,
    true: np.ndarray,
    outputs: pd.DataFrame,
    *,
    biases: np.ndarray,
    overlap: int,
    shift: float,
    noise_sd: float,
    dims: tuple[Dimension, ...],
    item0: int,
    prefix: str = "r",
) -> pd.DataFrame:
    """``overlap`` distinct reviewers rate each output (row of ``outputs``) on every dimension."""
    n = len(outputs)
    who = np.argsort(rng.random((n, len(biases))), axis=1)[:, :overlap]
    item = np.repeat(np.arange(n), overlap)
    reviewer = who.ravel()
    latent = true[item] + biases[reviewer] + shift
    frames = []
    for d in dims:
        assert d.min is not None and d.max is not None
        value = np.clip(np.rint(latent + rng.normal(0, noise_sd, len(item))), d.min, d.max).astype(int)
        frames.append(
            pd.DataFrame(
                {
                    "scenario": outputs["scenario"].to_numpy()[item],
                    "sample_id": outputs["sample_id"].to_numpy()[item],
                    "item_id": item + item0,
                    "is_gold": False,
                    "reviewer": np.char.add(prefix, reviewer.astype(str)),
                    "occurrence": 0,
                    "position": 0,
                    "swapped": False,
                    "dimension": d.name,
                    "value": value.astype(str),
                    "model_a": outputs["model"].to_numpy()[item],
                    "model_b": None,
                    "repeat_a": outputs["repeat"].to_numpy()[item],
                    "repeat_b": None,
                    "seconds_spent": 30.0,
                    "rater_role": "reviewer",
                    "shown": True,
                }
            )
        )
    out = pd.concat(frames, ignore_index=True)
    # Text columns as plain Python strings, as ``ratings_frame(python_strings=True)`` gives them to reports.
    return out.astype(dict.fromkeys(("scenario", "sample_id", "reviewer", "dimension", "value", "model_a"), object))


def _outputs(quality: dict[str, dict[str, float]], n_samples: int) -> pd.DataFrame:
    rows = [
        (scen, f"{scen}-{s}", model, 0, q)
        for scen, by_model in quality.items()
        for model, q in by_model.items()
        for s in range(n_samples)
    ]
    return pd.DataFrame(rows, columns=["scenario", "sample_id", "model", "repeat", "quality"])


def chain(
    rng: np.random.Generator,
    baseline: dict[str, dict[str, float]],
    candidate: dict[str, dict[str, float]],
    *,
    n_samples: int,
    anchor_share: float = 0.2,
    panel_shift: float = 0.0,
    n_reviewers: int = 6,
    overlap: int = 3,
    noise_sd: float = 0.8,
    sample_sd: float = 0.5,
    output_sd: float = 0.3,
    bias_sd: float = 0.2,
    same_reviewers: bool = False,
    dims: tuple[Dimension, ...] = (likert("correctness"),),
) -> Chain:
    """A baseline batch (models and true means of ``baseline``) and its follow-up (``candidate``), each
    scenario with ``n_samples`` samples, every model answering each once. The two rounds have different
    reviewers (new biases) unless ``same_reviewers``."""
    scenarios = sorted(set(baseline) | set(candidate))
    sample_effect = {scen: rng.normal(0, sample_sd, n_samples) for scen in scenarios}

    def true_quality(outs: pd.DataFrame) -> np.ndarray:
        s = outs["sample_id"].str.rsplit("-", n=1).str[1].astype(int).to_numpy()
        effect = np.array([sample_effect[sc][k] for sc, k in zip(outs["scenario"], s, strict=True)])
        return outs["quality"].to_numpy() + effect + rng.normal(0, output_sd, len(outs))

    first = _outputs(baseline, n_samples)
    first_true = true_quality(first)
    second = _outputs(candidate, n_samples)
    second_true = true_quality(second)
    anchors = rng.random(len(first)) < anchor_share

    # A new panel is other people: named "n0", "n1", ... where the first round's are "r0", "r1", ...
    second_names = "r" if same_reviewers else "n"

    def rate(
        true: np.ndarray, outs: pd.DataFrame, biases: np.ndarray, shift: float, item0: int, prefix: str
    ) -> pd.DataFrame:
        return _rate(
            rng, true, outs, biases=biases, overlap=overlap, shift=shift, noise_sd=noise_sd, dims=dims, item0=item0,
            prefix=prefix,
        )  # fmt: skip

    biases_one = rng.normal(0, bias_sd, n_reviewers)
    round_one = rate(first_true, first, biases_one, 0.0, 0, "r")
    biases_two = biases_one if same_reviewers else rng.normal(0, bias_sd, n_reviewers)
    new = rate(second_true, second, biases_two, panel_shift, 0, second_names)
    again = rate(
        first_true[anchors], first[anchors].reset_index(drop=True), biases_two, panel_shift, len(second), second_names
    )
    follow_up = pd.concat([new.assign(**{ANCHOR: False}), again.assign(**{ANCHOR: True})], ignore_index=True)
    rubric = Rubric(mode=Mode.RATING, overlap=overlap, dimensions=dims, seed=7)
    return Chain(round_one, follow_up, rubric)
