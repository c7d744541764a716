"""Types of the production monitor (``blind-review monitor``) and of the panel-versus-production comparison.

Frozen, keyword-only dataclasses of plain fields, as the report's (``domain.report``): :func:`plain` turns any
of them into JSON-style data. Model names are unblinded: these are for leads only.

    MonitorResult
    ├── windows: WindowRow       per model (and scenario) and time window: volume, feedback with its 95% CI,
    │                            latency and time to first token (median, p95)
    ├── changes: ChangeRow       consecutive windows of a model, and canary against current model, each test
    │                            named, Holm-adjusted over all of the result's tests
    └── canaries                 the NEW=CURRENT pairs asked for
    PanelProduction              per model in both a batch and production: the production feedback; per pair
                                 of them: ProductionPair, what production says and whether reviewers agree
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields, is_dataclass
from typing import Any

__all__ = [
    "ChangeRow",
    "MonitorResult",
    "PanelProduction",
    "ProductionModel",
    "ProductionPair",
    "THUMBS",
    "WINDOWS",
    "WindowRow",
    "plain",
    "scale_label",
]

THUMBS = (-1.0, 1.0)  # the default scale: +1 / -1, summarised as the share of +1 (the rate)
WINDOWS = ("1d", "7d")


def scale_label(scale_min: float, scale_max: float) -> str:
    """``thumbs`` for -1..1, else ``MIN-MAX`` (``1-5``): the scale a row's feedback is on."""
    if (scale_min, scale_max) == THUMBS:
        return "thumbs"
    return f"{scale_min:g}-{scale_max:g}"


@dataclass(frozen=True, kw_only=True)
class WindowRow:
    """One model (and scenario; None: all scenarios together) in one time window.

    ``mean`` is the share of +1 on the thumbs scale (Wilson 95% CI), else the mean feedback (t 95% CI).
    Latency and TTFT quantiles are None where no event of the window has them; their ``n`` say how many do.
    """

    model: str
    scenario: str | None
    scale: str  # scale_label
    window: str  # the window's first day, YYYY-MM-DD (UTC)
    n: int  # feedback events (the volume)
    mean: float
    ci_low: float | None
    ci_high: float | None
    ci_method: str  # "Wilson" or "t"
    latency_n: int
    latency_p50: float | None
    latency_p95: float | None
    ttft_n: int
    ttft_p50: float | None
    ttft_p95: float | None


@dataclass(frozen=True, kw_only=True)
class ChangeRow:
    """One test: a model's window against its previous window with events (``kind`` "window"), or a canary
    model against the current one in the same window or over all windows (``kind`` "canary", ``window``
    "overall"). ``metric`` is "feedback", "latency_ms" or "ttft_ms"; ``before``/``after`` the share or mean
    (feedback) or median (latency). ``p_adjusted`` is Holm's over every test of the result; ``flagged`` is
    ``p_adjusted < 0.05``."""

    kind: str
    model: str
    against: str  # the model compared with: the same model (window) or the current one (canary)
    scenario: str | None
    scale: str
    metric: str
    window: str
    before_window: str
    before: float
    after: float
    n_before: int
    n_after: int
    change: float  # after - before
    test: str
    p_value: float
    p_adjusted: float
    flagged: bool


@dataclass(frozen=True, kw_only=True)
class MonitorResult:
    """What ``monitor`` computes: rows and tests in a fixed order (model, scenario, window)."""

    window: str  # "1d" or "7d"
    first_event: str | None  # ISO 8601 UTC, None when there is no event
    last_event: str | None
    events: int
    models: tuple[str, ...]
    canaries: tuple[tuple[str, str], ...]  # (new, current)
    windows: tuple[WindowRow, ...]
    changes: tuple[ChangeRow, ...]
    notes: tuple[str, ...]

    @property
    def flagged(self) -> tuple[ChangeRow, ...]:
        return tuple(c for c in self.changes if c.flagged)


@dataclass(frozen=True, kw_only=True)
class ProductionModel:
    """A model in both the batch and production: its panel rank and its production feedback with 95% CI."""

    model: str
    panel_rank: int
    panel_score: float | None
    scale: str
    n: int
    mean: float
    ci_low: float | None
    ci_high: float | None


@dataclass(frozen=True, kw_only=True)
class ProductionPair:
    """Two models in both: which one production puts above (``higher``; the first of the pair when no
    difference), its test, the Holm-adjusted p over all pairs, the panel's order and the verdict:
    "agree", "disagree", "panel sees no difference", "production sees no difference" or "both see no
    difference"; ``sentence`` says it in words."""

    higher: str
    lower: str
    production_diff: float  # higher's mean minus lower's
    test: str
    p_value: float
    p_adjusted: float
    production_significant: bool
    panel_higher: str | None  # the model the panel separates above the other; None: not separated
    agreement: str
    sentence: str


@dataclass(frozen=True, kw_only=True)
class PanelProduction:
    """Whether the panel's verdict and production agree, for the models of a batch that have feedback."""

    dimension: str  # the ranking's dimension the panel's order comes from
    scale: str  # the production scale compared (the most common one among these models)
    models: tuple[ProductionModel, ...]
    pairs: tuple[ProductionPair, ...]
    notes: tuple[str, ...]

    @property
    def sentences(self) -> tuple[str, ...]:
        return tuple(p.sentence for p in self.pairs)


def plain(value: object) -> Any:
    """Any of these types as JSON-style data (NaN and infinities become None)."""
    if is_dataclass(value) and not isinstance(value, type):
        return {f.name: plain(getattr(value, f.name)) for f in fields(value)}
    if isinstance(value, tuple | list):
        return [plain(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value
