"""The report's numbers have not changed since the starting commit, and its bytes change only on purpose.

Each case loads a deterministic simulated batch (``tests.support.report_panels.build_panel_db``) into this
test's database: rating mode with a Likert and a continuous dimension, repeats (or none: then every rating
counts), a lead rater, leaked names masked; pairwise mode with leaked outputs excluded. It computes the
report through ``batch_report`` and renders all four formats. ``generated_at`` is fixed because it is the one
field that depends on the clock.

Two guards:

* ``NUMBERS``: the sha256 of the JSON report with its sentences (summaries, warnings, notes, reasons, method
  definitions) and the fields added since (comments, reviewers' seconds, pairwise win probability against an
  average model) taken out: every score, interval, p-value, rank, tier, letter, alpha and flag. Recorded by
  running the same builder and calls with the code of commit 0c7315f (a worktree of it, ``PYTHONPATH``
  pointing there, ``tests/support/report_panels.py`` copied in); the code of this commit gives the same.
* ``DIGESTS``: the whole output in each format, recorded with this commit's code on SQLite and PostgreSQL
  (both gave the same), every decimal number to :data:`DIGITS` significant digits. The outputs changed from
  0c7315f's on purpose (issue 8 points 9-12: comments, low agreement said first with its alpha, significant
  digits and readable headings in Markdown/HTML, tier colours and axes at the scale's bounds, the
  fast-reviewer flag and seconds per item, win probability against an average model); re-record them only
  for a change of the report's wording or layout, never for a change of ``NUMBERS``. Re-recorded for issue 28
  point 3: a new section per ranking, ``reliability`` (split-half reliability of the models' means, in every
  format, left out of ``NUMBERS`` as an added field), and the low-agreement sentences worded by what alpha and
  that reliability each measure; ``NUMBERS`` are unchanged.

Both were recorded at full precision until 1 December 2026, when a machine with AVX-512 gave other last bits
(see :data:`DIGITS`). They were then re-recorded rounded, from a run that first reproduced the full-precision
digests of 0c7315f's numbers (with the environment that makes numpy and OpenBLAS take the earlier machines'
paths); the rounded digests are the same with and without that environment, and with another BLAS kernel.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy.engine import Engine

from reviewer_app.reporting.formats import render
from reviewer_app.results.batch_reports import batch_report
from tests.support.report_panels import build_panel_db

CASES: dict[str, dict[str, Any]] = {
    "rating": {"mode": "rating", "weights": None, "seed": None},
    "rating-weighted": {"mode": "rating", "weights": {"extraction": 2.0, "summary": 0.5}, "seed": 11},
    "pairwise": {"mode": "pairwise", "weights": None, "seed": None},
    "rating-no-repeats": {"mode": "rating", "weights": None, "seed": None, "repeats": False},
}

DIGESTS = {
    "rating": {
        "json": "6df677d365cdfcd5a52580be18e61152bcfe0381a74a9a60734087d3f3fb1a0e",
        "csv": "fb6d2c1d93f7d8c74e3f4d31dfc818b0444a59dcb64f5b97f3b1a804c3317c40",
        "md": "93e07d64116169c8b439519db2897a452dd7b24c6ef2b46264c613e999e0b213",
        "html": "4f1ff6b4e48b2a9ad894172fd9569788fce52697b734f42a11554522733c3477",
    },
    "rating-weighted": {
        "json": "05b9d260d86bda8859e9d2b6c90c821b24f99fe37a1a246c4a88c449721ecb8e",
        "csv": "e036bd99629761b64781724dea435bb65e7665298b7e4c346604f2f80b6dfa0d",
        "md": "4a9fd39569ae368530f996625c1f00c834be4b2bf7681a163c3557a45ed0d267",
        "html": "1a72eb304509a6a4c522c7e52d9ad3de4ac59b974ee5257c4f2da554ca01b17d",
    },
    "pairwise": {
        "json": "281e3c747c00cebb387ff1431dd3d56d983b79d3b6dc3befe2541a5fe413dcc8",
        "csv": "b0775b61e64d1824af035c2e48b15674da7294cff8c7c7fd61d65c292902f64b",
        "md": "6cee9ae518591918350497ed87a76ae0b651fdf84833609feec2bee2bfdfa788",
        "html": "5973f6e6ad329d49f4b52bf224aa7288feeddd1fe2c1650537999e78a946e004",
    },
    "rating-no-repeats": {
        "json": "aa58d226bffbd13156d12ecbed3e02cbcfe893e9701f131e46a70b3e0572e2c7",
        "csv": "fb6d2c1d93f7d8c74e3f4d31dfc818b0444a59dcb64f5b97f3b1a804c3317c40",
        "md": "67069fa02f7598daba7aa0cbe6d6c55e58aadcee9449235eb46ce687a712c4c8",
        "html": "2d32013fbe4d26fafa9ca53f9590eb78e35290c97cd5bc370a01d327120e3cc7",
    },
}


NUMBERS = {
    "rating": "4b366792d294bc8faae2f33b052c97fe18cd614db58290d23c06daa4897e6a34",
    "rating-weighted": "c3df09657c5a32fbc682f36a921827f1af0979c45e4fdd7ad91f2354e55dd507",
    "pairwise": "a0efd3c4a2d2a83284434561f5a3d2e199d6419444ca98b663c01db9634f8ee4",
    "rating-no-repeats": "7214930cbdebdaa8644ab72aa5f811acec2d7cbe3196d755a3a584320ca0a588",
}

ADDED = {
    "comments",
    "median_seconds",
    "timed_n",
    "win_vs_average",
    "win_vs_average_ci_low",
    "win_vs_average_ci_high",
    "reliability",
    "p_best",
}
SENTENCES = {"summary", "warnings", "notes", "note", "definitions", "reasons"}


# Floats are compared to 10 significant digits. The last bits of a bootstrap interval or a p-value depend
# on the processor: numpy's sums and OpenBLAS's matrix products take other SIMD paths with AVX-512 (the
# full-precision digests recorded on earlier machines failed on one that has it, and passed on it with
# OPENBLAS_CORETYPE=Haswell NPY_DISABLE_CPU_FEATURES="X86_V4 AVX512_ICL AVX512_SPR", which the rounded digests
# below were checked against too). A change of a statistic moves far more than the 11th digit.
DIGITS = 10
_FLOAT = re.compile(r"-?\d+\.\d+(?:[eE][-+]?\d+)?|-?\d+[eE][-+]?\d+")


def numbers_only(value: Any) -> Any:
    """The JSON report without its sentences and without the fields added after the starting commit, floats
    to :data:`DIGITS` significant digits."""
    if isinstance(value, dict):
        return {k: numbers_only(v) for k, v in value.items() if k not in ADDED and k not in SENTENCES}
    if isinstance(value, list):
        return [numbers_only(v) for v in value]
    if isinstance(value, float):
        return float(f"{value:.{DIGITS}g}")
    return value


def normalised(text: str) -> str:
    """A rendered report with every decimal number to :data:`DIGITS` significant digits (the formats that
    print few digits are left as they are)."""
    return _FLOAT.sub(lambda m: f"{float(m.group()):.{DIGITS}g}", text)


@pytest.mark.parametrize("case", list(CASES))
def test_report_numbers_match_the_starting_commit_and_bytes_this_one(engine: Engine, tmp_path: Path, case: str) -> None:
    c = CASES[case]
    name = build_panel_db(engine, tmp_path / "files", mode=c["mode"], repeats=c.get("repeats", True))
    report = batch_report(engine, batch=name, rounds=200, weights=c["weights"], seed=c["seed"])
    report = dataclasses.replace(report, generated_at="2026-11-30T00:00:00+00:00")
    rendered = {fmt: render(report, fmt) for fmt in DIGESTS[case]}
    numbers = json.dumps(numbers_only(json.loads(rendered["json"])), sort_keys=True)
    assert hashlib.sha256(numbers.encode("utf-8")).hexdigest() == NUMBERS[case]
    got = {fmt: hashlib.sha256(normalised(text).encode("utf-8")).hexdigest() for fmt, text in rendered.items()}
    assert got == DIGESTS[case]
