"""The SAMPLES file shared by ``build-eval-set`` (which writes it) and ``generate`` (which reads it).

One JSON object a line: ``sample_id``, ``scenario``, ``prompt`` (a string, or a list of chat messages
``{"role", "content"}`` for multi-turn), optional ``reference``, ``criteria``, ``images`` (paths relative
to the file's folder) and ``checks`` (automatic checks, carried into every generated record). It is the batch
format minus the model fields, so the same checks apply to both.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import json
import os
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reviewer_app import settings
from reviewer_app.domain.input_rules import (
    IMAGE_FORMATS,
    IMAGE_MIME,
    SAMPLE_FIELDS,
    check_image,
    image_format,
    record_flaws,
)
from reviewer_app.errors import GenerationError, Problem, ValidationError

Prompt = str | list[dict[str, str]]


@dataclass(frozen=True)
class Sample:
    """One eval prompt. ``images`` are relative to the folder of the file the sample is stored in."""

    sample_id: str
    scenario: str
    prompt: Prompt
    reference: str | None = None
    criteria: str | None = None
    images: tuple[str, ...] = field(default_factory=tuple)
    checks: list[dict[str, Any]] | None = None  # as written (checked): see ``domain.checks``

    def to_json(self) -> dict[str, Any]:
        record: dict[str, Any] = {
            "sample_id": self.sample_id,
            "scenario": self.scenario,
            "prompt": self.prompt,
        }
        if self.reference is not None:
            record["reference"] = self.reference
        if self.criteria is not None:
            record["criteria"] = self.criteria
        if self.images:
            record["images"] = list(self.images)
        if self.checks is not None:
            record["checks"] = self.checks
        return record


def read_samples(path: Path) -> list[Sample]:
    """Read and check a SAMPLES file, reporting every problem at once; the fields follow the batch rules
    (:mod:`reviewer_app.domain.input_rules`), so what passes here makes a batch ``load-batch`` takes.
    Raises ValidationError, or GenerationError for a missing or empty file."""
    problems: list[Problem] = []
    samples: list[Sample] = []
    seen: dict[str, int] = {}
    name = path.name
    max_image = settings.max_image_bytes()
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        raise GenerationError(f"{path}: no such samples file") from None
    except UnicodeDecodeError as exc:
        raise ValidationError([Problem(name, None, None, f"not UTF-8 text ({exc.reason})")]) from None
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError as exc:
            problems.append(Problem(name, number, None, f"not valid JSON ({exc})"))
            continue
        if not isinstance(record, dict):
            problems.append(Problem(name, number, None, "must be a JSON object"))
            continue
        found = [Problem(name, number, where, message) for where, message in record_flaws(record, SAMPLE_FIELDS)]
        sample_id = str(record.get("sample_id"))
        if not any(p.field == "sample_id" for p in found):
            if sample_id in seen:
                found.append(
                    Problem(name, number, "sample_id", f"{sample_id!r} already used on line {seen[sample_id]}")
                )
            else:
                seen[sample_id] = number
        images = record.get("images") or []
        if not any(p.field == "images" for p in found):
            for image in images:
                checked = check_image(path.parent, image, max_bytes=max_image)
                if isinstance(checked, str):
                    found.append(Problem(name, number, "images", checked))
        if found:
            problems += found
            continue
        samples.append(
            Sample(
                sample_id,
                str(record["scenario"]),
                record["prompt"],
                record.get("reference"),
                record.get("criteria"),
                tuple(images),
                record.get("checks"),
            )
        )
    if problems:
        raise ValidationError(problems)
    if not samples:
        raise GenerationError(f"{path}: no samples in the file")
    return samples


@functools.lru_cache(maxsize=256)
def image_data_url(path: Path) -> str:
    """The image as a base64 data URL, the form every OpenAI-compatible vision server accepts; its type
    is read from the content, as the image rule judged it."""
    data = path.read_bytes()
    mime = IMAGE_MIME[IMAGE_FORMATS.get(image_format(data) or "", "png")]
    return f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"


def build_messages(sample: Sample, base_dir: Path) -> list[dict[str, Any]]:
    """The chat messages to send for a sample. Images go as content parts of the first user message,
    where a person would have attached them when starting the conversation."""
    if isinstance(sample.prompt, str):
        messages: list[dict[str, Any]] = [{"role": "user", "content": sample.prompt}]
    else:
        messages = [dict(m) for m in sample.prompt]
    if sample.images:
        first_user = next(i for i, m in enumerate(messages) if m["role"] == "user")
        parts: list[dict[str, Any]] = [{"type": "text", "text": messages[first_user]["content"]}]
        parts += [
            {"type": "image_url", "image_url": {"url": image_data_url((base_dir / p).resolve())}} for p in sample.images
        ]
        messages[first_user] = {**messages[first_user], "content": parts}
    return messages


def place_image(source: Path, folder: Path) -> str:
    """A path to ``source`` relative to ``folder``, copying the image into ``folder/images/`` (named by
    content hash) when it lies outside: load-batch only follows image paths inside the batch's folder."""
    folder = folder.resolve()
    source = source.resolve()
    if source.is_relative_to(folder):
        return source.relative_to(folder).as_posix()
    data = source.read_bytes()
    target = folder / "images" / f"{hashlib.sha256(data).hexdigest()[:24]}{source.suffix.lower()}"
    if not target.exists():
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(target.name + ".tmp")
        tmp.write_bytes(data)
        os.replace(tmp, target)
    return target.relative_to(folder).as_posix()


def write_jsonl_atomic(path: Path, records: Iterable[dict[str, Any]]) -> None:
    """Write a whole JSONL file or nothing: a temporary file in the same folder, then a rename."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            for record in records:
                handle.write(json.dumps(record, ensure_ascii=False) + "\n")
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
