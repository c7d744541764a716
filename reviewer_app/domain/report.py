"""The typed report: what ``analysis.report.build_report`` returns and what every renderer and page reads.

The types mirror ``reviewer_app/reporting/schema.json``, the published JSON contract (a test walks both and
checks that each schema object has a type with the same fields, and each required field is never null).
:func:`report_to_dict` is the only way from the types to JSON: a field marked with ``report_fields.omitted``
is left out of the JSON when it is None (``win_rates`` outside pairwise mode, for instance); any other None
is null.

This module is the top-level :class:`Report` and its way to JSON; the sections are types of their own
modules, and a table's columns are described once, on its row type (``RankingRow.COLUMNS`` ...), as
``report_fields.Column``: the field a cell shows and its heading. The HTML report shows every column; the
Markdown report and the CSV only the ``brief`` ones.

    Report
    ├── scenarios: ScenarioReport        agreement (AgreementRow), ranking (RankingRow), pairs (PairRow),
    │                                    win_rates (WinRateRow)                          (report_rankings)
    ├── overall: OverallReport           the same across scenarios (LeftOutRow: models not ranked there),
    │                                    plus Composite and WeightSensitivity            (report_rankings)
    ├── reviewers: ReviewerRow           per-reviewer diagnostics and flags                 (report_panel)
    ├── beside: Beside                   OutputStats, PositionBias / PositionEffect, StabilityRow
    ├── methods: Methods                 Counts, MethodDimension, definitions
    ├── comments: CommentGroup           per scenario and model: counts, the latest CommentRows
    ├── production: PanelProduction      the panel against production feedback           (production)
    ├── judge: JudgeSection              an LLM judge against the panel, judge-assisted rankings (report_assisted)
    └── anytime: AnytimeScenario         anytime-valid verdicts per scenario                 (report_anytime)

Benchmark sections (``benchmarks``) sit in a scenario's and the overall block; what an agreement row's
``low_agreement`` means, and the sentences that say it, are ``low_agreement``'s.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, fields, is_dataclass
from typing import Any

from reviewer_app.domain.enums import Mode
from reviewer_app.domain.production import PanelProduction
from reviewer_app.domain.report_adjudication import AdjudicationSection
from reviewer_app.domain.report_anytime import AnytimeScenario
from reviewer_app.domain.report_assisted import JudgeSection
from reviewer_app.domain.report_fields import OMIT_IF_NONE, omitted
from reviewer_app.domain.report_fragility import FragilityRow
from reviewer_app.domain.report_panel import Beside, CommentGroup, Methods, ReviewerRow
from reviewer_app.domain.report_rankings import OverallReport, ScenarioReport
from reviewer_app.domain.report_style import StyleRanking
from reviewer_app.domain.report_windows import AgreementTrend
from reviewer_app.domain.scales import spec_of

__all__ = ["Report", "SCHEMA_VERSION", "records", "report_to_dict", "score_bounds"]

SCHEMA_VERSION = 1


@dataclass(frozen=True, kw_only=True)
class Report:
    """The whole report of one batch. Model names are unblinded: for leads and admins only."""

    schema_version: int
    batch: str
    generated_at: str  # ISO 8601, to the second
    mode: Mode
    models: tuple[str, ...]
    scenarios: tuple[ScenarioReport, ...]
    overall: OverallReport
    reviewers: tuple[ReviewerRow, ...]
    beside: Beside
    methods: Methods
    comments: tuple[CommentGroup, ...]  # reviewers' comments and can't-judge reasons, per scenario and model
    # Whether production feedback (``import-feedback``) agrees with the panel, for the batch's models that
    # have some; left out when none has.
    production: PanelProduction | None = omitted()
    # An LLM judge measured against the panel, and the rankings that use it (``blind-review judge``); left out
    # when no judge rated the batch.
    judge: JudgeSection | None = omitted()
    # Anytime-valid verdicts per scenario on the overall score (rating batches; ``analysis.anytime``): valid
    # however often the results are looked at. Left out in pairwise mode and when no sample is complete.
    anytime: tuple[AnytimeScenario, ...] | None = omitted()
    # Style-controlled rankings per scenario and dimension (``analysis.style_control``): the ranking with the
    # outputs' length and Markdown held fixed. Left out when the outputs carry no style counts.
    style: tuple[StyleRanking, ...] | None = omitted()
    # Agreement over time per scenario (``analysis.agreement_windows``): alpha in windows of completed samples,
    # the latest flagged when below the scenario's level. Left out before any scenario has two windows.
    agreement_trends: tuple[AgreementTrend, ...] | None = omitted()
    # How fragile each scenario's overall verdicts are (``analysis.fragility``): the samples and reviewers whose
    # removal undoes "A is first" or "A > B". Left out when no scenario has a verdict (no separation).
    fragility: tuple[FragilityRow, ...] | None = omitted()
    # Disagreements beyond the rubric's threshold and the rulings on them (``analysis.disputes``); ``used`` says
    # whether the rankings read the rulings. Left out when nothing is disputed or ruled.
    adjudication: AdjudicationSection | None = omitted()


def score_bounds(report: Report, dimension: str) -> tuple[float, float] | None:
    """The lowest and highest score a ranking on ``dimension`` can have, where a chart's axis ends; None where
    scores have no bounds (pairwise: Bradley-Terry strengths). Rating mode: the dimension's scale (binary
    0-1), and 0-1 for the overall score, its variant without low-agreement dimensions, and the composite."""
    if report.mode == Mode.PAIRWISE:
        return None
    for d in report.methods.dimensions:
        if d.name == dimension:
            return spec_of(d.scale).bounds(d)
    return (0.0, 1.0) if dimension in ("overall", "overall_agreed", "composite") else None


def report_to_dict(report: Report) -> dict[str, Any]:
    """The report as the JSON object of ``schema.json``: plain dicts, lists, numbers and strings."""
    out: dict[str, Any] = _plain(report)
    return out


def records(rows: Iterable[object]) -> list[dict[str, Any]]:
    """Rows of a report table as JSON-style dicts (one key per field, as in the JSON), e.g. for a DataFrame."""
    return [_plain(row) for row in rows]


def plain(value: object) -> Any:
    """Any part of the report as JSON-style data (see :func:`report_to_dict`)."""
    return _plain(value)


def _plain(value: object) -> Any:
    if is_dataclass(value) and not isinstance(value, type):
        out = {}
        for f in fields(value):
            item = getattr(value, f.name)
            if item is None and f.metadata.get(OMIT_IF_NONE):
                continue
            out[f.name] = _plain(item)
        return out
    if isinstance(value, tuple | list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, float) and not math.isfinite(value):
        return None  # JSON has no NaN
    return value
