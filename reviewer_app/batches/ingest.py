r"""Reading and checking batch files before anything is written: the three formats, record by record.

Three formats are read as :class:`OutputRecord`\ s: our JSONL, our CSV (same columns, ``metadata.<name>``
columns), and AlpacaEval ``model_outputs.json`` files (one per model). Every problem in every file is
collected and reported together as ``file:line: field: what is wrong``, because an admin fixing a
10,000-line file one error per run gives up. The rule for each field (and for images) is in
:mod:`reviewer_app.domain.input_rules`, shared with ``generate`` and ``build-eval-set``. Each accepted record
goes to the check pass (:mod:`reviewer_app.batches.check_pass`), which keeps what the checks across records
need; :func:`reviewer_app.batches.checked_batch.check_batch_files` runs :func:`check_file` over a batch's
files. Writing is in :mod:`reviewer_app.batches.loading`.
"""

from __future__ import annotations

import codecs
import csv
import hashlib
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO, TextIO

import orjson
from tqdm import tqdm

from reviewer_app.batches.check_pass import CheckPass
from reviewer_app.batches.images import ImageRef
from reviewer_app.batches.records import OutputRecord
from reviewer_app.domain.input_rules import (
    REQUIRED_FIELDS,
    check_image,
    images_list_problem,
    record_flaws,
    record_passes,
)
from reviewer_app.errors import Problem
from reviewer_app.settings import max_image_bytes, max_image_pixels

PROGRESS_MIN_BYTES = 5 * 1024 * 1024
_BOM = b"\xef\xbb\xbf"
_EMPTY = "is empty; a batch file needs at least one output"
_NO_RECORDS = "has no records (only blank lines, a header or a byte-order mark); a batch file needs at least one output"
_READ_SIZE = 1 << 20


def check_file(path: Path, check: CheckPass, *, progress: bool) -> list[Any] | None:
    """Check one file (an AlpacaEval list is only parsed: returned, for its records to come last)."""
    name = str(path)
    suffix = path.suffix.lower()
    try:
        with path.open("rb") as fh:
            if suffix == ".json":
                return _check_json_list(path, fh.read(), check.problems)
            blank, bad = _prescan(path, fh)
            if suffix == ".jsonl" and not blank and bad is None:
                fh.seek(0)
                _check_jsonl(path, fh, check, progress=progress)
                return None
    except OSError as exc:
        check.problems.append(Problem(name, None, None, f"cannot be read ({exc.strerror}); check the path"))
        return None
    if blank:
        check.problems.append(Problem(name, None, None, _EMPTY))
    elif bad is not None:
        check.problems.append(bad)
    elif suffix == ".csv":
        _check_csv(path, check)
    else:
        check.problems.append(
            Problem(
                name,
                None,
                None,
                f"unknown file type {suffix or '(none)'}; use .jsonl, .csv, or AlpacaEval model_outputs .json",
            )
        )
    return None


def _jsonl_lines(path: Path, fh: BinaryIO, *, progress: bool, verb: str) -> Iterator[tuple[int, int, bytes]]:
    """(line number, number of the newline-ended piece it is in, line) for every line of a JSONL file, the
    byte-order mark dropped. Lines end where ``bytes.splitlines`` ends them (``\\n``, ``\\r\\n`` or a lone
    ``\\r``), read one at a time; JSON allows U+2028 and friends inside strings, so the bytes are split, not
    decoded text."""
    size = os.fstat(fh.fileno()).st_size
    bar = None
    if progress and size > PROGRESS_MIN_BYTES:
        bar = tqdm(total=size, desc=f"{verb} {path.name}", unit="B", unit_scale=True)
    lineno = 0
    try:
        for piece_no, piece in enumerate(fh, start=1):
            if piece_no == 1 and piece.startswith(_BOM):
                piece = piece[3:]
            if bar is not None:
                bar.update(len(piece))
            if b"\r" not in piece:
                lineno += 1
                yield lineno, piece_no, piece[:-1] if piece.endswith(b"\n") else piece
                continue
            for line in piece.splitlines():
                lineno += 1
                yield lineno, piece_no, line
    finally:
        if bar is not None:
            bar.close()


def _check_jsonl(path: Path, fh: BinaryIO, check: CheckPass, *, progress: bool) -> None:
    """Check a JSONL file known to be UTF-8 and not blank."""
    name = str(path)
    outputs_before, problems_before = check.outputs, len(check.problems)
    for lineno, _piece, line in _jsonl_lines(path, fh, progress=progress, verb="checking"):
        if not line.strip():
            continue
        try:
            obj = orjson.loads(line)
        except orjson.JSONDecodeError as exc:
            check.problems.append(
                Problem(
                    name,
                    lineno,
                    None,
                    f"not valid JSON ({exc.msg} at column {exc.colno}); each line must be one complete JSON object",
                )
            )
            continue
        if not isinstance(obj, dict):
            check.problems.append(
                Problem(name, lineno, None, "must be a JSON object with sample_id, scenario, prompt, model and output")
            )
            continue
        if record_passes(obj):  # the common case: every field fine, no images
            check.fields(obj, name, lineno)
            continue
        rec = _record_from_fields(obj, path, lineno, check.problems)
        if rec is not None:
            check.record(rec)
    if check.outputs == outputs_before and len(check.problems) == problems_before:
        check.problems.append(Problem(name, None, None, _NO_RECORDS))


def _pieces(fh: BinaryIO) -> Iterator[bytes]:
    """The file's newline-ended pieces, the byte-order mark dropped from the first."""
    for piece_no, piece in enumerate(fh):
        yield piece[3:] if piece_no == 0 and piece.startswith(_BOM) else piece


def _utf8_problem(path: Path) -> Problem:
    """Where a file is first not UTF-8: the line, and the offset after any byte-order mark. Lines are
    decoded one by one; a newline is never part of a multi-byte character, so the first failing line holds
    the first bad byte of the file."""
    offset = 0
    with path.open("rb") as fh:
        for lineno, piece in enumerate(_pieces(fh), start=1):
            try:
                piece.decode()
            except UnicodeDecodeError as exc:
                at = offset + exc.start
                return Problem(
                    str(path),
                    lineno,
                    None,
                    f"is not UTF-8 (byte 0x{piece[exc.start]:02x} at offset {at}); re-save the file as UTF-8",
                )
            offset += len(piece)
    raise AssertionError(f"{path} decodes as UTF-8")  # only called on a line that did not


def _prescan(path: Path, fh: BinaryIO) -> tuple[bool, Problem | None]:
    """Whether a file is blank (only whitespace and a byte-order mark), and where it is first not UTF-8:
    the checks that come before its format's, a megabyte at a time (the place of a bad byte is then found
    line by line)."""
    decoder = codecs.getincrementaldecoder("utf-8")()  # a character split between two reads is put together
    blank = True
    chunk = fh.read(_READ_SIZE).removeprefix(_BOM)
    try:
        while chunk:
            if blank and chunk.strip():
                blank = False
            decoder.decode(chunk)
            chunk = fh.read(_READ_SIZE)
        decoder.decode(b"", final=True)
    except UnicodeDecodeError:
        return False, _utf8_problem(path)  # bytes that are not UTF-8 are not whitespace either
    return blank, None


def _check_json_list(path: Path, data: bytes, problems: list[Problem]) -> list[Any] | None:
    """An AlpacaEval file, read whole: one model's answers, a few megabytes at most."""
    if not data.removeprefix(_BOM).strip():
        problems.append(Problem(str(path), None, None, _EMPTY))
        return None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        problems.append(_utf8_problem(path))
        return None
    return _read_json_list(path, text, problems)


def _check_csv(path: Path, check: CheckPass) -> None:
    name = str(path)
    outputs_before, problems_before = check.outputs, len(check.problems)
    with path.open(encoding="utf-8-sig", newline="") as text:
        for lineno, obj in _csv_objects(text, check.problems, name):
            rec = _record_from_fields(obj, path, lineno, check.problems)
            if rec is not None:
                check.record(rec)
    if check.outputs == outputs_before and len(check.problems) == problems_before:
        check.problems.append(Problem(name, None, None, _NO_RECORDS))


def _csv_objects(text: TextIO, problems: list[Problem] | None, name: str = "") -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, record fields) of each CSV row. With ``problems`` None the file is known to be good
    (checked before), and nothing is checked again."""
    reader = csv.DictReader(text)
    header = reader.fieldnames or []
    missing = [c for c in REQUIRED_FIELDS if c not in header]
    if missing:
        if problems is not None:
            problems.append(
                Problem(
                    name,
                    1,
                    None,
                    f"header lacks column(s) {', '.join(missing)}; the header "
                    f"must name {', '.join(REQUIRED_FIELDS)} (optional: reference, criteria, images, repeat, "
                    "checks (a JSON list), metadata.<name>)",
                )
            )
        return
    try:
        for row in reader:
            lineno = reader.line_num
            if None in row:
                if problems is not None:
                    problems.append(
                        Problem(name, lineno, None, "has more cells than the header; quote cells that contain commas")
                    )
                continue
            obj: dict[str, Any] = {}
            meta: dict[str, Any] = {}
            for key, value in row.items():
                if key.startswith("metadata."):
                    if value not in ("", None):
                        meta[key[len("metadata.") :]] = _csv_number(value)
                elif key == "images":
                    paths = [p for p in (value or "").split(";") if p.strip()]
                    if paths:
                        obj["images"] = paths
                elif key == "repeat":
                    obj["repeat"] = int(value) if (value or "").strip().isdigit() else (value or 0)
                elif key in ("reference", "criteria"):
                    if value:
                        obj[key] = value
                elif key == "checks":
                    if value and value.strip():
                        obj[key] = _csv_json(value)
                else:
                    obj[key] = value
            obj["metadata"] = meta
            yield lineno, obj
    except csv.Error as exc:
        if problems is None:
            raise
        problems.append(Problem(name, reader.line_num, None, f"is not valid CSV ({exc})"))


def _csv_json(value: str) -> Any:
    """A cell holding JSON (a sample's checks); text that is not JSON stays text, for the field's check to
    say what it must be."""
    try:
        return json.loads(value)
    except json.JSONDecodeError:
        return value


def _csv_number(value: str) -> Any:
    try:
        return int(value)
    except ValueError:
        try:
            return float(value)
        except ValueError:
            return value


def _read_json_list(path: Path, text: str, problems: list[Problem]) -> list[Any] | None:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        problems.append(
            Problem(
                str(path), exc.lineno, None, f"not valid JSON ({exc.msg} at column {exc.colno}); is the file truncated?"
            )
        )
        return None
    if not isinstance(data, list):
        problems.append(
            Problem(
                str(path),
                1,
                None,
                "a .json batch must be an AlpacaEval list of {instruction, "
                "output, generator, dataset}; use .jsonl for our own format",
            )
        )
        return None
    return data


def check_alpaca(files: list[tuple[Path, list[Any]]], check: CheckPass) -> None:
    for path, items in files:
        if not items:
            check.problems.append(Problem(str(path), None, None, _NO_RECORDS))
        for idx, obj in enumerate(items):
            where = f"[{idx}]"
            if not isinstance(obj, dict):
                check.problems.append(
                    Problem(str(path), None, where, "must be an object {instruction, output, generator, dataset}")
                )
                continue
            bad = False
            for key in ("instruction", "output", "generator"):
                if not isinstance(obj.get(key), str):
                    check.problems.append(Problem(str(path), None, f"{where}.{key}", "missing or not text"))
                    bad = True
            if not bad:
                check.record(_alpaca_record(path, idx, obj))


def _alpaca_record(path: Path, idx: int, obj: dict[str, Any]) -> OutputRecord:
    instruction = obj["instruction"]
    digest = hashlib.sha1(instruction.encode()).hexdigest()[:12]
    return OutputRecord(
        sample_id=f"ae-{digest}",
        scenario=str(obj.get("dataset") or "default"),
        prompt=instruction,
        model=obj["generator"],
        output=obj["output"],
        file=str(path),
        line=None,
        metadata={"source_index": idx},
    )


def _record(obj: dict[str, Any], name: str, lineno: int, images: list[ImageRef]) -> OutputRecord:
    """The record of fields that passed :func:`input_rules.record_flaws` (absent optional fields take their
    defaults; ids that are whole numbers become text)."""
    sample_id, scenario, model = obj["sample_id"], obj["scenario"], obj["model"]
    meta = obj.get("metadata")
    repeat = obj.get("repeat")
    return OutputRecord(
        sample_id=sample_id if type(sample_id) is str else str(sample_id),
        scenario=scenario if type(scenario) is str else str(scenario),
        prompt=obj["prompt"],
        model=model if type(model) is str else str(model),
        output=obj["output"],
        file=name,
        line=lineno,
        reference=obj.get("reference"),
        criteria=obj.get("criteria"),
        images=images,
        metadata={} if meta is None else meta,
        repeat=0 if repeat is None else repeat,
        checks=obj.get("checks"),
    )


def _record_from_fields(obj: dict[str, Any], path: Path, lineno: int, problems: list[Problem]) -> OutputRecord | None:
    name = str(path)
    # The common case (every field fine, no images): the table's own checks, without collecting messages.
    if record_passes(obj):
        return _record(obj, name, lineno, [])
    flaws = record_flaws(obj)
    for fieldname, message in flaws:
        problems.append(Problem(name, lineno, fieldname, message))
    images: list[ImageRef] = []
    raw_images = obj.get("images")
    if isinstance(raw_images, list) and images_list_problem(raw_images) is None:
        folder = path.resolve().parent
        limit, pixels = max_image_bytes(), max_image_pixels()
        for rel in raw_images:
            checked = check_image(folder, rel, max_bytes=limit, max_pixels=pixels)
            if isinstance(checked, str):
                problems.append(Problem(name, lineno, "images", checked))
                flaws.append(("images", checked))
            else:
                assert checked.path is not None
                images.append(ImageRef(checked.path, checked.digest, checked.ext, checked.width, checked.height))
    if flaws:
        return None
    return _record(obj, name, lineno, images)
