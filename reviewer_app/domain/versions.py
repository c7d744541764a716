"""What a comparison of versions and a model's history are, shared by the code that computes them
(``reviewer_app.versions``) and the renderers (``reviewer_app.reporting``), which need no service to draw them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Any, Literal

from reviewer_app.domain.enums import Mode

__all__ = [
    "ModelPair",
    "Verdict",
    "REGRESSION",
    "IMPROVEMENT",
    "NO_CHANGE",
    "INCONCLUSIVE",
    "PanelAdjustment",
    "Change",
    "CompareRow",
    "Comparison",
    "DriftRow",
    "VersionComparison",
    "HistoryBatch",
    "HistoryPoint",
    "ModelHistory",
]


@dataclass(frozen=True)
class ModelPair:
    """A candidate model and the baseline model it is compared with (the same name unless matched)."""

    baseline: str
    candidate: str


Verdict = Literal["regression", "improvement", "no change", "inconclusive"]


REGRESSION: Verdict = "regression"


IMPROVEMENT: Verdict = "improvement"


NO_CHANGE: Verdict = "no change"


INCONCLUSIVE: Verdict = "inconclusive"


@dataclass(frozen=True)
class CompareRow:
    """One model pair on one scenario and dimension. Scores are over the samples both versions were rated on
    (so ``diff`` = ``candidate_score`` - ``baseline_score``); None where there is nothing to compute."""

    scenario: str
    dimension: str
    model: str  # the candidate model
    baseline_model: str
    unit: str
    higher_is_better: bool
    tolerance: float
    baseline_score: float | None
    candidate_score: float | None
    diff: float | None  # paired, uncorrected
    diff_ci_low: float | None  # bootstrap
    diff_ci_high: float | None
    panel_shift: float | None  # None without anchors
    shift_ci_low: float | None
    shift_ci_high: float | None
    corrected: float | None  # diff - panel_shift (diff without anchors): what the verdict is about
    ci_low: float | None  # bootstrap interval of ``corrected`` (shown)
    ci_high: float | None
    ci_mc_se: float | None  # Monte Carlo error of the bootstrap interval's ends
    decision_low: float | None  # the seed-free interval the verdict is decided on
    decision_high: float | None
    verdict: Verdict
    samples_needed: int | None  # inconclusive only: samples in all that would likely settle it
    n: int  # samples both versions were rated on
    n_anchors: int  # anchored outputs (pairwise: comparisons) rated in both rounds
    # How a change of the panel is allowed for (issue 28): "anchors", "reviewer variance" (no anchors: the
    # interval widened by the panel's variance, estimated from the reviewers), "same panel" (no anchors, the
    # same reviewers in the same shares) or "not adjusted" (no anchors, the panel's variance unknown: the
    # verdict is inconclusive).
    panel_adjustment: PanelAdjustment = "anchors"
    reviewer_sd: float | None = None  # between-reviewer SD of leniency (no anchors)
    panel_sd: float | None = None  # SD a change of panel adds to the difference (no anchors)
    p_adjusted: float | None = None  # Holm-adjusted p of a change beyond the tolerance, across the rows
    change: Change = "not significant"  # a significant change of any size (Holm across the rows)
    change_p_adjusted: float | None = None  # Holm-adjusted p of a change of any size
    meaning: str = ""  # what the verdict says, in words
    # With anchors: the p-value of the test that their shift is common to all models (None: nothing to test)
    # and whether this row was corrected by its own model's anchors instead (the shift differs by model).
    shift_common_p: float | None = None
    own_shift: bool = False

    def as_dict(self) -> dict[str, Any]:
        """The row as plain JSON-ready data (every field)."""
        return asdict(self)


PanelAdjustment = Literal["anchors", "reviewer variance", "same panel", "not adjusted"]
Change = Literal["worse", "better", "not significant"]


@dataclass(frozen=True)
class Comparison:
    """Every :class:`CompareRow` (scenarios sorted, then the rubric's dimensions, then "overall", then the
    pairs in order), with the settings that made them."""

    mode: Mode
    pairs: tuple[ModelPair, ...]
    rows: tuple[CompareRow, ...]
    tolerance: float
    tolerance_share: float
    seed: int
    rounds: int
    # The false-verdict control across the rows (issue 28): "holm", family-wise 5%
    multiplicity: str = "holm"

    def as_dict(self, *, baseline: str, candidate: str, drift: Sequence[Mapping[str, Any]] = ()) -> dict[str, Any]:
        """The issue's JSON shape: ``{"baseline", "candidate", "tolerance", "tolerance_share", "scenarios":
        [{"scenario", "dimension", "models": [row, ...]}], "drift": [...]}``; each row carries every field of
        :class:`CompareRow` but the scenario and dimension."""
        blocks: dict[tuple[str, str], list[dict[str, Any]]] = {}
        for row in self.rows:
            data = row.as_dict()
            key = (data.pop("scenario"), data.pop("dimension"))
            blocks.setdefault(key, []).append(data)
        return {
            "baseline": baseline,
            "candidate": candidate,
            "mode": str(self.mode),
            "tolerance": self.tolerance,
            "tolerance_share": self.tolerance_share,
            "seed": self.seed,
            "bootstrap_rounds": self.rounds,
            "multiplicity": self.multiplicity,
            "scenarios": [{"scenario": s, "dimension": d, "models": rows} for (s, d), rows in blocks.items()],
            "drift": [dict(r) for r in drift],
        }


@dataclass(frozen=True)
class DriftRow:
    """One metric of one model pair in one scenario (the issue's drift row, with the baseline's model name,
    the outputs behind each side, the test used and the rule of the flag in words)."""

    scenario: str
    model: str  # the candidate model
    baseline_model: str
    metric: str
    baseline: float | None
    candidate: float | None
    change: float | None
    p_value: float | None
    flag: bool
    n_baseline: int
    n_candidate: int
    test: str | None
    rule: str

    def as_dict(self) -> dict[str, Any]:
        """The row as plain JSON-ready data (every field)."""
        return asdict(self)


@dataclass(frozen=True)
class VersionComparison:
    """A comparison of two batches as every front end shows it: the verdict rows, the drift rows, and what
    the reader must know to read them (models left unpaired, samples not shared, whether anchors corrected
    the panel)."""

    baseline: str
    candidate: str
    comparison: Comparison
    drift: tuple[DriftRow, ...]
    unpaired_baseline: tuple[str, ...]  # baseline models no candidate model is compared with
    unpaired_candidate: tuple[str, ...]  # candidate models without a baseline model
    shared_samples: int
    baseline_only_samples: int
    candidate_only_samples: int
    has_anchors: bool
    notes: tuple[str, ...]

    @property
    def mode(self) -> Mode:
        return self.comparison.mode

    def as_dict(self) -> dict[str, Any]:
        """The issue's JSON shape (``baseline``, ``candidate``, ``tolerance``, ``scenarios``, ``drift``) and
        what else a reader needs: the pairs, unpaired models, sample counts, anchors and notes."""
        out = self.comparison.as_dict(
            baseline=self.baseline, candidate=self.candidate, drift=[r.as_dict() for r in self.drift]
        )
        out["pairs"] = [{"baseline_model": p.baseline, "model": p.candidate} for p in self.comparison.pairs]
        out["unpaired"] = {"baseline": list(self.unpaired_baseline), "candidate": list(self.unpaired_candidate)}
        out["samples"] = {
            "shared": self.shared_samples,
            "baseline_only": self.baseline_only_samples,
            "candidate_only": self.candidate_only_samples,
        }
        out["anchors"] = self.has_anchors
        out["notes"] = list(self.notes)
        return out


@dataclass(frozen=True)
class HistoryBatch:
    """One batch in the model's history: when it was loaded, which batch it follows up, the name the model
    has there, and whether it has ratings of the model yet (``note`` says why a batch has no points or no
    verdict)."""

    name: str
    batch_id: int
    loaded_at: datetime
    mode: str
    follow_up_of: str | None  # the direct baseline's name, if this batch is a follow-up
    linked: bool  # the baseline is in this history too, so a verdict is taken against it
    model: str
    rated: bool
    notes: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["loaded_at"] = self.loaded_at.isoformat()
        out["notes"] = list(self.notes)
        return out


@dataclass(frozen=True)
class HistoryPoint:
    """The model in one batch, scenario and dimension ("overall" is 0-1): the report's score and 95% CI, and
    the verdict against the baseline batch of the chain (None at a chain's start or where no comparison)."""

    batch: str
    loaded_at: datetime
    model: str
    scenario: str
    dimension: str
    score: float | None
    ci_low: float | None
    ci_high: float | None
    n: int
    verdict: str | None = None
    panel_ci_low: float | None = None  # rating mode, 3+ reviewers: the 95% CI for a new panel of reviewers
    panel_ci_high: float | None = None
    against: str | None = None  # the baseline batch the verdict is against
    against_model: str | None = None
    change: float | None = None  # corrected paired difference, candidate - baseline
    change_low: float | None = None  # the seed-free interval the verdict is decided on
    change_high: float | None = None

    def as_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["loaded_at"] = self.loaded_at.isoformat()
        return out


@dataclass(frozen=True)
class ModelHistory:
    model: str
    also: tuple[str, ...]
    batches: tuple[HistoryBatch, ...]
    points: tuple[HistoryPoint, ...]
    notes: tuple[str, ...] = field(default=())

    @property
    def regressions(self) -> tuple[HistoryPoint, ...]:
        return tuple(p for p in self.points if p.verdict == "regression")

    def dimensions(self) -> list[str]:
        """The series a chart can draw, "overall" first: a dimension's name, or "name (mode)" when the history
        holds rating and pairwise batches, whose scores (means on a scale, Bradley-Terry strengths) must never
        share an axis."""
        modes = {b.name: b.mode for b in self.batches}
        mixed = len({modes[p.batch] for p in self.points}) > 1
        keys = list(dict.fromkeys(f"{p.dimension} ({modes[p.batch]})" if mixed else p.dimension for p in self.points))
        return sorted(keys, key=lambda k: (k.split(" (")[0] != "overall", keys.index(k)))

    def series(self, key: str) -> list[HistoryPoint]:
        """The points with a score of one series of :meth:`dimensions`."""
        modes = {b.name: b.mode for b in self.batches}
        dimension, _, mode = key.partition(" (")
        mode = mode.rstrip(")")
        return [
            p
            for p in self.points
            if p.score is not None and p.dimension == dimension and (not mode or modes[p.batch] == mode)
        ]

    def as_dict(self) -> dict[str, Any]:
        """``{"model", "also", "batches": [...], "points": [...], "notes"}``: batches in load order; points in
        batch, scenario and dimension order, each with its verdict fields (null at a chain's start)."""
        return {
            "model": self.model,
            "also": list(self.also),
            "batches": [b.as_dict() for b in self.batches],
            "points": [p.as_dict() for p in self.points],
            "regressions": len(self.regressions),
            "notes": list(self.notes),
        }
