"""A study's plan (``blind-review plan``): how many samples per scenario separate a given gap with the report's
own test, at each number of reviewers per output, and the power curve behind it (``analysis.planning``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from reviewer_app.domain.report_fields import Column, percent_or_none

__all__ = ["CurvePoint", "Plan", "PlanRow"]


@dataclass(frozen=True, kw_only=True)
class PlanRow:
    """One scenario at one ``k`` (reviewers per output): the samples that give the target power (None: more
    than the limit), and what that costs in judgements (samples x models x k)."""

    scenario: str
    k: int
    samples: int | None
    judgements: int | None
    difference_sd: float  # the standard deviation of one sample's paired difference at this k

    COLUMNS: ClassVar[tuple[Column, ...]] = (
        Column("scenario", "scenario"),
        Column("k", "reviewers per output"),
        Column("samples", "samples needed"),
        Column("judgements", "judgements"),
        Column("difference_sd", "SD of a paired difference"),
    )


@dataclass(frozen=True, kw_only=True)
class CurvePoint:
    """The simulated power at one number of samples (scenario, k), with its Monte Carlo standard error."""

    scenario: str
    k: int
    samples: int
    power: float
    mc_se: float

    COLUMNS: ClassVar[tuple[Column, ...]] = (
        Column("scenario", "scenario"),
        Column("k", "reviewers per output"),
        Column("samples", "samples"),
        Column("power", "power", show=percent_or_none),
        Column("mc_se", "Monte Carlo error", brief=False),
    )


@dataclass(frozen=True, kw_only=True)
class Plan:
    """The plan: the design asked about, where the variance components came from, the components per scenario
    (squared score units), the rows, the curve and sentences for the lead."""

    models: int
    gap: float
    power: float
    source: str  # "pilot batch NAME, dimension D" or "stated assumptions"
    components: dict[str, dict[str, float]]  # scenario -> sample, output, reviewer, residual
    rows: tuple[PlanRow, ...]
    curve: tuple[CurvePoint, ...]
    sentences: tuple[str, ...]
