"""Reading and checking batch files before anything is written.

Three formats are read into one list of :class:`OutputRecord`: our JSONL, our CSV (same columns,
``metadata.<name>`` columns), and AlpacaEval ``model_outputs.json`` files (one per model). Every problem in
every file is collected and reported together as ``file:line: field: what is wrong``, because an admin
fixing a 10,000-line file one error per run gives up. The rule for each field (and for images) is in
:mod:`reviewer_app.domain.input_rules`, shared with ``generate`` and ``build-eval-set``. Writing is in
:mod:`reviewer_app.services.batches`.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import warnings
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

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

    def where(self) -> tuple[str, int | None]:
        return self.file, self.line


def read_batch_files(paths: list[Path], *, progress: bool = False) -> list[OutputRecord]:
    """Parse and check every file; raise :class:`BatchValidationError` listing all problems found."""
    problems: list[Problem] = []
    records: list[OutputRecord] = []
    alpaca: list[tuple[Path, list[Any]]] = []
    if not paths:
        raise BatchValidationError([Problem("(command line)", None, None, "no batch files given")])
    for path in paths:
        name = str(path)
        try:
            data = path.read_bytes()
        except OSError as exc:
            problems.append(Problem(name, None, None, f"cannot be read ({exc.strerror}); check the path"))
            continue
        if not data.removeprefix(_BOM).strip():
            problems.append(Problem(name, None, None, "is empty; a batch file needs at least one output"))
            continue
        records_before, problems_before = len(records), len(problems)
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            line = data[: exc.start].count(b"\n") + 1
            problems.append(
                Problem(
                    name,
                    line,
                    None,
                    f"is not UTF-8 (byte 0x{data[exc.start]:02x} at offset {exc.start}); re-save the file as UTF-8",
                )
            )
            continue
        suffix = path.suffix.lower()
        if suffix == ".jsonl":
            records += _read_jsonl(path, data, problems, progress=progress and len(data) > PROGRESS_MIN_BYTES)
        elif suffix == ".csv":
            records += _read_csv(path, text, problems)
        elif suffix == ".json":
            parsed = _read_json_list(path, text, problems)
            if parsed is not None:
                alpaca.append((path, parsed))
        else:
            problems.append(
                Problem(
                    name,
                    None,
                    None,
                    f"unknown file type {suffix or '(none)'}; use .jsonl, .csv, or AlpacaEval model_outputs .json",
                )
            )
        if suffix in (".jsonl", ".csv") and len(records) == records_before and len(problems) == problems_before:
            problems.append(Problem(name, None, None, _NO_RECORDS))
    if alpaca:
        records += _read_alpaca(alpaca, problems)
    _check_output_sizes(records, problems)
    _check_consistency(records, problems)
    if problems:
        raise BatchValidationError(problems)
    return records


_NO_RECORDS = "has no records (only blank lines, a header or a byte-order mark); a batch file needs at least one output"


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
            data = path.read_bytes()
        except OSError:
            return None
        digests.append(hashlib.sha256(data).hexdigest())
        if path.suffix.lower() == ".csv":
            images = images or b"images" in data.split(b"\n", 1)[0]
        else:
            images = images or b'"images"' in data
    return digests, images


def _combine(file_digests: list[str], rubric_text: str, image_digests: Iterable[str]) -> str:
    h = hashlib.sha256(rubric_text.encode())
    for d in sorted(file_digests):
        h.update(d.encode())
    for d in sorted(set(image_digests)):
        h.update(b"image:" + d.encode())
    return h.hexdigest()


def _read_jsonl(path: Path, data: bytes, problems: list[Problem], *, progress: bool) -> list[OutputRecord]:
    # Split the bytes (already checked to be UTF-8), not the decoded text: str.splitlines() also breaks at
    # U+2028 and friends, which JSON allows inside strings; and orjson parses bytes without a re-encode.
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    out: list[OutputRecord] = []
    lines: Iterable[tuple[int, bytes]] = enumerate(data.splitlines(), start=1)
    if progress:
        lines = tqdm(lines, desc=f"checking {path.name}", unit=" lines", total=data.count(b"\n") + 1)
    for lineno, line in lines:
        if not line.strip():
            continue
        try:
            obj = orjson.loads(line)
        except orjson.JSONDecodeError as exc:
            problems.append(
                Problem(
                    str(path),
                    lineno,
                    None,
                    f"not valid JSON ({exc.msg} at column {exc.colno}); each line must be one complete JSON object",
                )
            )
            continue
        if not isinstance(obj, dict):
            problems.append(
                Problem(
                    str(path), lineno, None, "must be a JSON object with sample_id, scenario, prompt, model and output"
                )
            )
            continue
        rec = _record_from_fields(obj, path, lineno, problems)
        if rec is not None:
            out.append(rec)
    return out


def _read_csv(path: Path, text: str, problems: list[Problem]) -> list[OutputRecord]:
    out: list[OutputRecord] = []
    reader = csv.DictReader(io.StringIO(text, newline=""))
    header = reader.fieldnames or []
    missing = [c for c in REQUIRED_FIELDS if c not in header]
    if missing:
        problems.append(
            Problem(
                str(path),
                1,
                None,
                f"header lacks column(s) {', '.join(missing)}; the header "
                f"must name {', '.join(REQUIRED_FIELDS)} (optional: reference, criteria, images, repeat, "
                "metadata.<name>)",
            )
        )
        return out
    try:
        for row in reader:
            lineno = reader.line_num
            if None in row:
                problems.append(
                    Problem(str(path), lineno, None, "has more cells than the header; quote cells that contain commas")
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
                else:
                    obj[key] = value
            obj["metadata"] = meta
            rec = _record_from_fields(obj, path, lineno, problems)
            if rec is not None:
                out.append(rec)
    except csv.Error as exc:
        problems.append(Problem(str(path), reader.line_num, None, f"is not valid CSV ({exc})"))
    return out


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


def _read_alpaca(files: list[tuple[Path, list[Any]]], problems: list[Problem]) -> list[OutputRecord]:
    out: list[OutputRecord] = []
    for path, items in files:
        if not items:
            problems.append(Problem(str(path), None, None, _NO_RECORDS))
        for idx, obj in enumerate(items):
            where = f"[{idx}]"
            if not isinstance(obj, dict):
                problems.append(
                    Problem(str(path), None, where, "must be an object {instruction, output, generator, dataset}")
                )
                continue
            bad = False
            for key in ("instruction", "output", "generator"):
                if not isinstance(obj.get(key), str):
                    problems.append(Problem(str(path), None, f"{where}.{key}", "missing or not text"))
                    bad = True
            if bad:
                continue
            instruction = obj["instruction"]
            digest = hashlib.sha1(instruction.encode()).hexdigest()[:12]
            rec = OutputRecord(
                sample_id=f"ae-{digest}",
                scenario=str(obj.get("dataset") or "default"),
                prompt=instruction,
                model=obj["generator"],
                output=obj["output"],
                file=str(path),
                line=None,
                metadata={"source_index": idx},
            )
            out.append(rec)
    return out


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


def _check_output_sizes(records: list[OutputRecord], problems: list[Problem]) -> None:
    """One pass over every record of every format, with the limit read once per load."""
    limit = max_output_bytes()
    for rec in records:
        if len(rec.output) * 4 <= limit:  # UTF-8 takes at most 4 bytes a character
            continue
        size = len(rec.output.encode())
        if size > limit:
            # AlpacaEval files have no line per output; name the list position instead.
            field_name = "output" if rec.line is not None else f"[{rec.metadata['source_index']}].output"
            problems.append(
                Problem(
                    rec.file,
                    rec.line,
                    field_name,
                    f"is {size / 1e6:.1f} MB, over the {limit / 1e6:.0f} MB limit (BLIND_REVIEW_MAX_OUTPUT_MB); "
                    "no reviewer can judge that in a browser — check the generation for a runaway output",
                )
            )


def _check_consistency(records: list[OutputRecord], problems: list[Problem]) -> None:
    """Same (sample_id, model, repeat) twice, or one sample_id with two different prompts or scenarios."""
    seen: dict[tuple[str, str, int], OutputRecord] = {}
    samples: dict[str, OutputRecord] = {}
    for rec in records:
        key = (rec.sample_id, rec.model, rec.repeat)
        first = seen.get(key)
        if first is not None:
            where = f"{first.file}:{first.line}" if first.line else first.file
            problems.append(
                Problem(
                    rec.file,
                    rec.line,
                    "sample_id",
                    f"({rec.sample_id!r}, {rec.model!r}"
                    f"{', repeat ' + str(rec.repeat) if rec.repeat else ''}) appears twice (first at "
                    f'{where}); give repeated generations a distinct "repeat" number',
                )
            )
            continue
        seen[key] = rec
        sample = samples.setdefault(rec.sample_id, rec)
        if sample is rec:
            continue
        if sample.scenario != rec.scenario:
            problems.append(
                Problem(
                    rec.file,
                    rec.line,
                    "scenario",
                    f"sample {rec.sample_id!r} is in scenario {sample.scenario!r} elsewhere but {rec.scenario!r} here",
                )
            )
        elif sample.prompt != rec.prompt:
            problems.append(
                Problem(
                    rec.file,
                    rec.line,
                    "prompt",
                    f"sample {rec.sample_id!r} has a different prompt "
                    "elsewhere; every output of a sample must answer the same prompt",
                )
            )
        elif (sample.reference, sample.criteria) != (rec.reference, rec.criteria):
            problems.append(
                Problem(
                    rec.file,
                    rec.line,
                    "reference",
                    f"sample {rec.sample_id!r} has a different reference or criteria elsewhere",
                )
            )
