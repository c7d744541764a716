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
        "json": "947c13867a3b21cff1ab56bb84026641f7a048f4b37f06278f831039ba23e173",
        "csv": "96659453d382e8ac068b75883760e4a56f620734f1a127fa073cfae9a618509c",
        "md": "6592a1d3bd6814b1cf07349fe9b079b34c0f4e1afbfdcdabe0b2393537d49ffe",
        "html": "457eb622baab39b8316681e0c43d73921c87715d4a62ab423cefd274c4db701f",
    },
    "rating-weighted": {
        "json": "f71c35e65fc90807611f362eff48207fe91952e6fa8b107e7537fe74ce9276b0",
        "csv": "77261e67a398c8a142fc428c3826e7a3ab96342f98d4b61e8c69382660e4f814",
        "md": "b2d2bc64e1660c359396408f2fafd58c0676b2a04ea3c8dd16b73db1cfe8752f",
        "html": "985139084593c15d0e084ef554c1920b077134c1dce0ef280cd1f03e8aa4c22f",
    },
    "pairwise": {
        "json": "b199a1fdba21910a5c088911725ff997d7b239ab6cf508d781282272921e2a90",
        "csv": "fcf67f26dece3c8cb4c8de2a4b9e6fe5b46b125b8da83482842e13b76eeb41e4",
        "md": "d8a0bf8f8392910ec6befb23b5ada7f297ac39afc013f71cc470691a581f284c",
        "html": "3e95c86f494acd67907b9f25c392f6e6e28050f6d31b021098d5afd4c652b053",
    },
    "rating-no-repeats": {
        "json": "38970f6523ff272f4b2407836719fa5e2f10916924f63d7ec444f8f219879b24",
        "csv": "96659453d382e8ac068b75883760e4a56f620734f1a127fa073cfae9a618509c",
        "md": "cef8623fd22833d5484a66d0f81630b21155dfb335bb2eccbb3ddf7242537702",
        "html": "2249ea6f74828e9eab17dae9c994af745bc91af3f07e7316749f2639c8e058f2",
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
    "holm_ci_low",
    "holm_ci_high",
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
