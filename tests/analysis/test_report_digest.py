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
        "json": "cd191346938cc6ff24693d590883ba409f15098c188744c77e62b5d808bb9f36",
        "csv": "f0924ca3a2e9d5852a31770f0070ef2911305646fd35100d036db25d3b0b5a25",
        "md": "86e5465104cd7af9a3e25d4843dbcf7e8a81555d16657a25b232583a5498b2ee",
        "html": "f1119580b5bc280b0a5d5b4bd611a7e0c58bdc08712b1663f41ff09fcaa8abe2",
    },
    "rating-weighted": {
        "json": "0143bb60384579683d00d72983d8b5473e320c8e1ba54ba95f3a75e999a1a4b0",
        "csv": "9d89a2e72935292c4bd0ab68ec68cb60da0801ee85b1e34164641383db630bdb",
        "md": "4e2aae2df41427d5fd3ba41aec78435e501166d3079cd574425976c7b867ec07",
        "html": "13fef7534fcaa202b9f1f8bc54cb95516226bf3dd0e16cb9bc04796e0561f36c",
    },
    "pairwise": {
        "json": "f38414d4eba7dc9b6ef74edee9c212b52a86e7de54de1b574ba071e291824054",
        "csv": "ce166a8767310b1f86ab4eb96efeaddb66043f62e932f742e09f5de7ff789b9c",
        "md": "7ead5da8a010ef86b570e391a5f44ce514415b84c829f45137856aff14d6972d",
        "html": "3fde6d9e185d383b84b22d8e1e00397600d691f94e5c88d2bbf5e822298b25d7",
    },
    "rating-no-repeats": {
        "json": "3a998c34b1c2e3c97617a3643c36b426b58c6e018ee6470f7c25dd41f7b1a6d9",
        "csv": "f0924ca3a2e9d5852a31770f0070ef2911305646fd35100d036db25d3b0b5a25",
        "md": "5900089eb5a0fb06eeede3968232e1a7538fc834b98cbfc9bfdf9587af85b0e9",
        "html": "c8ac1ad4d94dffe90f3edd47af59f2b4d3aeb9bfc453b39fbe0482e4ee20e069",
    },
}


NUMBERS = {
    "rating": "4b366792d294bc8faae2f33b052c97fe18cd614db58290d23c06daa4897e6a34",
    "rating-weighted": "c3df09657c5a32fbc682f36a921827f1af0979c45e4fdd7ad91f2354e55dd507",
    "pairwise": "a0efd3c4a2d2a83284434561f5a3d2e199d6419444ca98b663c01db9634f8ee4",
    "rating-no-repeats": "7214930cbdebdaa8644ab72aa5f811acec2d7cbe3196d755a3a584320ca0a588",
}

ADDED = {
    "ties",  # issue 28 point 8: pairwise tie and both-bad rates, Davidson's tie model (NUMBERS unchanged)
    "tie_model",
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
