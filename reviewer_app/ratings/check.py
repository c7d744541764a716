"""The checks of a ratings file before import, row by row as the file streams past, kept column by column.

A 3-million-row file held as a dict per row (and a dict of answers per showing) took gigabytes; here each
accepted row costs a few bytes in typed arrays, and what the import needs (the showings, which pairs were
given swapped, the ratings in the order they are written) is worked out afterwards with numpy sorts.
The rules are the ones the import always had: the first answer of a reviewer on a dimension of an item
stands, a later row repeating it is harmless, a later row contradicting it is a problem; a showing's side
is the one its last row gives; ratings are written showing by showing in the order each showing first
appears, and within one in the order its dimensions first appear.

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
from array import array
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import numpy.typing as npt

from reviewer_app.domain.csv_safety import FORMULA_STARTS, neutralise_cell
from reviewer_app.domain.enums import Mode, PairwiseChoice
from reviewer_app.domain.rubric import Rubric
from reviewer_app.errors import Problem, RatingsImportError
from reviewer_app.settings import max_comment_chars

RATING_HEADER = ("reviewer", "sample_id", "model", "dimension", "score")
PAIRWISE_HEADER = ("reviewer", "sample_id", "model_a", "model_b", "dimension", "winner")
WINNERS = ("a", "b", PairwiseChoice.TIE, PairwiseChoice.BOTH_BAD)
_SHOWN = {"a": str(PairwiseChoice.LEFT), "b": str(PairwiseChoice.RIGHT)}  # imported model_a was on the left
_MEMO_LIMIT = 10_000  # distinct (dimension, answer) checks remembered; a continuous scale has endless answers
COMMENT, REASON = "comment", "cant_judge_reason"
TEXT_COLUMNS = (COMMENT, REASON)  # optional, and an export's free-text columns
ANCHOR = "is_anchor"  # optional (an export's last column): anchor rows are refused, see the module docstring
_TRUE, _FALSE = frozenset({"true", "1", "yes"}), frozenset({"false", "0", "no", ""})
_QUOTED = (*FORMULA_STARTS, "'")  # after the quote text_cell adds


def text_cell(value: str | None) -> str | None:
    """A free text (comment, reason) as its CSV cell: inert in a spreadsheet (:func:`neutralise_cell`), and
    read back exactly by :func:`read_text_cell`. "+1, fine" is a common comment: the import must not keep the
    quote the export put before it, so a text that itself starts with a quote and a formula character (or a
    second quote) gets one more quote, and the import takes exactly one away."""
    if value is None or not value.startswith(_QUOTED):
        return value
    if value.startswith("'"):
        return "'" + value if value[1:].startswith(_QUOTED) else value
    return neutralise_cell(value)


def read_text_cell(cell: str) -> str:
    """The text a :func:`text_cell` cell holds."""
    return cell[1:] if cell.startswith("'") and cell[1:].startswith(_QUOTED) else cell


ItemIndex = dict[tuple[str, str, str | None], int]  # (sample key, model a, model b or None) -> item id
Ints = npt.NDArray[np.int64]


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


@dataclass
class CheckedRows:
    """Every accepted row, column by column; reviewers and answers are numbered in order of first sight."""

    reviewers: dict[str, int] = field(default_factory=dict)
    answers: dict[str, int] = field(default_factory=dict)
    texts: dict[str, int] = field(default_factory=dict)  # comments and can't-judge reasons
    reviewer: array[int] = field(default_factory=lambda: array("q"))
    item: array[int] = field(default_factory=lambda: array("q"))
    # Index in the rubric's dimensions; one past the last for a "can't judge" row, whose answer is then its
    # reason (in ``texts``).
    dimension: array[int] = field(default_factory=lambda: array("q"))
    answer: array[int] = field(default_factory=lambda: array("q"))
    swapped: array[int] = field(default_factory=lambda: array("b"))  # pairwise: the pair was given b, a
    line: array[int] = field(default_factory=lambda: array("q"))
    comment: array[int] = field(default_factory=lambda: array("q"))  # in ``texts``, -1: none (only with a column)

    def add(self, reviewer: str, item: int, dimension: int, answer: str, swapped: bool, line: int) -> None:
        self.reviewer.append(self.reviewers.setdefault(reviewer, len(self.reviewers)))
        self.item.append(item)
        self.dimension.append(dimension)
        self.answer.append(self.answers.setdefault(answer, len(self.answers)))
        self.swapped.append(swapped)
        self.line.append(line)

    def add_cant_judge(self, reviewer: str, item: int, dimension: int, reason: str, swapped: bool, line: int) -> None:
        """A "can't judge" row: ``dimension`` is the one past the rubric's, the answer the reason."""
        self.reviewer.append(self.reviewers.setdefault(reviewer, len(self.reviewers)))
        self.item.append(item)
        self.dimension.append(dimension)
        self.answer.append(self.text(reason))
        self.swapped.append(swapped)
        self.line.append(line)

    def text(self, value: str) -> int:
        return self.texts.setdefault(value, len(self.texts))


@dataclass
class Showings:
    """What a checked file says, per showing (reviewer, item) and per rating.

    Showings are ordered by (reviewer name, item id), the order new ones get their labels and queue places;
    ratings in the order they are written."""

    reviewer_names: list[str]  # by reviewer number
    reviewer: Ints  # per showing: reviewer number
    item: Ints  # per showing: item id
    swapped: npt.NDArray[np.bool_]  # per showing
    rating_showing: Ints  # per rating: index of its showing
    rating_dimension: Ints  # per rating: index in the rubric's dimensions
    rating_answer: Ints  # per rating: index in ``answers``
    answers: list[str]
    skipped: npt.NDArray[np.bool_]  # per showing: answered "can't judge"
    reason: Ints  # per showing: the can't-judge reason, index in ``texts``, -1: none
    comment: Ints  # per showing: index in ``texts``, -1: none given (the file leaves a comment as it is)
    texts: list[str]

    @property
    def n_ratings(self) -> int:
        return len(self.rating_showing)


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


def check_rows(lines: Iterable[str], name: str, index: ItemIndex, rubric: Rubric, batch_name: str) -> Showings:
    """Check every row of a ratings file (``lines``: its text, line by line, as read with ``newline=""``) and
    return its showings and ratings; :class:`RatingsImportError` listing every problem, in file order."""
    header = PAIRWISE_HEADER if rubric.mode == Mode.PAIRWISE else RATING_HEADER
    reader = csv.reader(lines)
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
    problems += _contradictions(rows, name, rubric)
    problems += _scored_and_cant_judge(rows, name, rubric)
    problems += _comment_conflicts(rows, name, rubric)
    if not rows.line and not problems:
        problems.append(Problem(name, None, None, "has no rating rows"))
    if problems:
        problems.sort(key=lambda p: p.line or 0)  # stable: a line's problems stay in the order found
        raise RatingsImportError(problems)
    return _showings(rows, len(rubric.dimensions))


def _group_starts(sorted_keys: Ints) -> npt.NDArray[np.bool_]:
    starts = np.ones(len(sorted_keys), dtype=bool)
    starts[1:] = sorted_keys[1:] != sorted_keys[:-1]
    return starts


def _keys(rows: CheckedRows, n_dims: int) -> tuple[Ints, Ints, Ints]:
    """(item ids seen, sorted; showing key per row; (showing, dimension) key per row)."""
    item = np.array(rows.item, dtype=np.int64)
    items, item_pos = np.unique(item, return_inverse=True)
    showing = np.array(rows.reviewer, dtype=np.int64) * len(items) + item_pos.reshape(-1)
    return items, showing, showing * n_dims + np.array(rows.dimension, dtype=np.int64)


def _contradictions(rows: CheckedRows, name: str, rubric: Rubric) -> list[Problem]:
    """Rows answering a dimension of a showing differently from the first row that answered it (or giving
    another can't-judge reason)."""
    if not rows.line:
        return []
    n_dims = len(rubric.dimensions)
    _, _, key = _keys(rows, n_dims + 1)
    answer = np.array(rows.answer, dtype=np.int64)
    order = np.argsort(key, kind="stable")  # each (showing, dimension) together, in file order
    starts = _group_starts(key[order])
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


def _firsts(keys: Ints, rows: Ints) -> tuple[Ints, Ints]:
    """The distinct ``keys`` (sorted) and, for each, the first of ``rows`` (row numbers, in file order) with it."""
    unique, at = np.unique(keys, return_index=True)
    return unique, rows[at]


def _scored_and_cant_judge(rows: CheckedRows, name: str, rubric: Rubric) -> list[Problem]:
    """Showings answered both with scores and as "can't judge": one problem each, on the row where the second
    kind of answer first appears."""
    n_dims = len(rubric.dimensions)
    dimension = np.array(rows.dimension, dtype=np.int64)
    skip = dimension == n_dims
    if not skip.any() or skip.all():
        return []
    _, showing, _ = _keys(rows, n_dims + 1)
    number = np.arange(len(showing))
    skipped, first_skip = _firsts(showing[skip], number[skip])
    scored, first_score = _firsts(showing[~skip], number[~skip])
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
    _, showing, _ = _keys(rows, len(rubric.dimensions) + 1)
    order = given[np.argsort(showing[given], kind="stable")]
    starts = _group_starts(showing[order])
    first = order[starts][np.cumsum(starts) - 1]
    bad = np.sort(order[comment[order] != comment[first]])
    names = list(rows.reviewers)
    return [
        Problem(name, rows.line[i], COMMENT, f"{names[rows.reviewer[i]]} gave this item two different comments")
        for i in bad.tolist()
    ]


def _per_showing(unique: Ints, showing: Ints, values: Ints, chosen: npt.NDArray[np.bool_]) -> Ints:
    """Per showing of ``unique``: the value of its first ``chosen`` row, -1 where it has none."""
    out = np.full(len(unique), -1, dtype=np.int64)
    number = np.flatnonzero(chosen)
    if len(number):
        keys, first = _firsts(showing[number], number)
        out[np.searchsorted(unique, keys)] = values[first]
    return out


def _showings(rows: CheckedRows, n_dims: int) -> Showings:
    """What the checked rows say per showing and per rating (``n_dims``: the rubric's dimensions; a row one
    past them is a can't-judge answer)."""
    items, showing, key = _keys(rows, n_dims + 1)
    dimension = np.array(rows.dimension, dtype=np.int64)
    answer = np.array(rows.answer, dtype=np.int64)
    # Showings: first and last row of each.
    by_showing = np.argsort(showing, kind="stable")
    starts = _group_starts(showing[by_showing])
    ends = np.append(starts[1:], True)
    unique = showing[by_showing][starts]
    first_row, last_row = by_showing[starts], by_showing[ends]
    # Ratings: the first row of each (showing, dimension), written by (showing's first row, own first row).
    by_key = np.argsort(key, kind="stable")
    rating_row = by_key[_group_starts(key[by_key])]
    rating_row = rating_row[dimension[rating_row] != n_dims]
    rating_showing = np.searchsorted(unique, showing[rating_row])
    written = np.lexsort((rating_row, first_row[rating_showing]))
    rating_row, rating_showing = rating_row[written], rating_showing[written]
    reason = _per_showing(unique, showing, answer, dimension == n_dims)
    comment = np.full(len(unique), -1, dtype=np.int64)
    if rows.comment:
        texts = np.array(rows.comment, dtype=np.int64)
        comment = _per_showing(unique, showing, texts, texts >= 0)
    # Showings in (reviewer name, item id) order.
    names = list(rows.reviewers)
    rank = np.empty(len(names), dtype=np.int64)
    rank[sorted(range(len(names)), key=names.__getitem__)] = np.arange(len(names))
    reviewer, item = unique // len(items), items[unique % len(items)]
    ordered = np.lexsort((item, rank[reviewer]))
    position = np.empty(len(ordered), dtype=np.int64)
    position[ordered] = np.arange(len(ordered))
    swapped = np.array(rows.swapped, dtype=bool)
    return Showings(
        reviewer_names=names,
        reviewer=reviewer[ordered],
        item=item[ordered],
        swapped=swapped[last_row][ordered],
        rating_showing=position[rating_showing],
        rating_dimension=dimension[rating_row],
        rating_answer=answer[rating_row],
        answers=list(rows.answers),
        skipped=reason[ordered] >= 0,
        reason=reason[ordered],
        comment=comment[ordered],
        texts=list(rows.texts),
    )
