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
        "json": "2e2c03e4d9165a39ad648fedfc6c2b064496b3d2030fd59513e7696ad56a1030",
        "csv": "8ae1363244407a9d0923bb84de481d8991d4ccb09a9e683d925a2207593c7c79",
        "md": "bc3fe83a86c73dd980279230ee14975f35e607d0a44733ba1989996a20549db0",
        "html": "8eeab4ecd10e30230ba2eca97e64833bf8d2ac6b17ebca3a362e6dfd9f7c7f24",
    },
    "rating-weighted": {
        "json": "038dc9de2c6a4cfaadc4c9453eb84bd1168cdc302585c10af19f16ebdd57c6dc",
        "csv": "3e28686c00b8b8dd7f4ebeec413fcaa2a306549cd260e37c36a2f302c068338e",
        "md": "4be2f16e70b08d1e48d966aad7543b87f9f65075dd7cfdd1ec86f561ff595416",
        "html": "4d9ecce77366fc996bd52b981839d5b786e2363d58e54101dc75190928294fac",
    },
    "pairwise": {
        "json": "cafc7e9ab8146a98ca7622416ef3d077cee4102134df06b0f100831a9cbe3f2e",
        "csv": "8d075226f36a972914e36eff821fbd81ceca9dc30c3fb0fbd385d0a5b0a253b1",
        "md": "4053300d3ce0e1162d219005e920843a82ca8d33a0bb7734f47d91a9f3f0d2e2",
        "html": "9eb6057b7aac5d1a2a4ef7b83e6227b4c55623b4cd935a8eb34e2bf2b3fe68d5",
    },
    "rating-no-repeats": {
        "json": "3a6641bcf19b3a210c0cfce75d9d8e480f0c964559005dbd09ed4170bcdcba69",
        "csv": "8ae1363244407a9d0923bb84de481d8991d4ccb09a9e683d925a2207593c7c79",
        "md": "1860e9b6b51daa4d2b9cd5185fe4efbb930b8ff6d718d8b7cda2c455400466a7",
        "html": "0e5e74d84754046d5ed609a9dbbafce7483cce42a31f8553237f34436fdb5f05",
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
