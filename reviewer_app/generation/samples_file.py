"""The SAMPLES file shared by ``build-eval-set`` (which writes it) and ``generate`` (which reads it).

One JSON object a line: ``sample_id``, ``scenario``, ``prompt`` (a string, or a list of chat messages
``{"role", "content"}`` for multi-turn), optional ``reference``, ``criteria`` and ``images`` (paths relative
to the file's folder). It is the batch format minus the model fields, so the same checks apply to both.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import json
import mimetypes
import os
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from PIL import Image

from reviewer_app import settings
from reviewer_app.errors import GenerationError, Problem, ValidationError

ROLES = ("system", "user", "assistant", "tool")  # what load-batch accepts
IMAGE_TYPES = {
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".webp": "image/webp",
    ".gif": "image/gif",
}

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
        return record


def prompt_problem(value: Any) -> str | None:
    """Why ``value`` is not a usable prompt (None if it is): a non-empty string, or chat messages with
    known roles and string content that contain at least one user turn."""
    if isinstance(value, str):
        return None if value.strip() else "is empty"
    if not isinstance(value, list) or not value:
        return "must be a non-empty string or a non-empty list of chat messages"
    for i, message in enumerate(value):
        if not isinstance(message, dict) or set(message) - {"role", "content", "name"}:
            return f"message {i}: must be an object with role and content"
        if message.get("role") not in ROLES:
            return f"message {i}: role must be one of {', '.join(ROLES)}, not {message.get('role')!r}"
        if not isinstance(message.get("content"), str):
            return f"message {i}: content must be a string"
    if not any(m["role"] == "user" for m in value):
        return "has no user message"
    return None


def read_samples(path: Path) -> list[Sample]:
    """Read and check a SAMPLES file, reporting every problem at once. Raises ValidationError."""
    problems: list[Problem] = []
    samples: list[Sample] = []
    seen: dict[str, int] = {}
    name = path.name
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
        before = len(problems)
        sample_id, scenario = record.get("sample_id"), record.get("scenario")
        if not isinstance(sample_id, str) or not sample_id.strip():
            problems.append(Problem(name, number, "sample_id", "missing or not a non-empty string"))
        elif sample_id in seen:
            problems.append(Problem(name, number, "sample_id", f"{sample_id!r} already used on line {seen[sample_id]}"))
        else:
            seen[sample_id] = number
        if not isinstance(scenario, str) or not scenario.strip():
            problems.append(Problem(name, number, "scenario", "missing or not a non-empty string"))
        why = prompt_problem(record.get("prompt")) if "prompt" in record else "missing"
        if why:
            problems.append(Problem(name, number, "prompt", why))
        for key in ("reference", "criteria"):
            if record.get(key) is not None and not isinstance(record[key], str):
                problems.append(Problem(name, number, key, "must be a string"))
        images = record.get("images") or []
        if not isinstance(images, list) or not all(isinstance(i, str) for i in images):
            problems.append(Problem(name, number, "images", "must be a list of paths"))
            images = []
        for image in images:
            problem = image_problem(path.parent, image)
            if problem:
                problems.append(Problem(name, number, "images", problem))
        if len(problems) == before:
            samples.append(
                Sample(
                    sample_id,
                    scenario,
                    record["prompt"],
                    record.get("reference"),
                    record.get("criteria"),
                    tuple(images),
                )
            )
    if problems:
        raise ValidationError(problems)
    if not samples:
        raise GenerationError(f"{path}: no samples in the file")
    return samples


def image_problem(base_dir: Path, relative: str) -> str | None:
    """Why an image path cannot be sent (None if it can)."""
    target = base_dir / relative
    if Path(relative).is_absolute():
        return f"{relative}: must be relative to the file's folder"
    if Path(relative).suffix.lower() not in IMAGE_TYPES:
        return f"{relative}: not a supported image type ({', '.join(IMAGE_TYPES)})"
    if not target.is_file():
        return f"{relative}: no such file next to the samples file"
    if target.stat().st_size > settings.max_image_bytes():
        return f"{relative}: larger than BLIND_REVIEW_MAX_IMAGE_MB"
    try:
        with Image.open(target) as image:
            image.verify()
    except Exception:  # Pillow raises many types for a damaged file; all mean the same here
        return f"{relative}: not a readable image"
    return None


@functools.lru_cache(maxsize=256)
def image_data_url(path: Path) -> str:
    """The image as a base64 data URL, the form every OpenAI-compatible vision server accepts."""
    mime = IMAGE_TYPES.get(path.suffix.lower()) or mimetypes.guess_type(path.name)[0] or "image/png"
    return f"data:{mime};base64,{base64.b64encode(path.read_bytes()).decode('ascii')}"


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
