"""A batch's report as leads read it: read from the database, built, cached and rendered, with public
benchmark scores and production feedback beside the panel.
"""

from reviewer_app.results.batch_reports import batch_report, parse_weights, write_report
from reviewer_app.results.benchmark_scores import check_margin, parse_benchmark_scores, read_benchmark_scores
from reviewer_app.results.report_cache import ReportCache

__all__ = [
    "ReportCache",
    "batch_report",
    "check_margin",
    "parse_benchmark_scores",
    "parse_weights",
    "read_benchmark_scores",
    "write_report",
]
