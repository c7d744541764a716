"""The rubric: how reviewers score, how many see each item, and what is checked silently.

Frozen dataclasses parsed from the rubric TOML (``batches.rubric_file``) and stored with the batch as JSON, so
a batch always carries the rubric it was reviewed under and no other layer ever reads TOML.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any

from reviewer_app.domain.enums import LEVELS, Level, Mode, PairwiseChoice, PairwiseGranularity, Scale
from reviewer_app.domain.scales import spec_of

PAIRWISE_CHOICES: tuple[str, ...] = tuple(PairwiseChoice)
SCALES: tuple[str, ...] = tuple(Scale)
PAIRWISE_GRANULARITY: tuple[str, ...] = tuple(PairwiseGranularity)
__all__ = [
    "ALLOCATIONS",
    "Adjudication",
    "LEVELS",
    "PAIRWISE_CHOICES",
    "PAIRWISE_DIMENSION",
    "PAIRWISE_GRANULARITY",
    "SCALES",
    "Allocation",
    "Dimension",
    "GoldItem",
    "Rubric",
]


@dataclass(frozen=True)
class Dimension:
    """One question reviewers answer. ``min``/``max`` bound a Likert scale (whole numbers) or a continuous one
    (any numbers); ``higher_is_better`` is False for scores where less is better (error counts, MQM)."""

    name: str
    description: str
    scale: Scale
    level: Level
    min: int | float | None = None
    max: int | float | None = None
    labels: dict[str, str] = field(default_factory=dict)  # Likert anchors, keyed by the score as text
    choices: tuple[str, ...] = ()
    higher_is_better: bool = True

    def allowed_values(self) -> list[str]:
        """Every value a reviewer may give, as stored text (the rating table stores text), lowest first.

        Empty for a continuous scale, whose values cannot be listed: check answers with :meth:`accepts`."""
        return spec_of(self.scale).values(self)

    def accepts(self, value: str) -> bool:
        """Whether ``value`` (stored text) is an answer on this dimension's scale."""
        return spec_of(self.scale).accepts(self, value)

    def value_hint(self) -> str:
        """The answers the scale takes, in words for a message: "1, 2, 3, 4, 5" or "a number from 0 to 200"."""
        return spec_of(self.scale).hint(self)

    def numeric(self) -> bool:
        """Whether the answers are scores (Likert, binary, continuous); categorical ones only get agreement."""
        return spec_of(self.scale).numeric


@dataclass(frozen=True)
class GoldItem:
    sample_id: str
    models: tuple[str, ...]  # one model (rating mode) or two (pairwise, canonical order as written)
    expected: dict[str, str]  # dimension -> expected value as stored text ("5", "1", "left"... see below)


ALLOCATIONS = ("uniform", "adaptive")


@dataclass(frozen=True)
class Allocation:
    """How the pool hands out a batch's samples (rubric ``allocation``; README, "Adaptive allocation").

    ``uniform`` (the default) is today's pool: every item is open from the start. ``adaptive`` holds samples
    back and releases them a whole sample at a time, by preference to the scenarios whose verdicts are still
    open, a ``uniform_share`` of releases drawn uniformly at random; ``tolerance`` is the equivalence margin
    on the 0-1 overall score the anytime-valid verdicts use (None: 5% of the range; pairwise: a win-share
    margin, 0.05 for win shares within 55:45); ``close_settled`` stops
    releasing a scenario's samples once it is settled.
    """

    mode: str = "uniform"
    uniform_share: float = 0.2
    tolerance: float | None = None
    close_settled: bool = False

    @property
    def adaptive(self) -> bool:
        return self.mode == "adaptive"


@dataclass(frozen=True)
class Adjudication:
    """Which disagreements go to the adjudication queue (rubric ``[adjudication]``; README, "Adjudication").

    Rating mode: an item whose panel's scores on a dimension are ``spread`` or more apart (None: more than
    half the scale apart, so 3 or more on 1-5 and 4 or more on 1-7); a binary or categorical dimension only
    when ``dimensions`` names it, and then any two different answers. Pairwise mode: opposite verdicts, at
    least one reviewer for each answer, or with ``minority`` (0-0.5) the smaller side at least that share of
    the reviewers who picked a side (0.4: 3-2 goes, 4-1 does not; for panels of more than three, where any one
    dissent would flood the queue). ``dimensions`` (empty: every Likert and continuous dimension, every
    question in pairwise mode) narrows what is looked at; ``adjudicators`` names reviewers who may rule on
    this batch's disagreements besides its leads and admins (a designated senior reviewer).
    """

    spread: float | None = None
    dimensions: tuple[str, ...] = ()
    adjudicators: tuple[str, ...] = ()
    minority: float | None = None


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
    # Phrases that mark an output as a refusal in a comparison's drift table, beside the default list
    # (``aggregation.drift.DEFAULT_REFUSAL_PHRASES``); a follow-up batch has its baseline's rubric, so both.
    refusal_phrases: tuple[str, ...] = ()
    # Automatic checks every output of a scenario goes through at load, beside its sample's own
    # (``[scenarios.NAME] checks = [...]``, definitions as in ``domain.checks``), and whether reviewers see
    # the results (off by default: blindness; a failed format shows in the answer anyway).
    scenario_checks: dict[str, tuple[dict[str, Any], ...]] = field(default_factory=dict)
    show_checks: bool = False
    allocation: Allocation = field(default_factory=Allocation)
    adjudication: Adjudication = field(default_factory=Adjudication)

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
        data = asdict(self)
        # A rubric without these is stored as it was before they existed.
        unsets: tuple[tuple[str, object], ...] = (
            ("refusal_phrases", ()),
            ("scenario_checks", {}),
            ("show_checks", False),
            ("allocation", asdict(Allocation())),
            ("adjudication", asdict(Adjudication())),
        )
        for key, unset in unsets:
            if data[key] == unset:
                del data[key]
        if "adjudication" in data and data["adjudication"]["minority"] is None:
            del data["adjudication"]["minority"]  # stored as before the setting existed (the batch's content hash)
        return json.dumps(data, sort_keys=True)

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
        raw["refusal_phrases"] = tuple(raw.get("refusal_phrases", ()))
        raw["scenario_checks"] = {k: tuple(v) for k, v in raw.get("scenario_checks", {}).items()}
        raw["allocation"] = Allocation(**raw.get("allocation", {}))
        judging = raw.get("adjudication", {})
        raw["adjudication"] = Adjudication(
            spread=judging.get("spread"),
            dimensions=tuple(judging.get("dimensions", ())),
            adjudicators=tuple(judging.get("adjudicators", ())),
            minority=judging.get("minority"),
        )
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
