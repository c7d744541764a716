"""The rules for what people hand us, defined once: batch records (``load-batch``), samples (``generate``)
and request logs (``build-eval-set``) are checked by these functions and nothing else, so the commands
cannot drift apart (a samples file that ``generate`` takes makes a batch that ``load-batch`` takes).

Every rule is a plain function that says what is wrong, in words for the person who must fix the file, or
returns None; it raises nothing. The caller adds where (file, line, field) by wrapping the message in
``reviewer_app.errors.Problem``. Limits come in as arguments: this package reads no settings.

:data:`RECORD_FIELDS` describes each field of a batch record (name, required, the check of a present
value); both the fast and the full record validator of :mod:`reviewer_app.batches.ingest` are built from
it. The fast one only asks whether every check passes; the full one reports what each failing check said.
"""

from __future__ import annotations

import hashlib
import io
import re
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from reviewer_app.domain.checks import check_problem

__all__ = [
    "CheckedImage",
    "IMAGE_FORMATS",
    "IMAGE_MIME",
    "REQUIRED_FIELDS",
    "SAMPLE_FIELDS",
    "check_image",
    "check_image_data",
    "checks_flaw",
    "id_problem",
    "image_format",
    "images_list_problem",
    "prompt_flaw",
    "record_flaws",
    "record_passes",
    "text_problem",
]

ROLES: tuple[str, ...] = ("system", "user", "assistant", "tool")
# Pillow's name of an image format we accept -> the extension images of that type are stored under.
IMAGE_FORMATS: dict[str, str] = {"PNG": "png", "JPEG": "jpg", "GIF": "gif", "WEBP": "webp"}
IMAGE_MIME: dict[str, str] = {"png": "image/png", "jpg": "image/jpeg", "gif": "image/gif", "webp": "image/webp"}

DEFAULT_MAX_IMAGE_PIXELS = 50_000_000  # what BLIND_REVIEW_MAX_IMAGE_PIXELS defaults to

PROMPT_SHAPE = 'must be text or a non-empty list of messages {"role": ..., "content": ...}'


class Flaw(NamedTuple):
    """What is wrong with a field's value, and where inside the value: ``at`` is appended to the field's
    name (``""`` for the value itself, ``"[2].role"`` for the role of the third message of a prompt)."""

    at: str
    message: str


# -- text, ids, chat ---------------------------------------------------------------------------------------


def text_problem(value: Any) -> str | None:
    """Why ``value`` is not text (any string, empty included)."""
    return None if type(value) is str else "must be text"


def id_problem(value: Any) -> str | None:
    """Why ``value`` cannot name a sample, a scenario or a model: it must be non-blank text or a whole
    number (stored as text)."""
    kind = type(value)
    if kind is str:
        if value.strip():
            return None
        return "missing" if not value else "is only whitespace"
    if kind is int:
        return None
    return f"must be text, not {kind.__name__}"


def role_problem(role: Any) -> str | None:
    """Why ``role`` is not a chat role we accept."""
    return None if type(role) is str and role in ROLES else f"must be system, user, assistant or tool, not {role!r}"


def prompt_flaw(value: Any) -> Flaw | None:
    """What is wrong with a prompt: it must be non-blank text, or a non-empty list of chat messages, each
    ``{"role": <a ROLES name>, "content": <text>}`` (other keys, such as ``name``, are kept as given), with
    at least one user message."""
    if type(value) is str:
        if value.strip():
            return None
        return Flaw("", "missing" if not value else "is only whitespace")
    if type(value) is not list or not value:
        return Flaw("", PROMPT_SHAPE)
    has_user = False
    for i, message in enumerate(value):
        if type(message) is not dict or type(message.get("role")) is not str or type(message.get("content")) is not str:
            return Flaw(f"[{i}]", 'each message needs a text "role" and a text "content"')
        problem = role_problem(message["role"])
        if problem is not None:
            return Flaw(f"[{i}].role", problem)
        has_user = has_user or message["role"] == "user"
    if not has_user:
        return Flaw("", 'has no "user" message; a conversation needs at least one')
    return None


def repeat_problem(value: Any) -> str | None:
    """Why ``value`` is not a repeat number (a whole number >= 0)."""
    return None if type(value) is int and value >= 0 else f"must be a whole number >= 0, not {value!r}"


def images_list_problem(value: Any) -> str | None:
    """Why ``value`` is not a list of image paths (each path is then checked by :func:`check_image`)."""
    if type(value) is list and all(type(p) is str for p in value):
        return None
    return "must be a list of image paths relative to this file"


def metadata_problem(value: Any) -> str | None:
    """Why ``value`` is not an output's metadata (a JSON object)."""
    return None if type(value) is dict else "must be an object"


def output_problem(value: Any) -> str | None:
    """Why ``value`` is not an output. Any text, empty included: an empty answer is a real (bad) answer and
    is reviewed as such."""
    return None if type(value) is str else f"must be text, not {type(value).__name__}"


def checks_flaw(value: Any) -> Flaw | None:
    """What is wrong with a sample's ``checks`` (a list of automatic checks, see :mod:`domain.checks`), located
    inside the list (``[1].pattern``)."""
    found = check_problem(value)
    if found is None:
        return None
    where, message = found
    return Flaw(where.removeprefix("checks"), message)


# -- the batch record ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class FieldRule:
    """One field of a batch record. ``check`` judges a present value and returns None, a message, or a
    :class:`Flaw` locating the problem inside the value (a field that is absent or null is "missing" if
    ``required``, else it takes its default); ``in_fast_path`` is False for a field whose values always
    need the full check (images: files to open)."""

    name: str
    required: bool
    check: Callable[[Any], Flaw | str | None]
    in_fast_path: bool = True


RECORD_FIELDS: tuple[FieldRule, ...] = (
    FieldRule("sample_id", True, id_problem),
    FieldRule("scenario", True, id_problem),
    FieldRule("prompt", True, prompt_flaw),
    FieldRule("model", True, id_problem),
    FieldRule("output", True, output_problem),
    FieldRule("reference", False, text_problem),
    FieldRule("criteria", False, text_problem),
    FieldRule("images", False, images_list_problem, in_fast_path=False),
    FieldRule("metadata", False, metadata_problem),
    FieldRule("repeat", False, repeat_problem),
    FieldRule("checks", False, checks_flaw),
)
# A sample (the SAMPLES file of ``generate``) is a record without what a model adds.
SAMPLE_FIELDS: tuple[FieldRule, ...] = tuple(
    rule for rule in RECORD_FIELDS if rule.name not in ("model", "output", "metadata", "repeat")
)
FIELD_NAMES: tuple[str, ...] = tuple(rule.name for rule in RECORD_FIELDS)
REQUIRED_FIELDS: tuple[str, ...] = tuple(rule.name for rule in RECORD_FIELDS if rule.required)
OPTIONAL_FIELDS: tuple[str, ...] = tuple(rule.name for rule in RECORD_FIELDS if not rule.required)
_KNOWN = frozenset(FIELD_NAMES)
_FAST_CHECKS = tuple((rule.name, rule.required, rule.check) for rule in RECORD_FIELDS if rule.in_fast_path)
_SLOW_ONLY = tuple(rule.name for rule in RECORD_FIELDS if not rule.in_fast_path)


def record_passes(record: dict[str, Any]) -> bool:
    """True if :func:`record_flaws` would find nothing and no field needs the full check: the fast path,
    the same checks without collecting what they say."""
    get = record.get
    for name, required, check in _FAST_CHECKS:
        value = get(name)
        if value is None:
            if required:
                return False
        elif check(value) is not None:
            return False
    for name in _SLOW_ONLY:
        if get(name) is not None:
            return False
    return _KNOWN.issuperset(record)


def record_flaws(record: dict[str, Any], fields: tuple[FieldRule, ...] = RECORD_FIELDS) -> list[tuple[str, str]]:
    """Every ``(field, message)`` wrong with a batch record's fields, or with a sample's when ``fields`` is
    :data:`SAMPLE_FIELDS` (image files are checked apart, by :func:`check_image`, which needs the folder)."""
    found: list[tuple[str, str]] = []
    for rule in fields:
        value = record.get(rule.name)
        if value is None:
            if rule.required:
                found.append((rule.name, "missing"))
            continue
        flaw = rule.check(value)
        if isinstance(flaw, Flaw):
            found.append((rule.name + flaw.at, flaw.message))
        elif flaw is not None:
            found.append((rule.name, flaw))
    names = [rule.name for rule in fields]
    unknown = [key for key in record if key not in names]
    if unknown:
        hint = '; put extra information under "metadata"' if "metadata" in names else ""
        found.append((unknown[0], f"unknown field{hint} (known: {', '.join(names)})"))
    return found


# -- images --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CheckedImage:
    """An image that passed :func:`check_image`: the file, its type by content, its content hash."""

    path: Path | None  # resolved; None for image bytes that came inline (a data URL in a request log)
    ext: str
    digest: str
    width: int = 0
    height: int = 0

    @property
    def mime(self) -> str:
        return IMAGE_MIME[self.ext]

    @property
    def stored_name(self) -> str:
        return f"{self.digest}.{self.ext}"


def image_format(data: bytes) -> str | None:
    """The Pillow name of the image format of ``data`` (``"PNG"``, ``"JPEG"``...), or None if Pillow cannot
    read it as an image."""
    from PIL import Image, UnidentifiedImageError

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            with Image.open(io.BytesIO(data)) as image:
                name = image.format or ""
                image.verify()
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError, Image.DecompressionBombError):
        return None
    return name


def _pixel_budget(max_pixels: int) -> None:
    """Let Pillow's own decompression-bomb check fire only beyond our limit: it warns above
    ``Image.MAX_IMAGE_PIXELS`` and raises above twice that, before our check could word the refusal."""
    from PIL import Image

    if Image.MAX_IMAGE_PIXELS is not None and Image.MAX_IMAGE_PIXELS < max_pixels:
        Image.MAX_IMAGE_PIXELS = max_pixels


def _megapixels(pixels: int) -> str:
    return f"{pixels / 1e6:.0f}" if pixels >= 10_000_000 else f"{pixels / 1e6:.1f}".rstrip("0").rstrip(".")


def check_image_data(
    data: bytes, label: str, *, max_bytes: int, max_pixels: int = DEFAULT_MAX_IMAGE_PIXELS, path: Path | None = None
) -> CheckedImage | str:
    """``data`` as an accepted image, or why not: too large (in bytes, or in pixels: a few hundred
    kilobytes of PNG can hold 12000x12000 pixels that every viewer would have to decode), not an image, or
    a type other than PNG, JPEG, GIF or WebP (judged by content, whatever the name says). ``label`` names
    the image in the message. Only the image's header is read to count its pixels; nothing is decoded."""
    if len(data) > max_bytes:
        return (
            f"{label} is {len(data) / 1e6:.1f} MB, over the {max_bytes / 1e6:.0f} MB limit (BLIND_REVIEW_MAX_IMAGE_MB)"
        )
    from PIL import Image, UnidentifiedImageError

    limit = f"the {_megapixels(max_pixels)}-megapixel limit (BLIND_REVIEW_MAX_IMAGE_PIXELS)"
    _pixel_budget(max_pixels)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            with Image.open(io.BytesIO(data)) as image:
                name = image.format or ""
                width, height = image.size
                if width * height > max_pixels:
                    size = f"{width}x{height} pixels ({_megapixels(width * height)} megapixels)"
                    return f"{label} is {size}, over {limit}"
                image.verify()
    except Image.DecompressionBombError as exc:
        found = re.search(r"\((\d+) pixels\)", str(exc))
        size = f" ({_megapixels(int(found.group(1)))} megapixels)" if found else ""
        return f"{label} has too many pixels{size}, over {limit}"
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError):
        return f"{label} is not a readable PNG, JPEG, GIF or WebP image"
    ext = IMAGE_FORMATS.get(name)
    if ext is None:
        return f"{label} is a {name} image; use PNG, JPEG, GIF or WebP"
    return CheckedImage(path, ext, hashlib.sha256(data).hexdigest(), width, height)


def check_image(
    folder: Path, relative: str, *, max_bytes: int, max_pixels: int = DEFAULT_MAX_IMAGE_PIXELS
) -> CheckedImage | str:
    """The image ``relative`` names, or why it cannot be used. ``folder`` is the folder of the file that
    names it: the path must be relative and stay inside that folder (a batch is a folder one can move or
    hand over whole), the file must exist, be at most ``max_bytes`` and pass :func:`check_image_data` (at
    most ``max_pixels``)."""
    label = repr(relative)
    if Path(relative).is_absolute():
        return f"{label} is an absolute path; give paths relative to this file's folder"
    base = folder.resolve()
    target = (base / relative).resolve()
    if not target.is_relative_to(base):
        return f"{label} points outside this file's folder; copy the image next to this file"
    if not target.is_file():
        return f"{label} does not exist next to this file"
    size = target.stat().st_size
    if size > max_bytes:  # before reading it: the file may be huge
        return f"{label} is {size / 1e6:.1f} MB, over the {max_bytes / 1e6:.0f} MB limit (BLIND_REVIEW_MAX_IMAGE_MB)"
    try:
        data = target.read_bytes()
    except OSError as exc:
        return f"{label} cannot be read ({exc.strerror})"
    return check_image_data(data, label, max_bytes=max_bytes, max_pixels=max_pixels, path=target)
