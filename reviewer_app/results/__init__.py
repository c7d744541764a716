"""A batch's report as leads read it: read from the database, built, cached and rendered, with public
benchmark scores and production feedback beside the panel.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from reviewer_app.domain.lazy_names import lazy_names

if TYPE_CHECKING:
    from reviewer_app.results.allocation import PoolState, pool_state, refresh_allocation, start_refresher
    from reviewer_app.results.batch_reports import batch_report, parse_weights, write_report
    from reviewer_app.results.benchmark_scores import check_margin, parse_benchmark_scores, read_benchmark_scores
    from reviewer_app.results.plans import parse_components, parse_ks, plan_from_assumptions, plan_from_pilot
    from reviewer_app.results.report_cache import ReportCache
    from reviewer_app.results.webhook_watch import start_webhooks, watch_and_deliver

__all__ = [
    "PoolState",
    "ReportCache",
    "batch_report",
    "check_margin",
    "parse_benchmark_scores",
    "parse_components",
    "parse_ks",
    "parse_weights",
    "plan_from_assumptions",
    "plan_from_pilot",
    "pool_state",
    "read_benchmark_scores",
    "refresh_allocation",
    "start_refresher",
    "start_webhooks",
    "watch_and_deliver",
    "write_report",
]

# Where each name lives: imported on first use, so that importing one module of the package (as every
# `blind-review` command does) does not load all of it.
_HOMES = {
    "watch_and_deliver": "reviewer_app.results.webhook_watch",
    "start_webhooks": "reviewer_app.results.webhook_watch",
    "PoolState": "reviewer_app.results.allocation",
    "pool_state": "reviewer_app.results.allocation",
    "refresh_allocation": "reviewer_app.results.allocation",
    "start_refresher": "reviewer_app.results.allocation",
    "ReportCache": "reviewer_app.results.report_cache",
    "batch_report": "reviewer_app.results.batch_reports",
    "check_margin": "reviewer_app.results.benchmark_scores",
    "parse_benchmark_scores": "reviewer_app.results.benchmark_scores",
    "parse_components": "reviewer_app.results.plans",
    "parse_ks": "reviewer_app.results.plans",
    "parse_weights": "reviewer_app.results.batch_reports",
    "plan_from_assumptions": "reviewer_app.results.plans",
    "plan_from_pilot": "reviewer_app.results.plans",
    "read_benchmark_scores": "reviewer_app.results.benchmark_scores",
    "write_report": "reviewer_app.results.batch_reports",
}


__getattr__ = lazy_names(__name__, _HOMES)
