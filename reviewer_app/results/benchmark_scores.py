"""Read a lead's public benchmark scores (CSV) for the report: ``model,benchmark,score``, one row per model and
benchmark, several benchmarks in one file.

Scores may be on any scale (accuracy 0-1, a percentage, an Elo): a "point" is one unit of the benchmark's own
score. A benchmark is higher-is-better unless an optional ``higher_is_better`` column says ``false`` (the same
value on each of the benchmark's rows). Every problem is collected and reported at once with its line and
column (:class:`BenchmarkScoresError`); nothing is read from a file with any problem. A UTF-8 byte-order mark
(Excel's "CSV UTF-8") is accepted.
"""

from __future__ import annotations

import csv
import io
import math
from pathlib import Path

from reviewer_app.domain.benchmarks import DEFAULT_MARGIN, BenchmarkScores
from reviewer_app.errors import BenchmarkScoresError, Problem

REQUIRED = ("model", "benchmark", "score")
OPTIONAL = ("higher_is_better",)
EXAMPLE = "model,benchmark,score\naurora-7b,MMLU,71.2\nborealis-xl,MMLU,78.9"
_TRUE = {"true", "yes", "1", "higher"}
_FALSE = {"false", "no", "0", "lower"}


def check_margin(margin: float) -> float:
    """``margin`` if it is a finite number of benchmark points >= 0; raises BenchmarkScoresError."""
    if not math.isfinite(margin) or margin < 0:
        raise BenchmarkScoresError(
            [Problem.argument("benchmark_margin", f"{margin} is not a number of benchmark points >= 0, e.g. 2")]
        )
    return float(margin)


def read_benchmark_scores(path: Path, *, margin: float = DEFAULT_MARGIN) -> BenchmarkScores:
    """The scores in the CSV file ``path``; raises BenchmarkScoresError (unreadable file or bad rows)."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise BenchmarkScoresError(
            [Problem(str(path), None, None, f"cannot read it ({exc.strerror}); check the path")]
        ) from exc
    return parse_benchmark_scores(data, source=str(path), margin=margin)


def parse_benchmark_scores(data: bytes, *, source: str, margin: float = DEFAULT_MARGIN) -> BenchmarkScores:
    """The scores in ``data`` (a CSV file's bytes, e.g. an upload named ``source``); raises BenchmarkScoresError."""
    margin = check_margin(margin)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise BenchmarkScoresError(
            [Problem(source, None, None, f"is not UTF-8 text (byte {exc.start}); save it as CSV UTF-8")]
        ) from exc
    if not text.strip():
        raise BenchmarkScoresError(
            [Problem(source, None, None, f"the file is empty; it needs a header and rows:\n{EXAMPLE}")]
        )
    reader = csv.reader(io.StringIO(text, newline=""))
    header = [h.strip().lower() for h in next(reader)]
    missing = [c for c in REQUIRED if c not in header]
    if missing:
        raise BenchmarkScoresError(
            [
                Problem(source, 1, c, f"no column {c!r} in the header (found: {', '.join(header) or 'none'})")
                for c in missing
            ],
            hint=f"The first line names the columns model,benchmark,score, e.g.\n{EXAMPLE}",
        )
    col = {c: header.index(c) for c in (*REQUIRED, *OPTIONAL) if c in header}
    problems: list[Problem] = []
    scores: dict[str, dict[str, float]] = {}
    seen: dict[tuple[str, str], int] = {}
    direction: dict[str, tuple[bool, int]] = {}
    for row in reader:
        line = reader.line_num
        if not any(cell.strip() for cell in row):
            continue
        if len(row) != len(header):
            problems.append(Problem(source, line, None, f"{len(row)} values but the header has {len(header)} columns"))
            continue
        model, bench, raw = (row[col[c]].strip() for c in REQUIRED)
        for name, value in (("model", model), ("benchmark", bench)):
            if not value:
                problems.append(Problem(source, line, name, "is empty"))
        score = _score(raw, source, line, problems)
        if "higher_is_better" in col:
            _direction(row[col["higher_is_better"]].strip().lower(), bench, direction, source, line, problems)
        if not model or not bench or score is None:
            continue
        first = seen.setdefault((model, bench), line)
        if first != line:
            problems.append(
                Problem(source, line, None, f"{model} on {bench} again (first on line {first}); keep one row")
            )
            continue
        scores.setdefault(bench, {})[model] = score
    if not problems and not scores:
        problems.append(
            Problem(source, None, None, f"no rows under the header; add one row per model and benchmark:\n{EXAMPLE}")
        )
    if problems:
        raise BenchmarkScoresError(problems)
    higher = {b: d for b, (d, _) in direction.items()}
    return BenchmarkScores(source=source, scores=scores, higher_is_better=higher, margin=margin)


def _score(raw: str, source: str, line: int, problems: list[Problem]) -> float | None:
    try:
        value = float(raw) if raw else None  # "71,2" is no number: a decimal comma would read as 712
    except ValueError:
        value = None
    if value is None:
        problems.append(Problem(source, line, "score", f"{raw!r} is not a number" if raw else "is empty"))
        return None
    if not math.isfinite(value):
        problems.append(Problem(source, line, "score", f"{raw!r} is not a finite number"))
        return None
    return value


def _direction(
    raw: str, bench: str, direction: dict[str, tuple[bool, int]], source: str, line: int, problems: list[Problem]
) -> None:
    if not raw:
        return
    if raw not in _TRUE | _FALSE:
        problems.append(Problem(source, line, "higher_is_better", f"{raw!r} is not true or false"))
        return
    value = raw in _TRUE
    known = direction.setdefault(bench, (value, line))
    if known[0] != value:
        problems.append(
            Problem(source, line, "higher_is_better", f"{raw!r} for {bench}, which line {known[1]} set the other way")
        )
