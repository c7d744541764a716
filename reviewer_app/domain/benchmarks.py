"""Public benchmark scores beside the blind ranking: the scores a lead brings, and what the report says of them.

:class:`BenchmarkScores` is the input (read from a CSV by ``services.benchmark_scores``); it is not part of
the report's JSON. :class:`BenchmarkSection` is one benchmark compared with one ranking (a scenario's overall
score, or the overall across scenarios): the two orders side by side (:class:`BenchmarkModel`), Spearman's
rho between benchmark score and blind score with a bootstrap CI, and the pairs the benchmark separates by a
small margin or the panel puts the other way round (:class:`BenchmarkPair`), each also as a sentence.

Scores may be on any scale: a "point" is one unit of the benchmark's own score. A benchmark is higher-is-better
unless its file says otherwise (column ``higher_is_better``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

__all__ = [
    "BenchmarkModel",
    "BenchmarkPair",
    "BenchmarkScores",
    "BenchmarkSection",
    "DEFAULT_MARGIN",
    "MIN_MODELS",
    "Verdict",
]

DEFAULT_MARGIN = 2.0  # benchmark points: pairs this close are "a small margin" (the default)
MIN_MODELS = 3  # fewer models in both orders give no Spearman's rho

Verdict = Literal["tied", "reversed", "agrees", "separated"]


@dataclass(frozen=True, kw_only=True)
class BenchmarkScores:
    """Benchmark scores as read from a file: ``scores[benchmark][model]``, benchmarks and models in file order.

    ``margin`` (benchmark points) picks the pairs the benchmark separates by little; ``source`` names the file
    in notes."""

    source: str
    scores: Mapping[str, Mapping[str, float]]
    higher_is_better: Mapping[str, bool] = field(default_factory=dict)
    margin: float = DEFAULT_MARGIN

    def better_high(self, benchmark: str) -> bool:
        """Whether a higher score is better on ``benchmark`` (the default)."""
        return self.higher_is_better.get(benchmark, True)


@dataclass(frozen=True, kw_only=True)
class BenchmarkModel:
    """One model in both orders: its benchmark score and rank, its blind score (with the 95% CI), rank and tier.

    Benchmark fields are None for a model the file has no score for; blind fields for a model not ranked
    here (no ratings in the scenario, or left out across scenarios). Ranks: 1 + the models better (the
    benchmark: with a better score; blind: significantly better, as in the ranking)."""

    model: str
    benchmark_score: float | None
    benchmark_rank: int | None
    blind_score: float | None
    blind_ci_low: float | None
    blind_ci_high: float | None
    blind_rank: int | None
    tier: int | None


@dataclass(frozen=True, kw_only=True)
class BenchmarkPair:
    """Two models the benchmark puts close together, or the panel the other way round.

    ``model_a`` is the one the benchmark puts higher (better); ``benchmark_diff`` is how far, in the
    benchmark's points (0: level, then ``model_a`` is the panel's higher). ``verdict`` is the panel's own
    seed-free pair decision (Holm-adjusted, 5% family-wise): "tied" (not separated), "agrees" (separated the
    same way), "reversed" (separated the other way), "separated" (the benchmark has them level)."""

    model_a: str
    model_b: str
    benchmark_diff: float
    blind_diff: float | None  # blind score of model_a minus model_b
    p_adjusted: float | None
    verdict: Verdict


@dataclass(frozen=True, kw_only=True)
class BenchmarkSection:
    """One benchmark beside one blind ranking ("overall" of a scenario, or across scenarios)."""

    benchmark: str
    higher_is_better: bool
    margin: float  # benchmark points: pairs this close are listed whatever the panel says
    n_models: int  # models with a benchmark score and a blind score here
    spearman: float | None  # None with fewer than 3 models in both (see notes)
    ci_low: float | None
    ci_high: float | None
    models: tuple[BenchmarkModel, ...]  # the blind order, then models not ranked here
    pairs: tuple[BenchmarkPair, ...]
    disagreements: tuple[str, ...]  # the pairs as sentences, reversed ones first
    notes: tuple[str, ...]
