r"""Reading and checking batch files before anything is written.

Three formats are read as :class:`OutputRecord`\ s: our JSONL, our CSV (same columns, ``metadata.<name>``
columns), and AlpacaEval ``model_outputs.json`` files (one per model). Every problem in every file is
collected and reported together as ``file:line: field: what is wrong``, because an admin fixing a
10,000-line file one error per run gives up. The rule for each field (and for images) is in
:mod:`reviewer_app.domain.input_rules`, shared with ``generate`` and ``build-eval-set``. Writing is in
:mod:`reviewer_app.batches.loading`.

A load reads the files twice, a record at a time, and never holds them: :func:`check_batch_files` checks
every record and keeps small keys (ids, prompt digests, where each output was first seen) for the checks
across records; :func:`iter_records` then hands the write the same records again. A 154 MB file had needed
1.2 GB when it was read, decoded and parsed whole.
"""

from __future__ import annotations

import codecs
import csv
import hashlib
import io
import json
import marshal
import os
import tempfile
import warnings
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, TextIO

import orjson
from tqdm import tqdm

from reviewer_app.domain.input_rules import (
    IMAGE_FORMATS,
    REQUIRED_FIELDS,
    check_image,
    images_list_problem,
    record_flaws,
    record_passes,
)
from reviewer_app.errors import BatchValidationError, Problem
from reviewer_app.settings import max_image_bytes, max_image_pixels, max_output_bytes

IMAGE_TYPES = IMAGE_FORMATS  # Pillow's format name -> the extension an image is stored under
PROGRESS_MIN_BYTES = 5 * 1024 * 1024
PROGRESS_MIN_RECORDS = 5_000
DISPLAY_MAX_SIDE = 2048  # images are stored (and served to reviewers) at most this wide and high
_BOM = b"\xef\xbb\xbf"


@dataclass
class ImageRef:
    source: Path
    digest: str  # of the file as given: what the batch's content hash covers
    ext: str
    width: int = 0
    height: int = 0

    @property
    def stored_name(self) -> str:
        return f"{self.digest}.{self.ext}"

    @property
    def needs_display_copy(self) -> bool:
        return max(self.width, self.height) > DISPLAY_MAX_SIDE


def display_copy(image: ImageRef) -> bytes:
    """The image scaled down to fit :data:`DISPLAY_MAX_SIDE` (same format; the first frame of an animation):
    what is stored and served, so that no reviewer's browser or server decodes 50 megapixels per view."""
    from PIL import Image

    pillow_format = {ext: name for name, ext in IMAGE_TYPES.items()}[image.ext]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", Image.DecompressionBombWarning)  # within our limit, checked at load
        with Image.open(image.source) as opened:
            if pillow_format == "JPEG":
                opened.draft("RGB", (DISPLAY_MAX_SIDE, DISPLAY_MAX_SIDE))  # decode at a fraction of the size
            opened.thumbnail((DISPLAY_MAX_SIDE, DISPLAY_MAX_SIDE), Image.Resampling.LANCZOS)
            small = opened if pillow_format != "JPEG" or opened.mode in ("RGB", "L") else opened.convert("RGB")
            out = io.BytesIO()
            small.save(out, pillow_format, **({"quality": 90} if pillow_format in ("JPEG", "WEBP") else {}))
    return out.getvalue()


@dataclass
class OutputRecord:
    sample_id: str
    scenario: str
    prompt: str | list[dict[str, str]]
    model: str
    output: str
    file: str
    line: int | None
    reference: str | None = None
    criteria: str | None = None
    images: list[ImageRef] = field(default_factory=list)
    metadata: dict[str, Any] = field(default_factory=dict)
    repeat: int = 0
    checks: list[dict[str, Any]] | None = None  # the sample's automatic checks, as written (checked)

    def where(self) -> tuple[str, int | None]:
        return self.file, self.line


@dataclass
class CheckedBatch:
    """What the check pass keeps of a batch in memory: counts and small keys per sample, never the texts,
    so that memory grows with the number of samples, not with the bytes of the files. The checked records
    themselves wait in a temporary file (:func:`iter_records` reads them back for the write); close the
    batch, or use it as a context manager, to delete it.

    ``images`` maps the position of a record (in :func:`iter_records` order) to its checked images, for the
    records that have any."""

    outputs: int
    models: list[str]
    scenarios: dict[str, int]  # scenario -> samples, in order of first appearance
    images: dict[int, list[ImageRef]]
    _samples: dict[str, tuple[str, bytes, bytes | None, dict[Any, int]]]
    _spill: _Spill
    _files: list[str] = field(default_factory=list)  # where-seen keys index this (see ``_Check``)

    def models_of(self, sample_id: str) -> set[str] | None:
        """The models with an output for ``sample_id``; None if the batch has no such sample."""
        sample = self._samples.get(sample_id)
        return None if sample is None else {m if type(m) is str else m[0] for m in sample[3]}

    def sample_keys(self) -> dict[str, list[str]]:
        """Scenario -> the batch's sample ids in it, sorted."""
        out: dict[str, list[str]] = {}
        for key, sample in self._samples.items():
            out.setdefault(sample[0], []).append(key)
        return {scenario: sorted(keys) for scenario, keys in out.items()}

    def baseline_problems(
        self, baseline: Mapping[str, tuple[str, Any, str | None, str | None, Any]], name: str
    ) -> list[Problem]:
        """Problems of a follow-up batch against its baseline ``name``: every record of a sample the baseline
        lacks (one problem per record, at its file and line), and every sample whose scenario, prompt,
        reference, criteria or checks differ from the baseline's (at its first record). ``baseline`` maps the
        baseline's sample ids to (scenario, prompt, reference, criteria, checks)."""
        problems: list[Problem] = []
        for key, (scenario, digest, extras, seen) in self._samples.items():
            known = baseline.get(key)
            wheres = sorted(seen.values(), key=lambda w: (w & 0xFFFF, w >> 16))
            if known is None:
                for where in wheres:
                    file, line = self._where(where)
                    problems.append(
                        Problem(
                            file,
                            line,
                            "sample_id",
                            f"{key!r} is not a sample of the baseline batch {name!r}; a follow-up answers the "
                            "baseline's samples only (take them from `blind-review rerun`, or leave this record out)",
                        )
                    )
                continue
            file, line = self._where(wheres[0])
            b_scenario, b_prompt, b_reference, b_criteria, b_checks = known
            b_extras = _extras_digest(b_reference, b_criteria, None if b_checks is None else checks_key(b_checks))
            if scenario != b_scenario:
                what, field_name = f"is in scenario {scenario!r} here but {b_scenario!r} in the baseline", "scenario"
            elif digest != _digest(b_prompt):
                what, field_name = "has a different prompt from the baseline's", "prompt"
            elif extras != b_extras:
                what, field_name = "has a different reference, criteria or checks from the baseline's", "reference"
            else:
                continue
            problems.append(
                Problem(
                    file,
                    line,
                    field_name,
                    f"sample {key!r} {what} {name!r}; a follow-up must answer the same samples",
                )
            )
        return sorted(problems, key=lambda p: (p.file, p.line or 0))

    def _where(self, where_seen: int) -> tuple[str, int | None]:
        return self._files[where_seen & 0xFFFF], (where_seen >> 16) or None

    def forget_samples(self) -> None:
        """Drop the per-sample keys (:meth:`models_of` then knows no sample): the write needs none of them."""
        self._samples = {}

    def image_digests(self) -> set[str]:
        return {img.digest for refs in self.images.values() for img in refs}

    def all_images(self) -> Iterator[ImageRef]:
        for refs in self.images.values():
            yield from refs

    def close(self) -> None:
        self._spill.close()

    def __enter__(self) -> CheckedBatch:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()


class _Spill:
    """Checked records, written as they are checked and read back once for the write: a temporary file of
    ``marshal`` blocks. Reading them back costs about what parsing the JSON again would (both mostly make the
    strings), but the batch files are then read only once: a file changed meanwhile cannot slip in
    unchecked, and CSV and AlpacaEval records come back like JSONL ones."""

    BLOCK_RECORDS = 1_000
    BLOCK_CHARS = 8_000_000

    def __init__(self) -> None:
        self._fh = tempfile.TemporaryFile(prefix="blind-review-load-")
        self._block: list[tuple[Any, ...]] = []
        self._chars = 0

    def add(self, record: tuple[Any, ...], chars: int) -> None:
        self._block.append(record)
        self._chars += chars
        if len(self._block) >= self.BLOCK_RECORDS or self._chars >= self.BLOCK_CHARS:
            self._flush()

    def _flush(self) -> None:
        if self._block:
            data = marshal.dumps(self._block)
            self._fh.write(len(data).to_bytes(8, "little") + data)
            self._block, self._chars = [], 0

    def records(self) -> Iterator[tuple[Any, ...]]:
        # Each block is read whole and then unmarshalled: marshal.load on the file reads it in small pieces.
        self._flush()
        self._fh.seek(0)
        while size := self._fh.read(8):
            yield from marshal.loads(self._fh.read(int.from_bytes(size, "little")))

    def close(self) -> None:
        self._fh.close()


def read_batch_files(paths: list[Path], *, progress: bool = False) -> list[OutputRecord]:
    """Parse and check every file; raise :class:`BatchValidationError` listing all problems found.

    All records in memory at once: for small batches and tests. A load uses :func:`check_batch_files` and
    :func:`iter_records`, which never hold more than a block of records."""
    with check_batch_files(paths, progress=progress) as checked:
        return list(iter_records(checked))


def check_batch_files(paths: list[Path], *, progress: bool = False) -> CheckedBatch:
    """Parse and check every file, one record at a time, keeping small keys only; raise
    :class:`BatchValidationError` listing every problem found (as ``file:line: field: what is wrong``).

    The problems come in the order they always have: each file's parse and field problems in the order the
    files were given (AlpacaEval lists after the others, whose records they follow), then outputs over the
    size limit, then records that contradict each other (the same output twice, one sample with two
    prompts)."""
    if not paths:
        raise BatchValidationError([Problem("(command line)", None, None, "no batch files given")])
    check = _Check()
    try:
        alpaca: list[tuple[Path, list[Any]]] = []
        for path in paths:
            parsed = _check_file(path, check, progress=progress)
            if parsed is not None:
                alpaca.append((path, parsed))
        if alpaca:
            _check_alpaca(alpaca, check)
        problems = check.problems + check.size_problems + check.consistency_problems
        if problems:
            raise BatchValidationError(problems)
    except BaseException:
        check.spill.close()
        raise
    return CheckedBatch(
        outputs=check.outputs,
        models=check.models(),
        scenarios=check.per_scenario,
        images=check.images,
        _samples=check.samples,
        _spill=check.spill,
        _files=check._files,
    )


def _check_file(path: Path, check: _Check, *, progress: bool) -> list[Any] | None:
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


def iter_records(checked: CheckedBatch, *, progress: bool = False) -> Iterator[OutputRecord]:
    """The checked records, in the order they were checked (AlpacaEval lists last), one at a time."""
    records: Iterable[tuple[Any, ...]] = checked._spill.records()
    if progress and checked.outputs > PROGRESS_MIN_RECORDS:
        records = tqdm(records, desc="writing", unit=" outputs", total=checked.outputs)
    images = checked.images
    lists: dict[str, list[dict[str, Any]]] = {}  # a list of checks is shared by every record that has it
    for index, record in enumerate(records):
        sample_id, scenario, prompt, model, repeat, output, ref, crit, meta, file, line, key = record
        checks = None if key is None else lists.get(key)
        if key is not None and checks is None:
            checks = lists[key] = orjson.loads(key)
        yield OutputRecord(
            sample_id=sample_id,
            scenario=scenario,
            prompt=prompt,
            model=model,
            output=output,
            file=file,
            line=line,
            reference=ref,
            criteria=crit,
            images=images.get(index, []),
            metadata=meta,
            repeat=repeat,
            checks=checks,
        )


_EMPTY = "is empty; a batch file needs at least one output"
_NO_RECORDS = "has no records (only blank lines, a header or a byte-order mark); a batch file needs at least one output"
_READ_SIZE = 1 << 20


class _Check:
    """The check pass's running state: problems in their three groups, and per sample only what the checks
    across records need: its scenario, digests of its prompt and of its reference and criteria, and for each
    of its outputs (model and repeat) where it was first seen, packed into an int. Model and scenario names
    are kept once each. About 200 bytes per output, where the output itself is typically a few kilobytes."""

    def __init__(self) -> None:
        self.problems: list[Problem] = []
        self.size_problems: list[Problem] = []
        self.consistency_problems: list[Problem] = []
        self.limit = max_output_bytes()  # first: a bad setting raises before the temporary file is opened
        self.spill = _Spill()
        self.outputs = 0
        self.per_scenario: dict[str, int] = {}
        self.images: dict[int, list[ImageRef]] = {}
        # sample_id -> (scenario, prompt digest, extras digest, {model or (model, repeat): where first seen})
        self.samples: dict[str, tuple[str, bytes, bytes | None, dict[Any, int]]] = {}
        self._names: dict[str, str] = {}  # one string object per model and scenario name
        self._check_keys: dict[str, str] = {}  # one string object per distinct list of checks
        self._files: list[str] = []
        self._last_prompt: Any = None
        self._last_digest = b""

    def record(self, rec: OutputRecord) -> None:
        """Take in a checked record (its texts are not kept)."""
        source_index = rec.metadata.get("source_index") if rec.line is None else None
        self._take(
            rec.sample_id,
            rec.model,
            rec.repeat,
            rec.scenario,
            rec.prompt,
            rec.reference,
            rec.criteria,
            rec.output,
            rec.file,
            rec.line,
            rec.images,
            source_index,
            rec.metadata,
            rec.checks,
        )

    def fields(self, obj: dict[str, Any], name: str, lineno: int) -> None:
        """:meth:`record` for a record whose fields all passed ``record_passes`` (no images), without making
        the record: the check pass sees every record of the batch."""
        sample_id, scenario, model, repeat = obj["sample_id"], obj["scenario"], obj["model"], obj.get("repeat")
        get = obj.get
        self._take(
            sample_id if type(sample_id) is str else str(sample_id),
            model if type(model) is str else str(model),
            0 if repeat is None else repeat,
            scenario if type(scenario) is str else str(scenario),
            obj["prompt"],
            get("reference"),
            get("criteria"),
            obj["output"],
            name,
            lineno,
            [],
            None,
            _metadata(get("metadata")),
            get("checks"),
        )

    def _take(
        self,
        sample_id: str,
        model: str,
        repeat: int,
        scenario: str,
        prompt: Any,
        reference: str | None,
        criteria: str | None,
        output: str,
        file: str,
        line: int | None,
        images: list[ImageRef],
        source_index: Any,
        metadata: dict[str, Any],
        checks: list[dict[str, Any]] | None,
    ) -> None:
        # A sample's checks travel as their canonical JSON, one string object per distinct list: marshal then
        # writes each once per block instead of a list of dicts per record (0.8 s per 100,000 records).
        key = None if checks is None else self._check_keys.setdefault(k := checks_key(checks), k)
        self.spill.add(
            (sample_id, scenario, prompt, model, repeat, output, reference, criteria, metadata, file, line, key),
            len(output),
        )
        index = self.outputs
        self.outputs += 1
        if images:
            self.images[index] = images
        if len(output) * 4 > self.limit:  # UTF-8 takes at most 4 bytes a character
            size = len(output.encode())
            if size > self.limit:
                # AlpacaEval files have no line per output; name the list position instead.
                field_name = "output" if line is not None else f"[{source_index}].output"
                self.size_problems.append(
                    Problem(
                        file,
                        line,
                        field_name,
                        f"is {size / 1e6:.1f} MB, over the {self.limit / 1e6:.0f} MB limit "
                        "(BLIND_REVIEW_MAX_OUTPUT_MB); no reviewer can judge that in a browser — check the "
                        "generation for a runaway output",
                    )
                )
        names = self._names
        model = names.setdefault(model, model)
        sample = self.samples.get(sample_id)
        output_key: Any = model if repeat == 0 else (model, repeat)
        if sample is not None:
            first = sample[3].get(output_key)
            if first is not None:
                f_file, f_line = self._files[first & 0xFFFF], first >> 16
                where = f"{f_file}:{f_line}" if f_line else f_file
                self.consistency_problems.append(
                    Problem(
                        file,
                        line,
                        "sample_id",
                        f"({sample_id!r}, {model!r}"
                        f"{', repeat ' + str(repeat) if repeat else ''}) appears twice (first at "
                        f'{where}); give repeated generations a distinct "repeat" number',
                    )
                )
                return
        if not self._files or self._files[-1] != file:
            self._files.append(file)
        where_seen = (line or 0) << 16 | (len(self._files) - 1)
        # The outputs of a sample usually follow one another: compare with the last prompt (cheap) before
        # digesting it.
        if prompt != self._last_prompt or type(prompt) is not type(self._last_prompt):
            self._last_prompt, self._last_digest = prompt, _digest(prompt)
        digest = self._last_digest
        extras = _extras_digest(reference, criteria, key)
        if sample is None:
            scenario = names.setdefault(scenario, scenario)
            self.samples[sample_id] = (
                scenario,
                digest,
                extras,
                {model if repeat == 0 else (model, repeat): where_seen},
            )
            self.per_scenario[scenario] = self.per_scenario.get(scenario, 0) + 1
            return
        sample[3][output_key] = where_seen
        first_scenario, first_digest, first_extras, _ = sample
        if first_scenario != scenario:
            self.consistency_problems.append(
                Problem(
                    file,
                    line,
                    "scenario",
                    f"sample {sample_id!r} is in scenario {first_scenario!r} elsewhere but {scenario!r} here",
                )
            )
        elif first_digest != digest:
            self.consistency_problems.append(
                Problem(
                    file,
                    line,
                    "prompt",
                    f"sample {sample_id!r} has a different prompt "
                    "elsewhere; every output of a sample must answer the same prompt",
                )
            )
        elif first_extras != extras:
            self.consistency_problems.append(
                Problem(
                    file,
                    line,
                    "reference",
                    f"sample {sample_id!r} has a different reference, criteria or checks elsewhere; every "
                    "output of a sample must carry the same ones",
                )
            )

    def models(self) -> list[str]:
        return sorted({m if type(m) is str else m[0] for s in self.samples.values() for m in s[3]})


def _metadata(value: Any) -> dict[str, Any]:
    return {} if value is None else value  # checked: an object, or absent


def _digest(value: Any) -> bytes:
    """A digest that is equal exactly when two prompts (or references) compare equal: the JSON of the value
    with object keys sorted, as chat messages with the same fields in another order are the same message."""
    if type(value) is str:
        return hashlib.blake2b(value.encode("utf-8", "surrogatepass"), digest_size=16, person=b"text").digest()
    return hashlib.blake2b(orjson.dumps(value, option=orjson.OPT_SORT_KEYS), digest_size=16).digest()


def checks_key(checks: Any) -> str:
    """A list of checks as canonical JSON (keys sorted): equal exactly when the lists are."""
    return orjson.dumps(checks, option=orjson.OPT_SORT_KEYS).decode()


def _extras_digest(reference: str | None, criteria: str | None, checks_key: str | None) -> bytes | None:
    """What must be the same on every output of a sample besides its prompt (None when it has none of them);
    a sample without checks digests as it did before checks existed."""
    if reference is None and criteria is None and checks_key is None:
        return None
    return _digest([reference, criteria] if checks_key is None else [reference, criteria, checks_key])


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


def _check_jsonl(path: Path, fh: BinaryIO, check: _Check, *, progress: bool) -> None:
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


def _check_csv(path: Path, check: _Check) -> None:
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


def _check_alpaca(files: list[tuple[Path, list[Any]]], check: _Check) -> None:
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


def content_hash(paths: list[Path], rubric_text: str, image_digests: Iterable[str] = ()) -> str | None:
    """A digest of what a batch is made of — the files' bytes, the rubric and the bytes of the images the
    files name (``image_digests``), not the files' names. None if a file cannot be read (the full check
    then reports it). A batch without images hashes as before images were hashed."""
    files = _file_digests(paths)
    return None if files is None else _combine(files[0], rubric_text, image_digests)


def quick_content_hash(paths: list[Path], rubric_text: str) -> tuple[str | None, bool]:
    """:func:`content_hash` without images, and whether any file may name images (a JSON key ``"images"``,
    a CSV header with an images column), from one read of each file. Only when none does is the digest the
    batch's whole content hash, so that a reload is recognised before any parsing. An output text that
    mentions "images" does not count: inside a JSON string its quotes are escaped."""
    files = _file_digests(paths)
    if files is None:
        return None, True
    return _combine(files[0], rubric_text, ()), files[1]


def _file_digests(paths: list[Path]) -> tuple[list[str], bool] | None:
    digests: list[str] = []
    images = False
    for path in paths:
        try:
            with path.open("rb") as fh:
                digest, named = _file_digest(fh, csv=path.suffix.lower() == ".csv")
        except OSError:
            return None
        digests.append(digest)
        images = images or named
    return digests, images


def _file_digest(fh: BinaryIO, *, csv: bool) -> tuple[str, bool]:
    """The SHA-256 of a file read a megabyte at a time, and whether it may name images."""
    h = hashlib.sha256()
    if csv:
        header = fh.readline()
        h.update(header)
        named = b"images" in header.removesuffix(b"\n")
    else:
        named = False
    key = b'"images"'
    tail = b""
    while chunk := fh.read(_READ_SIZE):
        h.update(chunk)
        if not named and not csv:
            named = key in tail + chunk[: len(key)] or key in chunk
            tail = chunk[-(len(key) - 1) :]
    return h.hexdigest(), named


def _combine(file_digests: list[str], rubric_text: str, image_digests: Iterable[str]) -> str:
    h = hashlib.sha256(rubric_text.encode())
    for d in sorted(file_digests):
        h.update(d.encode())
    for d in sorted(set(image_digests)):
        h.update(b"image:" + d.encode())
    return h.hexdigest()


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
