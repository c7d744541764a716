"""The unblinded export of a batch's ratings for leads: every rating, who gave it and to which model's output.

Exports have one row per rating, then one per "can't judge" answer (no dimension, no score, the reason in
``cant_judge_reason``); an answer's ``comment`` is on each of its rows. The last column, ``is_anchor``, is
True on the ratings of a follow-up batch's anchor items (baseline outputs shown again: ``model`` names the
baseline's model), False everywhere else; an import refuses rows where it is True (see
:mod:`reviewer_app.ratings.check`).

Written as CSV (every cell a spreadsheet would run as a formula made inert) or JSONL, straight from the
database's stream. CSV writes every answer as stored text; JSONL writes a score as a number (``"score": 5``; a
continuous scale's as a float, ``"score": 72.5``), a categorical answer and a pairwise winner as text
(:meth:`~reviewer_app.domain.scales.ScaleSpec.json_value`). A module of its own: the import
(:mod:`reviewer_app.ratings.files`) and the export share only the columns (:mod:`reviewer_app.ratings.columns`).
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Generator, Mapping
from contextlib import closing
from json.encoder import encode_basestring as _json_string
from pathlib import Path
from typing import Any, TextIO

from sqlalchemy.engine import Engine
from sqlmodel import Session

from reviewer_app.batches.catalog import batch_rubric, find_batch
from reviewer_app.domain.csv_safety import neutralise_cell
from reviewer_app.domain.enums import Mode, PairwiseChoice
from reviewer_app.domain.scales import ScaleSpec, spec_of
from reviewer_app.errors import Problem, RatingsImportError
from reviewer_app.judge.names import judge_label
from reviewer_app.ratings.columns import RATER_KIND, RATING_HEADER, text_cell
from storage.engine import read_session
from storage.gc_pause import cycle_collection_paused
from storage.models import Batch
from storage.repositories.judge import runs as judge_repo
from storage.repositories.ratings import exports as export_repo


def export_rows(engine: Engine, batch_name: str) -> list[dict[str, Any]]:
    """Raw, unblinded ratings: who rated which model's output how, with the canonical pairwise winner, the
    answer's comment and, on a row of its own, each "can't judge" answer with its reason. Values as the JSONL
    export writes them (a score as a number); the CSV export writes the same rows with every answer as
    stored text."""
    batch = find_batch(engine, batch_name)
    with read_session(engine) as session:
        return list(_export_dicts(session, batch))


def _export_dicts(session: Session, batch: Batch) -> Generator[dict[str, Any]]:
    """The export's rows, one dict each (the key order is the column order), as the database streams them."""
    assert batch.id is not None
    pairwise = batch.mode == Mode.PAIRWISE
    specs = _specs(batch)
    with closing(export_repo.export_chunks(session, batch.id)) as chunks:
        for chunk in chunks:
            for rec in chunk:
                yield _export_dict(batch.name, pairwise, rec, specs)


def _specs(batch: Batch) -> dict[str, ScaleSpec]:
    """The scale of each of the batch's dimensions, by name: what a score is written as in JSON."""
    return {d.name: spec_of(d.scale) for d in batch_rubric(batch).dimensions}


def _score(specs: Mapping[str, ScaleSpec], dimension: str | None, value: str | None) -> int | float | str | None:
    """A stored answer as the JSONL export writes it (:meth:`ScaleSpec.json_value`): a score as a number, any
    other answer as its text; None stays None (a "can't judge" row), as does the text of a dimension the
    rubric lacks (none should)."""
    spec = None if dimension is None or value is None else specs.get(dimension)
    return value if spec is None or value is None else spec.json_value(value)


def _canonical(swapped: bool, value: str | None) -> str | None:
    """The pairwise winner in the canonical order (``a`` is model a): the stored answer is the side shown."""
    if value == PairwiseChoice.LEFT:
        return "b" if swapped else "a"
    if value == PairwiseChoice.RIGHT:
        return "a" if swapped else "b"
    return value


def _seconds(seconds: float | None) -> float | None:
    return None if seconds is None else round(float(seconds), 3)


def _export_dict(
    batch: str, pairwise: bool, rec: export_repo.ExportRow, specs: Mapping[str, ScaleSpec]
) -> dict[str, Any]:
    """One export row: the pairwise winner in the canonical order (the stored answer is the side shown).

    A "can't judge" answer has no scores: its row has dimension and score (winner) None and the reason in
    ``cant_judge_reason``; the answer's ``comment`` is on each of its rows. The two text columns come last, so
    the columns before them read as they always did; ``is_anchor`` (added after them) is the last.
    :func:`_csv_rows` and :func:`_jsonl_lines` write these same rows without building the dicts (the CSV with
    the score as stored text)."""
    scenario, sample, reviewer, occurrence, position, swapped, dimension, value, model_a, model_b = rec[:10]
    repeat_a, seconds, is_gold, comment, reason, is_anchor = rec[10:]
    if pairwise:
        return {
            "batch": batch,
            "scenario": scenario,
            "sample_id": sample,
            "reviewer": reviewer,
            "model_a": model_a,
            "model_b": model_b,
            "dimension": dimension,
            "winner": _canonical(swapped, value),
            "shown_left": model_b if swapped else model_a,
            "occurrence": int(occurrence),
            "is_gold": bool(is_gold),
            "position": int(position),
            "seconds_spent": _seconds(seconds),
            "comment": comment,
            "cant_judge_reason": reason,
            "is_anchor": bool(is_anchor),
        }
    return {
        "batch": batch,
        "scenario": scenario,
        "sample_id": sample,
        "reviewer": reviewer,
        "model": model_a,
        "repeat": int(repeat_a),
        "dimension": dimension,
        "score": _score(specs, dimension, value),
        "occurrence": int(occurrence),
        "is_gold": bool(is_gold),
        "position": int(position),
        "seconds_spent": _seconds(seconds),
        "comment": comment,
        "cant_judge_reason": reason,
        "is_anchor": bool(is_anchor),
    }


@cycle_collection_paused()
def export_ratings(
    engine: Engine,
    batch_name: str,
    fmt: str,
    path: Path | None,
    *,
    stream: TextIO | None = None,
    with_judges: bool = False,
) -> int:
    """Write the export as CSV or JSONL to ``path`` (atomically: a temporary file renamed into place) or
    ``stream``, or as Parquet to ``path`` (:mod:`.export_parquet`: the same rows, typed); returns the row count.

    ``with_judges`` adds the LLM judges' ratings after the panel's (``blind-review judge``), the judge as
    ``reviewer`` (``judge:NAME@TEMPLATE``), its repeat as ``occurrence``, its reason as ``comment``, and a last
    column ``rater_kind`` on every row, ``reviewer`` or ``judge``, which an import reads to refuse a judge's
    rows: they are never filed as a person's.

    Rows are written as the database streams them, so memory does not grow with the batch. CSV cells that a
    spreadsheet would run as a formula are neutralised (:func:`neutralise_cell`); JSONL carries every text
    exactly as stored and every score as a number (see the module docstring)."""
    batch = find_batch(engine, batch_name)
    if fmt not in EXPORT_FORMATS:
        raise RatingsImportError([Problem.argument("format", f"must be csv, jsonl or parquet, not {fmt!r}")])
    if fmt == "parquet" and path is None:
        raise RatingsImportError([Problem.argument("out", "Parquet is a binary file: give a file to write it to")])
    with read_session(engine) as session:
        judges = _judge_labels(session, batch) if with_judges else None
        if fmt == "parquet":
            assert path is not None
            return _write_parquet(session, batch, path, judges)
        if path is None:
            return _write_export(session, batch, fmt, stream if stream is not None else io.StringIO(), judges)
        tmp = path.with_name(path.name + ".tmp")
        try:
            with tmp.open("w", encoding="utf-8", newline="") as f:
                n = _write_export(session, batch, fmt, f, judges)
            tmp.replace(path)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
        return n


def _write_parquet(session: Session, batch: Batch, path: Path, judges: dict[int, str] | None) -> int:
    """The rows of :func:`_export_dict` as Parquet, a database chunk at a time, each with its rater kind when
    the judges' rows are asked for (the ``rater_kind`` column, as the CSV and JSONL write it)."""
    from reviewer_app.ratings.export_parquet import ratings_schema, write_ratings_parquet

    pairwise = batch.mode == Mode.PAIRWISE
    specs = _specs(batch)
    columns = list(PAIRWISE_EXPORT_COLUMNS if pairwise else RATING_EXPORT_COLUMNS)
    if judges is not None:
        columns.append(RATER_KIND)
    numeric = all(d.numeric() for d in batch_rubric(batch).dimensions)
    chunks = (
        [_export_dict(batch.name, pairwise, rec, specs) | ({} if kind is None else {RATER_KIND: kind}) for rec in chunk]
        for chunk, kind in _chunks(session, batch, judges, str)
    )
    return write_ratings_parquet(chunks, ratings_schema(columns, numeric), path)


def _judge_labels(session: Session, batch: Batch) -> dict[int, str]:
    """Judge id -> the name its rows carry, for the judges that rated the batch."""
    assert batch.id is not None
    return {
        j.id: judge_label(j.name, j.template_digest)
        for j, _, _ in judge_repo.judges_of_batch(session, batch.id)
        if j.id
    }


def _chunks(
    session: Session, batch: Batch, judges: dict[int, str] | None, name: Callable[[str], str]
) -> Generator[tuple[list[export_repo.ExportRow], str | None]]:
    """The export's chunks, each with its rater kind: None without judges (no ``rater_kind`` column)."""
    assert batch.id is not None
    with closing(export_repo.export_chunks(session, batch.id, name)) as chunks:
        for chunk in chunks:
            yield chunk, None if judges is None else "reviewer"
    if judges:
        with closing(export_repo.judge_export_chunks(session, batch.id, judges, name)) as chunks:
            for chunk in chunks:
                yield chunk, "judge"


def _write_export(session: Session, batch: Batch, fmt: str, out: TextIO, judges: dict[int, str] | None = None) -> int:
    """The rows of :func:`_export_dict`, written a database chunk at a time without building a dict per row:
    at 3 million ratings the dicts, and a formula check on every cell, were half an export's time. With
    ``judges`` (see :func:`export_ratings`) every row ends with its rater kind."""
    assert batch.id is not None
    pairwise = batch.mode == Mode.PAIRWISE
    n = 0
    if fmt == "jsonl":
        scores = _json_scores(_specs(batch))
        for chunk, kind in _chunks(session, batch, judges, _json_string):
            lines = _jsonl_lines(_json_string(batch.name), pairwise, chunk, scores)
            if kind is not None:
                tail = f', "{RATER_KIND}": "{kind}"}}\n'
                lines = [line[:-2] + tail for line in lines]
            out.write("".join(lines))
            n += len(chunk)
        return n
    # Names and comments come from imports and reviewers as they were typed: no cell may run as a formula.
    # Names are made inert once, as they are read; dimensions and answers per row (neutralise_cell is called
    # only for a string starting so). The free texts (comment, cant_judge_reason) are written so that an import
    # reads back exactly what was typed (text_cell).
    writer = csv.writer(out, lineterminator="\n")
    header = list(PAIRWISE_EXPORT_COLUMNS if pairwise else RATING_EXPORT_COLUMNS)
    for chunk, kind in _chunks(session, batch, judges, neutralise_cell):
        if n == 0:
            writer.writerow(header if judges is None else [*header, RATER_KIND])
        rows = _csv_rows(neutralise_cell(batch.name), pairwise, chunk)
        writer.writerows(rows if kind is None else [(*row, kind) for row in rows])
        n += len(chunk)
    if n == 0:
        writer.writerow(RATING_HEADER)  # an empty export still names the columns an import needs
    return n


EXPORT_FORMATS = ("csv", "jsonl", "parquet")
RATING_EXPORT_COLUMNS = (
    "batch", "scenario", "sample_id", "reviewer", "model", "repeat", "dimension", "score", "occurrence", "is_gold",
    "position", "seconds_spent", "comment", "cant_judge_reason", "is_anchor",
)  # fmt: skip
PAIRWISE_EXPORT_COLUMNS = (
    "batch", "scenario", "sample_id", "reviewer", "model_a", "model_b", "dimension", "winner", "shown_left",
    "occurrence", "is_gold", "position", "seconds_spent", "comment", "cant_judge_reason", "is_anchor",
)  # fmt: skip


class _Cells(dict[Any, str | None]):
    """Cells worked out once per distinct value: a batch has a handful of dimensions and answers (a Likert
    scale's points, a pair's winners), so a dict lookup replaces a function call per cell, which at millions of
    rows was a visible part of an export. A continuous scale has endless answers: past ``_CELLS_KEPT``
    distinct ones the rest are worked out each time and not kept. Pure functions of the value, so one
    module-wide dict serves every export."""

    def __init__(self, form: Callable[[Any], str | None]) -> None:
        super().__init__()
        self.form = form

    def __missing__(self, value: Any) -> str | None:
        cell = self.form(value)
        if len(self) < _CELLS_KEPT:
            self[value] = cell
        return cell


_CELLS_KEPT = 10_000


def _inert(value: str | None) -> str | None:
    """A dimension or an answer as its CSV cell (names are made inert once, when they are read)."""
    return None if value is None else neutralise_cell(value)


def _json_value(value: str | None) -> str:
    return "null" if value is None else _json_string(value)


def _json_scores(specs: Mapping[str, ScaleSpec]) -> _Cells:
    """(dimension, stored answer) -> the answer's JSON text: a score as a number, as its dimension's scale
    says (:meth:`ScaleSpec.json_value`); one per export, since it depends on the batch's rubric. A dimension
    the rubric lacks (none should) keeps its answers as text."""

    def cell(key: tuple[str | None, str | None]) -> str:
        score = _score(specs, *key)
        return _json_value(score) if score is None or isinstance(score, str) else json.dumps(score)

    return _Cells(cell)


_CSV_CELLS = _Cells(_inert)
_CSV_WINNERS = _Cells(lambda shown: _inert(_canonical(*shown)))  # (swapped, answer as shown) -> canonical winner
_JSON_CELLS = _Cells(_json_value)
_JSON_WINNERS = _Cells(lambda shown: _json_value(_canonical(*shown)))
_JSON_BOOL = {False: "false", True: "true"}


def _csv_rows(batch: str, pairwise: bool, chunk: list[export_repo.ExportRow]) -> list[tuple[Any, ...]]:
    """:func:`_export_dict`'s rows as CSV cells; ``batch`` and the chunk's names are already inert."""
    cells, winners = _CSV_CELLS, _CSV_WINNERS
    if pairwise:
        return [
            (batch, scenario, sample, who, ma, mb, cells[dim], winners[swap, value], mb if swap else ma, occ, gold,
             pos, None if secs is None else round(float(secs), 3), comment and text_cell(comment),
             reason and text_cell(reason), anchor)
            for scenario, sample, who, occ, pos, swap, dim, value, ma, mb, _, secs, gold, comment, reason, anchor
            in chunk
        ]  # fmt: skip
    return [
        (batch, scenario, sample, who, ma, rep, cells[dim], cells[value], occ, gold, pos,
         None if secs is None else round(float(secs), 3), comment and text_cell(comment), reason and text_cell(reason),
         anchor)
        for scenario, sample, who, occ, pos, _, dim, value, ma, _, rep, secs, gold, comment, reason, anchor in chunk
    ]  # fmt: skip


def _json_float(value: float) -> str:
    """Seconds, rounded as the export rounds them, as ``json`` writes a float (``NaN`` and ``Infinity``
    included)."""
    value = round(float(value), 3)
    if value != value:
        return "NaN"
    if value in (float("inf"), float("-inf")):
        return "Infinity" if value > 0 else "-Infinity"
    return repr(value)


def _json_line(columns: tuple[str, ...]) -> str:
    """The line ``json.dumps`` writes for a dict with these keys, a ``%s`` for each value's JSON text (ints
    print as ``%d`` would): the templates follow the column lists instead of being a third copy of them."""
    return "{" + ", ".join(f"{_json_string(c)}: %s" for c in columns) + "}\n"


_RATING_LINE = _json_line(RATING_EXPORT_COLUMNS)
_PAIRWISE_LINE = _json_line(PAIRWISE_EXPORT_COLUMNS)


def _jsonl_lines(batch: str, pairwise: bool, chunk: list[export_repo.ExportRow], scores: _Cells) -> list[str]:
    """:func:`_export_dict`'s rows as the lines ``json.dumps(row, ensure_ascii=False)`` writes (the digest
    tests hold them to that), with the score a number where ``scores`` (:func:`_json_scores`) makes it one;
    ``batch`` and the chunk's names are JSON strings already."""
    cells, winners, flag, text = _JSON_CELLS, _JSON_WINNERS, _JSON_BOOL, _json_string
    if pairwise:
        return [
            _PAIRWISE_LINE % (batch, scenario, sample, who, ma, "null" if mb is None else mb, cells[dim],
                              winners[swap, value], mb if swap else ma, occ, flag[gold], pos,
                              "null" if secs is None else _json_float(secs),
                              "null" if comment is None else text(comment), "null" if reason is None else text(reason),
                              flag[anchor])
            for scenario, sample, who, occ, pos, swap, dim, value, ma, mb, _, secs, gold, comment, reason, anchor
            in chunk
        ]  # fmt: skip
    return [
        _RATING_LINE % (batch, scenario, sample, who, ma, rep, cells[dim], scores[dim, value], occ, flag[gold], pos,
                        "null" if secs is None else _json_float(secs), "null" if comment is None else text(comment),
                        "null" if reason is None else text(reason), flag[anchor])
        for scenario, sample, who, occ, pos, _, dim, value, ma, _, rep, secs, gold, comment, reason, anchor in chunk
    ]  # fmt: skip
