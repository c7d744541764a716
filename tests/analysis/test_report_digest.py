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
  that reliability each measure; ``NUMBERS`` are unchanged. Both re-recorded for issue 28 points 2, 4, 5, 7, 8
and 10, whose changes of the statistics are on purpose (each checked field by field against the numbers of
6c48c38): a model's interval is the expanded percentile one (every ``ci_low``/``ci_high`` of a ranking), the 0-1
overall leaves the continuous MQM dimension out where a scenario has a Likert one (the overall scores, their
agreement, pairs and letters), the position-effect CI is clustered by reviewer, and the weight sensitivity's
ranks are those of the weights alone; the new fields (the new panel's interval, the reviewer design, the
weights-with-noise columns, the pairwise ties) are left out of ``NUMBERS`` as added. The rating cases' JSON,
Markdown and HTML re-recorded for issue 30 section 3: a new section, ``anytime`` (anytime-valid verdicts per
scenario); without it the three render to the digests before (checked), and ``NUMBERS`` are unchanged. Re-recorded
for issue 30 sections 2-3 (December 2026): the pairwise case's JSON, Markdown and HTML gain the section (head-to-head
verdicts; without it the three render to the digests before, checked), and the rating cases' Markdown and HTML the
section's corrected note (it named the empirical-Bernstein sequence; the report uses the asymptotic one: with the
old note put back, all three render to the digests before, checked). Re-recorded for issue 32 section 1: every
case's JSON, Markdown and HTML gain the ``style`` section (style-controlled rankings); without it all of them render
to the digests before (checked), the CSV is unchanged, and ``NUMBERS`` are unchanged. Re-recorded again for the same
issue's section 3: the JSON, Markdown and HTML gain ``agreement_trends`` (alpha per window of completed samples);
without it they render to the digests with ``style`` (checked); the CSV and ``NUMBERS`` are unchanged. And for its
section 2: the JSON, Markdown and HTML gain ``fragility`` (the samples and reviewers whose removal undoes each
verdict); without it they render to the digests before (checked); the CSV and ``NUMBERS`` are unchanged. And for
the rest of section 3: the JSON, Markdown and HTML gain ``adjudication`` (disagreements beyond the rubric's threshold
and their rulings; none ruled here); without it they render to the digests before (checked); the CSV and
``NUMBERS`` are unchanged.

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
        "json": "2d975dbd38f476941fbdcca5102c68ce4b5dfe73c15717a5df99eaa2d5d0e792",
        "csv": "a2c6c285cfc6d4166b28221e5632feb1a0fdf34fdae5adc0bf2c6cb03be8ae07",
        "md": "00e74d8f697562c4e2185264bd484f991cf6a934509f657048bbce26b33da9cc",
        "html": "c1541119929bc225ffda60ee833aad27b8e83758a1f62108541cb8703f979096",
    },
    "rating-weighted": {
        "json": "af3b67975ba5142e768ebaee3e687c27512f6bfe48209575c5316b6497475fa0",
        "csv": "0598bd470dd27710e5153ee9d8114c779038587ee30ff24e255d2d50bbf1c41e",
        "md": "6754a3c3dc1841d94f53a5edfdde9a2bbbd80fa860b2bb3040f38837610f3b0a",
        "html": "5551f2cafd52cc48c44369c8b6b08d861968330a9289e7d1834cc80757bd0a51",
    },
    "pairwise": {
        "json": "8beedd6c5e61b65a2ccb697e103a0c363f30fa76834ce66083493d6ba6c93f19",
        "csv": "0b51d63c972231a38da0423ae3644b3012e5437ed7c4fd8afde2949922ebfb2a",
        "md": "68c9e383bd60d8cfee0499aa82fea9c427fefdd1db677ff7e91ec47e69dd87d7",
        "html": "372681ef5a937e84ea9a4692edb7c119ff05913105684003118df7f4559ee95f",
    },
    "rating-no-repeats": {
        "json": "b6b5e561a233c012e6cca28b71765cdd2a7e3d4e790ebb5c84a1c71cb30c9054",
        "csv": "a2c6c285cfc6d4166b28221e5632feb1a0fdf34fdae5adc0bf2c6cb03be8ae07",
        "md": "6f2d414350674881f0480feb507d1092561b94c8ec15bc5eef776bd4ddf445a9",
        "html": "dc22f42f2724266fb8f047a000eb144623c5d56455f73cba2336389a0cb0918d",
    },
}


NUMBERS = {
    "rating": "f92bb67183293d205dca9271e627bcdefb19747b41befa726abe46a39e82dd08",
    "rating-weighted": "309d7f2e82275b960827a5cbd16107a09f75b6929c4b1c92b9d8bbc788e91bad",
    "pairwise": "c4778fc6a87d7cf94a5f7abd7ac8d7afaf94ee640e1aee80b342f37b3a86f454",
    "rating-no-repeats": "d499f39f6dfc04299561f7889059e1a18da1a8ee0de242df9dcdc50cd85e63cd",
}

ADDED = {
    "panel_ci_low",  # issue 28 point 4: the interval for a new panel of reviewers
    "panel_ci_high",
    "reviewer_design",  # issue 28 point 2: only where reviewers did particular models (not in these panels)
    "share_first_with_noise",  # issue 28 point 7: weights and noise together, beside the weights alone
    "rank_best_with_noise",
    "rank_worst_with_noise",
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
    "anytime",  # issue 30 section 3: anytime-valid verdicts per scenario (a new section; NUMBERS unchanged)
    "style",  # issue 32 section 1: style-controlled rankings (a new section; NUMBERS unchanged)
    "agreement_trends",  # issue 32 section 3: agreement over time (a new section; NUMBERS unchanged)
    "fragility",  # issue 32 section 2: how fragile the verdicts are (a new section; NUMBERS unchanged)
    "adjudication",  # issue 32 section 3: disputes and rulings (a new section; NUMBERS unchanged)
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
