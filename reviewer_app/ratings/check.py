"""The checks of a ratings file before import, row by row as the file streams past.

Each accepted row is kept column by column (:mod:`reviewer_app.ratings.showings`, which also works out what
the import needs of them). The rules are the ones the import always had: the first answer of a reviewer on a
dimension of an item stands, a later row repeating it is harmless, a later row contradicting it is a problem.
The columns and the free-text cells are :mod:`reviewer_app.ratings.columns`.

An export's ``is_anchor`` column (its last) is read too: a row with it true is an anchor rating of a follow-up
batch (a baseline output shown again), which no import can store as one, so it is refused with its line;
false or empty rows import as usual.

Two optional columns carry what the export writes beside the scores: ``comment`` (the answer's comment,
repeated on each of its rows) and ``cant_judge_reason``. A row with a reason and an empty dimension and score
(winner) is a "can't judge" answer, which has no scores. A showing has one comment and is answered either
with scores or as "can't judge": rows that say otherwise are problems, as contradicting scores are.
"""

from __future__ import annotations

import codecs
import csv
import itertools
import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

from reviewer_app.domain.enums import Mode, PairwiseChoice
from reviewer_app.domain.rubric import Rubric
from reviewer_app.errors import Problem, RatingsImportError
from reviewer_app.ratings.columns import (
    ANCHOR,
    COMMENT,
    PAIRWISE_HEADER,
    RATER_KIND,
    RATING_HEADER,
    REASON,
    read_text_cell,
    text_cell,
)
from reviewer_app.ratings.showings import CheckedRows, Showings, firsts, group_starts, row_keys, showings_of
from reviewer_app.settings import max_comment_chars

WINNERS = ("a", "b", PairwiseChoice.TIE, PairwiseChoice.BOTH_BAD)
_SHOWN = {"a": str(PairwiseChoice.LEFT), "b": str(PairwiseChoice.RIGHT)}  # imported model_a was on the left
_MEMO_LIMIT = 10_000  # distinct (dimension, answer) checks remembered; a continuous scale has endless answers
_TRUE, _FALSE = frozenset({"true", "1", "yes"}), frozenset({"false", "0", "no", ""})

ItemIndex = dict[tuple[str, str, str | None], int]  # (sample key, model a, model b or None) -> item id


def count_lines(path: Path) -> int:
    """Check that the file is readable UTF-8 (before any row is looked at, so a file in another encoding
    gets that one message) and count its lines, for the progress bar. Reads in blocks, never all of it."""
    name = str(path)
    decoder = codecs.getincrementaldecoder("utf-8-sig")()
    lines = 0
    try:
        with path.open("rb") as f:
            while block := f.read(1 << 20):
                decoder.decode(block)
                lines += block.count(b"\n")
            decoder.decode(b"", final=True)
    except OSError as exc:
        raise RatingsImportError([Problem(name, None, None, f"cannot be read ({exc.strerror})")]) from exc
    except UnicodeDecodeError as exc:
        raise RatingsImportError([Problem(name, None, None, "is not UTF-8; re-save it as UTF-8")]) from exc
    return lines


class RowChecker:
    """Checks rows of a ratings file against the batch's items and the rubric's scales."""

    def __init__(self, header: list[str], index: ItemIndex, rubric: Rubric, name: str, batch_name: str) -> None:
        self.name, self.batch_name, self.index, self.rubric = name, batch_name, index, rubric
        self.pairwise = rubric.mode == Mode.PAIRWISE
        # csv.DictReader semantics: a repeated column name reads the last such column.
        self.column = {c: i for i, c in enumerate(header)}
        self.samples = {k[0] for k in index}
        self.dimensions = {d.name: i for i, d in enumerate(rubric.dimensions)}
        self.known = ", ".join(d.name for d in rubric.dimensions)
        self.memo: dict[tuple[int, str], bool] = {}
        names = PAIRWISE_HEADER if self.pairwise else RATING_HEADER
        self.indices = [self.column[c] for c in names]  # the header check made sure they are all there
        self.width = max(self.indices) + 1
        self.comment_at = self.column.get(COMMENT)
        self.reason_at = self.column.get(REASON)
        self.anchor_at = self.column.get(ANCHOR)
        self.kind_at = self.column.get(RATER_KIND)
        self.cant_judge = len(rubric.dimensions)  # the dimension index of a "can't judge" row
        self.limit = max_comment_chars()

    def cells(self, row: list[str]) -> list[str]:
        """The row's cells of the format's columns, stripped; a cell past the row's end reads as empty."""
        if len(row) >= self.width:
            return [row[i].strip() for i in self.indices]
        return [row[i].strip() if i < len(row) else "" for i in self.indices]

    def text(self, row: list[str], at: int | None) -> str:
        """The free text (comment, reason) in column ``at`` of the row, as typed; empty when there is none."""
        if at is None or at >= len(row):
            return ""
        return read_text_cell(row[at].strip())

    def check(self, row: list[str], line: int, out: CheckedRows) -> Problem | None:
        """Add the row's answer to ``out``, or return what is wrong with it."""
        name = self.name
        cells = self.cells(row)
        reviewer, key = cells[0], cells[1]
        if not reviewer:
            return Problem(name, line, "reviewer", "missing")
        if key not in self.samples:
            return Problem(name, line, "sample_id", f"{key!r} is not a sample of batch {self.batch_name!r}")
        if self.anchor_at is not None:
            problem = self.check_anchor(row, line)
            if problem is not None:
                return problem
        if self.kind_at is not None and self.kind_at < len(row) and row[self.kind_at].strip() not in ("", "reviewer"):
            kind = row[self.kind_at].strip()
            why = (
                "is 'judge': an LLM judge's rating cannot be imported as a person's; leave the judge rows out"
                if kind == "judge"
                else f"must be 'reviewer' (or 'judge', which cannot be imported), not {kind!r}"
            )
            return Problem(name, line, RATER_KIND, why)
        if self.comment_at is None and self.reason_at is None:
            return self.check_score(cells, line, out)
        comment, reason = self.text(row, self.comment_at), self.text(row, self.reason_at)
        for column, text in ((COMMENT, comment), (REASON, reason)):
            if len(text) > self.limit:
                message = (
                    f"is {len(text):,} characters long; the limit is {self.limit:,} (BLIND_REVIEW_MAX_COMMENT_CHARS)"
                )
                return Problem(name, line, column, message)
        problem = self.check_cant_judge(cells, line, out, reason) if reason else self.check_score(cells, line, out)
        if problem is None and self.comment_at is not None:
            out.comment.append(out.text(comment) if comment else -1)
        return problem

    def check_anchor(self, row: list[str], line: int) -> Problem | None:
        """An export's ``is_anchor`` cell: an anchor rating cannot be imported (the import would file it under
        a model of the batch, as if that model had written the baseline's output)."""
        cell = row[self.anchor_at].strip().lower() if self.anchor_at is not None and self.anchor_at < len(row) else ""
        if cell in _FALSE:
            return None
        if cell in _TRUE:
            message = (
                "is true: an anchor rating (a baseline output shown again in a follow-up batch) cannot be imported, "
                "since it would count as this batch's model; leave the anchor rows out of the file"
            )
            return Problem(self.name, line, ANCHOR, message)
        return Problem(self.name, line, ANCHOR, f"must be True or False (as the export writes it), not {cell!r}")

    def check_cant_judge(self, cells: list[str], line: int, out: CheckedRows, reason: str) -> Problem | None:
        """A "can't judge" row: a reason, and neither dimension nor score (winner)."""
        name = self.name
        reviewer, key, ma = cells[:3]
        dim_name, answer = cells[-2:]
        if dim_name or answer:
            what = "winner" if self.pairwise else "score"
            message = f"a can't-judge answer has no scores: leave dimension and {what} empty on its row, or the reason"
            return Problem(name, line, REASON, message)
        if not self.pairwise:
            rated = self.index.get((key, ma, None))
            if rated is None:
                return Problem(name, line, "model", f"sample {key!r} has no output of model {ma!r}")
            out.add_cant_judge(reviewer, rated, self.cant_judge, reason, False, line)
            return None
        mb = cells[3]
        item = self.index.get((key, ma, mb)) or self.index.get((key, mb, ma))
        if item is None:
            return Problem(name, line, "model_a", f"no pair ({ma!r}, {mb!r}) for sample {key!r}")
        out.add_cant_judge(reviewer, item, self.cant_judge, reason, (key, mb, ma) in self.index, line)
        return None

    def check_score(self, cells: list[str], line: int, out: CheckedRows) -> Problem | None:
        """A row with a score (rating mode) or a winner (pairwise)."""
        name = self.name
        if self.pairwise:
            reviewer, key, ma, mb, dim_name, winner = cells
        else:
            reviewer, key, model, dim_name, value = cells
        d = self.dimensions.get(dim_name)
        if d is None:
            return Problem(name, line, "dimension", f"{dim_name!r} is not a dimension of the rubric ({self.known})")
        dim = self.rubric.dimensions[d]
        if self.pairwise:
            winner = winner.lower()
            flipped = (key, mb, ma) in self.index
            item = self.index.get((key, ma, mb)) or self.index.get((key, mb, ma))
            if item is None:
                return Problem(name, line, "model_a", f"no pair ({ma!r}, {mb!r}) for sample {key!r}")
            if winner not in WINNERS:
                return Problem(name, line, "winner", f"must be a, b, tie or both_bad, not {winner!r}")
            out.add(reviewer, item, d, _SHOWN.get(winner, winner), flipped, line)
            return None
        rated = self.index.get((key, model, None))
        if rated is None:
            return Problem(name, line, "model", f"sample {key!r} has no output of model {model!r}")
        if value.endswith(".0") and value[:-2].lstrip("-").isdigit():
            value = value[:-2]
        ok = self.memo.get((d, value))
        if ok is None:
            ok = dim.accepts(value)
            if len(self.memo) < _MEMO_LIMIT:
                self.memo[(d, value)] = ok
        if not ok:
            return Problem(name, line, "score", f"{value!r} is not on the {dim.name} scale ({dim.value_hint()})")
        out.add(reviewer, rated, d, value, False, line)
        return None


def check_rating_lines(lines: Iterable[str], name: str, index: ItemIndex, rubric: Rubric, batch_name: str) -> Showings:
    """Check every row of a ratings file (``lines``: its text, line by line, as read with ``newline=""``) and
    return its showings and ratings; :class:`RatingsImportError` listing every problem, in file order."""
    header = PAIRWISE_HEADER if rubric.mode == Mode.PAIRWISE else RATING_HEADER
    lines = iter(lines)
    first = next(lines, "")
    rest = itertools.chain([first], lines)
    reader: _JsonLines | Any = _JsonLines(rest, name, header) if first.lstrip().startswith("{") else csv.reader(rest)
    fieldnames = next(reader, None) or []
    missing = [c for c in header if c not in fieldnames]
    if missing:
        message = f"header lacks {', '.join(missing)}; a {rubric.mode} batch takes columns {','.join(header)}"
        raise RatingsImportError([Problem(name, 1, None, message)])
    checker = RowChecker(fieldnames, index, rubric, name, batch_name)
    rows = CheckedRows()
    problems: list[Problem] = []
    for row in reader:
        if not row:  # csv.DictReader skips empty rows
            continue
        problem = checker.check(row, reader.line_num, rows)
        if problem is not None:
            problems.append(problem)
    if isinstance(reader, _JsonLines):
        problems += reader.problems
    problems += _contradictions(rows, name, rubric)
    problems += _scored_and_cant_judge(rows, name, rubric)
    problems += _comment_conflicts(rows, name, rubric)
    if not rows.line and not problems:
        problems.append(Problem(name, None, None, "has no rating rows"))
    if problems:
        problems.sort(key=lambda p: p.line or 0)  # stable: a line's problems stay in the order found
        raise RatingsImportError(problems)
    return showings_of(rows, len(rubric.dimensions))


class _JsonLines:
    """A JSONL ratings file (an ``export-ratings --format jsonl``: one object per line) read as the CSV reader
    reads a CSV one: first a header (the format's columns, then ``comment``, ``cant_judge_reason`` and
    ``is_anchor``), then each object's cells in that order, so that both formats pass the same checks. A
    score may be a number (``5``, ``72.5``: as the export writes it) or text (``"5"``: as exports before
    issue 27 wrote it); ``null`` or a missing key is an empty cell, ``true``/``false`` are ``true``/``false``.
    A line that is not a JSON object is a problem of its own (:attr:`problems`), and its row is skipped."""

    def __init__(self, lines: Iterable[str], name: str, columns: tuple[str, ...]) -> None:
        self.name, self.line_num = name, 0
        self.header = [*columns, COMMENT, REASON, ANCHOR, RATER_KIND]
        self.problems: list[Problem] = []
        self._rows = self._read(lines)

    def __iter__(self) -> Iterator[list[str]]:
        return self

    def __next__(self) -> list[str]:
        return next(self._rows)

    def _read(self, lines: Iterable[str]) -> Iterator[list[str]]:
        yield self.header
        for number, line in enumerate(lines, start=1):
            self.line_num = number
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except ValueError as exc:
                self.problems.append(Problem(self.name, number, None, f"not valid JSON ({exc})"))
                continue
            if not isinstance(row, dict):
                self.problems.append(Problem(self.name, number, None, "must be one JSON object per line"))
                continue
            yield [_cell(row.get(c), c in (COMMENT, REASON)) for c in self.header]


def _cell(value: object, text: bool) -> str:
    """A JSON value as the CSV cell that means the same (a free text as :func:`text_cell` writes it, since
    the checks read it back with ``read_text_cell``)."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return (text_cell(value) or "") if text else value
    if isinstance(value, int | float):
        return repr(value)
    return json.dumps(value)  # a list or an object: no cell means that, the checks say what is wrong


def _contradictions(rows: CheckedRows, name: str, rubric: Rubric) -> list[Problem]:
    """Rows answering a dimension of a showing differently from the first row that answered it (or giving
    another can't-judge reason)."""
    if not rows.line:
        return []
    n_dims = len(rubric.dimensions)
    _, _, key = row_keys(rows, n_dims + 1)
    answer = np.array(rows.answer, dtype=np.int64)
    order = np.argsort(key, kind="stable")  # each (showing, dimension) together, in file order
    starts = group_starts(key[order])
    first = order[starts][np.cumsum(starts) - 1]  # per sorted row: the first row of its group
    bad = np.sort(order[answer[order] != answer[first]])
    names = list(rows.reviewers)
    out = []
    for i in bad.tolist():
        who, d = names[rows.reviewer[i]], rows.dimension[i]
        if d == n_dims:
            out.append(
                Problem(name, rows.line[i], REASON, f"{who} gave two different can't-judge reasons for this item")
            )
        else:
            message = f"{who} rated {rubric.dimensions[d].name} of this item twice with different answers"
            out.append(Problem(name, rows.line[i], "dimension", message))
    return out


def _scored_and_cant_judge(rows: CheckedRows, name: str, rubric: Rubric) -> list[Problem]:
    """Showings answered both with scores and as "can't judge": one problem each, on the row where the second
    kind of answer first appears."""
    n_dims = len(rubric.dimensions)
    dimension = np.array(rows.dimension, dtype=np.int64)
    skip = dimension == n_dims
    if not skip.any() or skip.all():
        return []
    _, showing, _ = row_keys(rows, n_dims + 1)
    number = np.arange(len(showing))
    skipped, first_skip = firsts(showing[skip], number[skip])
    scored, first_score = firsts(showing[~skip], number[~skip])
    _, a, b = np.intersect1d(skipped, scored, assume_unique=True, return_indices=True)
    names = list(rows.reviewers)
    return [
        Problem(
            name,
            rows.line[i],
            REASON,
            f"{names[rows.reviewer[i]]} answered this item both with scores and as can't judge; a can't-judge "
            "answer has no scores",
        )
        for i in np.sort(np.maximum(first_skip[a], first_score[b])).tolist()
    ]


def _comment_conflicts(rows: CheckedRows, name: str, rubric: Rubric) -> list[Problem]:
    """Rows giving a showing another comment than its first row with one (an answer has one comment, repeated
    on each of its rows)."""
    if not rows.comment:
        return []
    comment = np.array(rows.comment, dtype=np.int64)
    given = np.flatnonzero(comment >= 0)
    if not len(given):
        return []
    _, showing, _ = row_keys(rows, len(rubric.dimensions) + 1)
    order = given[np.argsort(showing[given], kind="stable")]
    starts = group_starts(showing[order])
    first = order[starts][np.cumsum(starts) - 1]
    bad = np.sort(order[comment[order] != comment[first]])
    names = list(rows.reviewers)
    return [
        Problem(name, rows.line[i], COMMENT, f"{names[rows.reviewer[i]]} gave this item two different comments")
        for i in bad.tolist()
    ]
