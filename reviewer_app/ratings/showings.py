"""A ratings file's accepted rows, column by column, and what they say per showing (reviewer, item).

A 3-million-row file held as a dict per row (and a dict of answers per showing) took gigabytes; here each
accepted row costs a few bytes in typed arrays (:class:`CheckedRows`, filled by the checks of
:mod:`reviewer_app.ratings.check`), and what the import needs is worked out afterwards with numpy sorts
(:func:`showings_of`): the showings, which pairs were given swapped (a showing's side is the one its last row
gives), and the ratings in the order they are written (showing by showing in the order each showing first
appears, and within one in the order its dimensions first appear). The grouping helpers serve the checks
across rows too.
"""

from __future__ import annotations

from array import array
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

Ints = npt.NDArray[np.int64]


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


def group_starts(sorted_keys: Ints) -> npt.NDArray[np.bool_]:
    """Per key of ``sorted_keys`` (equal keys next to each other): whether a group of equal keys starts there."""
    starts = np.ones(len(sorted_keys), dtype=bool)
    starts[1:] = sorted_keys[1:] != sorted_keys[:-1]
    return starts


def row_keys(rows: CheckedRows, n_dims: int) -> tuple[Ints, Ints, Ints]:
    """(item ids seen, sorted; showing key per row; (showing, dimension) key per row)."""
    item = np.array(rows.item, dtype=np.int64)
    items, item_pos = np.unique(item, return_inverse=True)
    showing = np.array(rows.reviewer, dtype=np.int64) * len(items) + item_pos.reshape(-1)
    return items, showing, showing * n_dims + np.array(rows.dimension, dtype=np.int64)


def firsts(keys: Ints, rows: Ints) -> tuple[Ints, Ints]:
    """The distinct ``keys`` (sorted) and, for each, the first of ``rows`` (row numbers, in file order) with it."""
    unique, at = np.unique(keys, return_index=True)
    return unique, rows[at]


def _per_showing(unique: Ints, showing: Ints, values: Ints, chosen: npt.NDArray[np.bool_]) -> Ints:
    """Per showing of ``unique``: the value of its first ``chosen`` row, -1 where it has none."""
    out = np.full(len(unique), -1, dtype=np.int64)
    number = np.flatnonzero(chosen)
    if len(number):
        keys, first = firsts(showing[number], number)
        out[np.searchsorted(unique, keys)] = values[first]
    return out


def showings_of(rows: CheckedRows, n_dims: int) -> Showings:
    """What the checked rows say per showing and per rating (``n_dims``: the rubric's dimensions; a row one
    past them is a can't-judge answer)."""
    items, showing, key = row_keys(rows, n_dims + 1)
    dimension = np.array(rows.dimension, dtype=np.int64)
    answer = np.array(rows.answer, dtype=np.int64)
    # Showings: first and last row of each.
    by_showing = np.argsort(showing, kind="stable")
    starts = group_starts(showing[by_showing])
    ends = np.append(starts[1:], True)
    unique = showing[by_showing][starts]
    first_row, last_row = by_showing[starts], by_showing[ends]
    # Ratings: the first row of each (showing, dimension), written by (showing's first row, own first row).
    by_key = np.argsort(key, kind="stable")
    rating_row = by_key[group_starts(key[by_key])]
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
