"""A batch's content hash: what makes a second load of the same content a no-op.

The hash covers what a batch is made of (the files' bytes, the rubric, the bytes of the images the files name)
and not the files' names. It is read from the bytes alone, before any parsing, so that
:func:`reviewer_app.batches.loading.load_batch` recognises a reload with one read of each file
(:func:`quick_content_hash`) and a batch with images once its records were checked (:func:`content_hash`).
A module of its own: hashing reads files but neither checks nor writes anything.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from pathlib import Path
from typing import BinaryIO

_READ_SIZE = 1 << 20


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
