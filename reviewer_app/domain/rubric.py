"""The rubric: how reviewers score, how many see each item, and what is checked silently.

Frozen dataclasses parsed from the rubric TOML (``services.rubric``) and stored with the batch as JSON, so
a batch always carries the rubric it was reviewed under and no other layer ever reads TOML.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field

from reviewer_app.domain.enums import LEVELS, Level, Mode, PairwiseChoice, PairwiseGranularity, Scale

PAIRWISE_CHOICES: tuple[str, ...] = tuple(PairwiseChoice)
SCALES: tuple[str, ...] = tuple(Scale)
PAIRWISE_GRANULARITY: tuple[str, ...] = tuple(PairwiseGranularity)
__all__ = ["LEVELS", "PAIRWISE_CHOICES", "PAIRWISE_DIMENSION", "SCALES", "Dimension", "GoldItem", "Rubric"]


@dataclass(frozen=True)
class Dimension:
    name: str
    description: str
    scale: Scale
    level: Level
    min: int | None = None
    max: int | None = None
    labels: dict[str, str] = field(default_factory=dict)  # Likert anchors, keyed by the score as text
    choices: tuple[str, ...] = ()

    def allowed_values(self) -> list[str]:
        """Every value a reviewer may give, as stored text (the rating table stores text)."""
        if self.scale == "likert":
            assert self.min is not None and self.max is not None
            return [str(v) for v in range(self.min, self.max + 1)]
        if self.scale == "binary":
            return ["0", "1"]
        return list(self.choices)

    def numeric(self) -> bool:
        return self.scale in ("likert", "binary")


@dataclass(frozen=True)
class GoldItem:
    sample_id: str
    models: tuple[str, ...]  # one model (rating mode) or two (pairwise, canonical order as written)
    expected: dict[str, str]  # dimension -> expected value as stored text ("5", "1", "left"... see below)


@dataclass(frozen=True)
class Rubric:
    mode: Mode
    overlap: int
    dimensions: tuple[Dimension, ...]
    scenario_dimensions: dict[str, tuple[str, ...]] = field(default_factory=dict)
    scenario_weights: dict[str, float] = field(default_factory=dict)
    pairwise_granularity: PairwiseGranularity = PairwiseGranularity.OVERALL
    show_reference: bool = True
    show_criteria: bool = True
    instructions: str = ""
    leak_words: tuple[str, ...] = ()
    gold: tuple[GoldItem, ...] = ()
    repeat_share: float = 0.0
    repeat_min_gap: int = 5
    seed: int | None = None

    def dimension(self, name: str) -> Dimension:
        for dim in self.dimensions:
            if dim.name == name:
                return dim
        raise KeyError(name)

    def dimensions_for(self, scenario: str) -> tuple[Dimension, ...]:
        """The dimensions reviewers answer for items of ``scenario`` (all of them unless the rubric narrows)."""
        names = self.scenario_dimensions.get(scenario)
        if names is None:
            return self.dimensions
        return tuple(d for d in self.dimensions if d.name in names)

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    @staticmethod
    def from_json(text: str) -> Rubric:
        raw = json.loads(text)
        dims = tuple(
            Dimension(**{**d, "scale": Scale(d["scale"]), "choices": tuple(d["choices"])})
            for d in raw.pop("dimensions")
        )
        gold = tuple(
            GoldItem(sample_id=g["sample_id"], models=tuple(g["models"]), expected=g["expected"])
            for g in raw.pop("gold")
        )
        raw["scenario_dimensions"] = {k: tuple(v) for k, v in raw["scenario_dimensions"].items()}
        raw["leak_words"] = tuple(raw["leak_words"])
        raw["mode"] = Mode(raw["mode"])
        raw["pairwise_granularity"] = PairwiseGranularity(raw["pairwise_granularity"])
        return Rubric(dimensions=dims, gold=gold, **raw)


PAIRWISE_DIMENSION = Dimension(
    name="overall",
    description="Which answer is better overall?",
    scale=Scale.CATEGORICAL,
    level="nominal",
    choices=PAIRWISE_CHOICES,
)
