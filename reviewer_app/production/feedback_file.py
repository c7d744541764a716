"""A production feedback file read and checked: its rows in chunks, each checked, as rows to insert.

A feedback file has one event per JSON line or CSV row with the fields ``model``, ``timestamp`` and
``feedback``, and optionally ``scenario``, ``latency_ms``, ``ttft_ms`` and ``request_id`` (other fields are
ignored). Rules, each broken rule a located :class:`~reviewer_app.errors.Problem` (file, line, field):

* ``timestamp``: ISO 8601 with a UTC offset or ``Z`` (``2026-03-02T10:15:00Z``), or epoch time as a number
  (below 100,000,000,000: seconds; from there on: milliseconds). A time without a zone is refused, not
  guessed: production logs in local time would shift every window.
* ``feedback``: a number on the declared scale (``--scale``; default ``-1,1``, thumbs, where only -1 and +1
  are allowed; ``1-5`` for ratings: any number from 1 to 5).
* ``latency_ms``, ``ttft_ms``: empty or a non-negative number.
* ``request_id``: the event's identity. Importing an event whose request id is stored already adds nothing; the
  same request id twice in one file, or in the file and the database, with different content is a problem.
  Without a request id an event is identified by a digest of its content (model, scenario, time, feedback,
  scale, latency, TTFT) and how many identical rows came before it in the same file, so importing the same
  file again adds nothing while two identical events in one file both count. (The price: across files,
  identical events are told apart only by their order within each file, so a second file holding the same
  event once adds nothing, as an overlapping export should; two genuinely different but identical-looking
  events in two files count once. Request ids avoid both.)

The file is streamed (a million lines need not fit in memory as objects) in chunks of :data:`CHUNK` rows,
each checked over whole columns. Nothing here touches the database: ``feedback.import_feedback`` writes the
rows, in one transaction, and only when no row has a problem.
"""

from __future__ import annotations

import csv
import hashlib
import io
import math
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime
from itertools import repeat
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import numpy as np
import orjson

from reviewer_app.domain.production import THUMBS
from reviewer_app.errors import Problem, ValidationError

if TYPE_CHECKING:
    from tqdm import tqdm


REQUIRED = ("model", "timestamp", "feedback")
OPTIONAL = ("scenario", "latency_ms", "ttft_ms", "request_id")

CHUNK = 50_000  # rows per executemany
EPOCH_MS_FROM = 100_000_000_000  # an epoch number from here on is milliseconds (seconds: year 5138)


def _number(value: Any) -> float | None:
    """A JSON number or a numeric string as float; None if it is neither (booleans are not numbers)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value.strip())
        except ValueError:
            return None
    return None


def parse_timestamp(value: Any) -> int | str:
    """The time as UTC epoch milliseconds, or the problem with it as a sentence."""
    number = _number(value) if not isinstance(value, str) or re.fullmatch(r"\s*-?\d+(\.\d+)?\s*", value) else None
    if number is not None:
        if not math.isfinite(number) or number < 0:
            return f"{value!r} is not a time"
        return int(round(number if abs(number) >= EPOCH_MS_FROM else number * 1000))
    if not isinstance(value, str) or not value.strip():
        return "missing: give an ISO 8601 time with a zone (2026-03-02T10:15:00Z) or epoch seconds"
    try:
        parsed = datetime.fromisoformat(value.strip())
    except ValueError:
        return f"{value!r} is not an ISO 8601 time (2026-03-02T10:15:00Z) or epoch seconds"
    if parsed.tzinfo is None:
        return f"{value!r} has no time zone; add Z for UTC or an offset such as +02:00"
    return int(parsed.timestamp() * 1000)


def _float_or_nan(value: Any) -> float:
    number = _number(value)
    return math.nan if number is None else number


def _floats(values: list[Any]) -> np.ndarray:
    """``values`` as floats, NaN where one is not a number (None, "", text, a boolean), without a Python call
    per value when they are all numbers or numeric strings (numpy converts those in C)."""
    if not any(v is True or v is False for v in values):
        try:
            return np.array(values, dtype=float)
        except (ValueError, TypeError):
            pass
    return np.array([_float_or_nan(v) for v in values], dtype=float)


def _timestamp_or_nan(value: Any) -> float:
    ms = parse_timestamp(value)
    return math.nan if isinstance(ms, str) else float(ms)


def _timestamps(values: list[Any]) -> np.ndarray:
    """Epoch milliseconds as floats (NaN: not a time), numbers by numpy and ISO texts one by one."""
    numbers = _floats(values)
    ms = np.where(np.abs(numbers) >= EPOCH_MS_FROM, numbers, numbers * 1000).round()
    ms[numbers < 0] = math.nan
    texts = np.flatnonzero(np.isnan(numbers))
    for i in texts:
        if isinstance(values[i], str):
            ms[i] = _timestamp_or_nan(values[i])
    return ms


def _blank(values: list[Any]) -> np.ndarray:
    return np.array([v is None or (isinstance(v, str) and not v.strip()) for v in values], dtype=bool)


@dataclass
class Chunk:
    """Rows of the file as columns (each the raw values of one field), with their line numbers and the raw row
    of each (to word a problem)."""

    lines: list[int]
    columns: dict[str, list[Any]]
    raw: Callable[[int], dict[str, Any]]


@dataclass
class Checker:
    """Turns chunks of raw rows into insert tuples (``storage.repositories.feedback.INSERT_COLUMNS`` order),
    collecting problems; remembers each request id's content and how often each content occurred.

    The checks run over whole columns (numpy); only a row that fails one goes through :meth:`explain`, which
    words its problems one by one."""

    file: str
    scale: tuple[float, float]
    imported_at: Any  # as the driver binds it (storage.repositories.feedback.bind_time)
    problems: list[Problem]
    by_request: dict[str, bytes]
    occurrences: dict[bytes, int]
    repeated: int = 0

    def problem(self, line: int, field: str | None, message: str) -> None:
        self.problems.append(Problem(self.file, line, field, message))

    def explain(self, line: int, raw: dict[str, Any]) -> None:
        """The problems of one row that failed a check, each with its field."""
        model = raw.get("model")
        if not isinstance(model, str) or not model.strip():
            self.problem(line, "model", "missing: the model's name")
        ts = parse_timestamp(raw.get("timestamp"))
        if isinstance(ts, str):
            self.problem(line, "timestamp", ts)
        feedback = _number(raw.get("feedback"))
        low, high = self.scale
        if feedback is None or not math.isfinite(feedback):
            self.problem(line, "feedback", f"{raw.get('feedback')!r} is not a number")
        elif self.scale == THUMBS and feedback not in THUMBS:
            self.problem(line, "feedback", f"{raw.get('feedback')!r} is off the thumbs scale: use +1 or -1")
        elif not low <= feedback <= high:
            self.problem(line, "feedback", f"{raw.get('feedback')!r} is off the scale {low:g} to {high:g}")
        for name in ("latency_ms", "ttft_ms"):
            value = raw.get(name)
            if value is None or (isinstance(value, str) and not value.strip()):
                continue
            number = _number(value)
            if number is None or not math.isfinite(number) or number < 0:
                self.problem(line, name, f"{value!r} is not a non-negative number of milliseconds")

    def rows(self, chunk: Chunk) -> list[tuple[Any, ...]]:
        """The chunk's rows to insert (a row with a problem, or a repeat of an earlier event, has none)."""
        n = len(chunk.lines)
        cols = chunk.columns
        empty: list[Any] = [None] * n
        models = cols["model"]
        ok = np.array([isinstance(m, str) and bool(m.strip()) for m in models], dtype=bool)
        ts = _timestamps(cols["timestamp"])
        ok &= np.isfinite(ts)
        fb = _floats(cols["feedback"])
        low, high = self.scale
        ok &= np.isin(fb, THUMBS) if self.scale == THUMBS else (fb >= low) & (fb <= high)
        timings = []
        for name in ("latency_ms", "ttft_ms"):
            raw = cols.get(name, empty)
            values = _floats(raw)
            ok &= _blank(raw) | (np.isfinite(values) & (values >= 0))
            timings.append(values)
        for i in np.flatnonzero(~ok):
            self.explain(chunk.lines[i], chunk.raw(int(i)))
        good = np.flatnonzero(ok)
        if len(good) == 0:
            return []
        pick = good.tolist()
        every = len(pick) == n  # the usual case: plain column lists, no picking row by row

        def take(column: list[Any]) -> list[Any]:
            return column if every else [column[i] for i in pick]

        model_list = [m.strip() for m in take(models)]
        scenarios = [None if v is None else (str(v).strip() or None) for v in take(cols.get("scenario", empty))]
        rids = [None if v is None or v is True or v is False else (str(v).strip() or None)
                for v in take(cols.get("request_id", empty))]  # fmt: skip
        lines = take(chunk.lines)
        ts_list = ts[good].astype(np.int64).tolist()
        fb_list = fb[good].tolist()
        lat, ttft = ([None if v != v else v for v in t[good].tolist()] for t in timings)  # NaN -> None
        digests = [
            hashlib.blake2b(orjson.dumps(c), digest_size=16).digest()
            for c in zip(model_list, scenarios, ts_list, fb_list, lat, ttft, strict=True)
        ]
        keys: list[str | None] = []  # None: not written (a repeat, or a conflict)
        for rid, digest, line in zip(rids, digests, lines, strict=True):
            if rid is not None:
                seen = self.by_request.get(rid)
                if seen is not None:
                    if seen != digest:
                        self.problem(line, "request_id", f"{rid!r} appears earlier in the file with other content")
                    else:
                        self.repeated += 1  # the same event sent twice: nothing to write
                    keys.append(None)
                    continue
                self.by_request[rid] = digest
                keys.append("request:" + rid)
            else:
                count = self.occurrences.get(digest, 0)
                self.occurrences[digest] = count + 1
                keys.append(f"content:{digest.hex()}:{count}")
        file, at = repeat(self.file), repeat(self.imported_at)
        rows = zip(keys, (d.hex() for d in digests), model_list, scenarios, ts_list, fb_list, repeat(low),
                   repeat(high), lat, ttft, file, at, lines)  # fmt: skip
        return [r for r in rows if r[0] is not None]


FIELDS = (*REQUIRED, *OPTIONAL)


class Progress:
    """Moves the bar by the bytes read so far, every few thousand lines (a call per line cost a second)."""

    def __init__(self, handle: IO[bytes], bar: tqdm[Any]) -> None:
        self.handle, self.bar, self.done = handle, bar, 0

    def tick(self) -> None:
        position = self.handle.tell()
        self.bar.update(position - self.done)
        self.done = position


def jsonl_chunks(handle: IO[bytes], progress: Progress, checker: Checker) -> Iterator[Chunk]:
    """The file's JSON objects in chunks of :data:`CHUNK`. Lines are parsed as bytes (orjson checks UTF-8
    itself); a blank line is skipped, anything else that is not one JSON object is a problem."""
    numbers: list[int] = []
    objects: list[dict[str, Any]] = []

    def chunk() -> Chunk:
        rows = list(objects)
        columns = {f: [o.get(f) for o in rows] for f in FIELDS}
        return Chunk(list(numbers), columns, rows.__getitem__)

    loads, decode_error = orjson.loads, orjson.JSONDecodeError
    for number, line in enumerate(handle, start=1):
        try:
            value = loads(line)
        except decode_error as exc:
            if line.strip():
                checker.problem(number, None, f"not valid JSON ({exc}); each line must be one JSON object")
            continue
        if type(value) is not dict:
            checker.problem(
                number, None, "not a JSON object; each line must be one object with model, timestamp, feedback"
            )
            continue
        numbers.append(number)
        objects.append(value)
        if len(objects) >= CHUNK:
            progress.tick()
            yield chunk()
            numbers.clear()
            objects.clear()
    progress.tick()
    if objects:
        yield chunk()


def csv_chunks(handle: IO[bytes], progress: Progress, checker: Checker) -> Iterator[Chunk]:
    """The file's CSV rows in chunks of :data:`CHUNK`, by the header's names (case and spaces ignored); a
    header without a required column is a problem at line 1, as is a row with another number of cells."""
    text = io.TextIOWrapper(handle, encoding="utf-8-sig", newline="")
    reader = csv.reader(text)
    try:
        header = next(reader, None)
        if header is None:
            return
        names = [h.strip().lower() for h in header]
        missing = [c for c in REQUIRED if c not in names]
        for column in missing:
            checker.problem(1, column, f"missing column; the header needs {', '.join(REQUIRED)}")
        if missing:
            return
        where = {f: names.index(f) for f in FIELDS if f in names}
        numbers: list[int] = []
        rows: list[list[str]] = []

        def chunk() -> Chunk:
            mine = list(rows)
            columns = {f: [r[k] for r in mine] for f, k in where.items()}
            return Chunk(list(numbers), columns, lambda i: dict(zip(names, mine[i], strict=True)))

        width = len(names)
        for cells in reader:
            if len(cells) != width:
                if any(c.strip() for c in cells):
                    checker.problem(reader.line_num, None, f"{len(cells)} cells where the header has {width}")
                continue
            numbers.append(reader.line_num)
            rows.append(cells)
            if len(rows) >= CHUNK:
                progress.tick()
                yield chunk()
                numbers.clear()
                rows.clear()
        progress.tick()
        if rows:
            yield chunk()
    except UnicodeDecodeError:
        checker.problem(reader.line_num + 1, None, "not UTF-8 text; save the file as UTF-8")
    except csv.Error as exc:
        checker.problem(reader.line_num, None, f"not readable as CSV ({exc})")
    finally:
        text.detach()  # the caller closes the file


def format_of(path: Path, fmt: str | None) -> str:
    if fmt:
        return fmt
    suffix = path.suffix.lower()
    if suffix == ".csv":
        return "csv"
    if suffix in (".jsonl", ".ndjson", ".json"):
        return "jsonl"
    raise ValidationError(
        [Problem(path.name, None, None, "cannot tell the format: name the file .jsonl or .csv, or pass --format")]
    )
