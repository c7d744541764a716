"""A batch's images: checked with its records, stored under the hash of their content, served to reviewers.

A record names its images by paths beside its file; the check (:func:`reviewer_app.domain.input_rules.check_image`)
gives each one an :class:`ImageRef`. The load copies them into the data directory under their digest
(:func:`store_images`), as a display-sized copy when they are larger than a reviewer's page shows
(:func:`display_copy`); :func:`image_path` is where the review page and the admin's views find one again.
A module of its own because the reading of files (:mod:`reviewer_app.batches.ingest`), the load's write
(:mod:`reviewer_app.batches.loading`) and the services that serve images all need these, and nothing else
of one another.
"""

from __future__ import annotations

import io
import shutil
import warnings
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from reviewer_app.domain.input_rules import IMAGE_FORMATS
from reviewer_app.errors import NotFoundError
from reviewer_app.settings import data_dir

IMAGE_TYPES = IMAGE_FORMATS  # Pillow's format name -> the extension an image is stored under
DISPLAY_MAX_SIDE = 2048  # images are stored (and served to reviewers) at most this wide and high


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


def store_images(images: Iterable[ImageRef]) -> set[str]:
    """Copy images into the data directory under the hash of their content (idempotent; the name says nothing
    of the file). An image larger than the display size is stored as a display-sized copy, which is all
    reviewers are ever served."""
    folder = data_dir() / "images"
    stored: set[str] = set()
    for img in images:
        if img.stored_name in stored:
            continue
        target = folder / img.stored_name
        if not target.exists():
            folder.mkdir(mode=0o700, parents=True, exist_ok=True)  # images are the batch's data: owner only
            tmp = target.with_suffix(".tmp")
            if img.needs_display_copy:
                tmp.write_bytes(display_copy(img))
            else:
                shutil.copyfile(img.source, tmp)
            tmp.replace(target)
        stored.add(img.stored_name)
    return stored


def image_path(stored_name: str) -> Path:
    """Where a stored image lives (names are content hashes; nothing else is accepted)."""
    digest, _, ext = stored_name.partition(".")
    # The name is a hex digest and a known extension ("png" is not hex, so the two are checked apart).
    if not digest or not all(c in "0123456789abcdef" for c in digest) or ext not in IMAGE_TYPES.values():
        raise NotFoundError("no such image")
    return data_dir() / "images" / stored_name
