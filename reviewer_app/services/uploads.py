"""Loading a batch from uploaded files (the Admin page): unpack them safely, then the same load as the CLI.

The uploads are written into a private temporary folder, zips unpacked with their folders (so the image
paths a batch file names still resolve), and :func:`load_batch` runs on them: the checks and the messages
are those of ``blind-review load-batch``, with the temporary folder cut out of every file name.

A zip member is written only if its path stays inside the folder: absolute paths, ``..`` parts and links
are skipped, so an archive cannot write anywhere else on the server. A zip that would unpack to more than
``MAX_UNPACKED_BYTES`` is refused before anything is unpacked (``zipfile`` never inflates a member past
the size its header declares, so the declared sizes are a real bound).
"""

from __future__ import annotations

import io
import stat
import tempfile
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath

from sqlalchemy.engine import Engine

from reviewer_app.domain.enums import OnLeak
from reviewer_app.errors import BatchValidationError, BlindReviewError, Problem, RubricError, ValidationError
from reviewer_app.services.batches import LoadSummary, load_batch

BATCH_SUFFIXES = (".jsonl", ".csv", ".json")
UPLOAD_TYPES = ("jsonl", "csv", "json", "zip", "png", "jpg", "jpeg", "gif", "webp")
MAX_UNPACKED_BYTES = 2 * 1024**3  # a 100,000-output batch is ~150 MB; images are capped one by one at load


@dataclass(frozen=True)
class Upload:
    """One uploaded file: its name as the browser gave it, and its bytes."""

    name: str
    data: bytes


def load_uploaded_batch(
    engine: Engine, files: Sequence[Upload], rubric: Upload, *, name: str, on_leak: OnLeak | str = OnLeak.FLAG
) -> LoadSummary:
    """Unpack ``files`` (batch files, images, or zips of them) into a temporary folder and load the batch
    with ``rubric``; the folder is removed afterwards whatever happens.

    Raises what :func:`load_batch` raises, with the temporary folder taken out of the messages, and
    :class:`BatchValidationError` when no batch file was uploaded or a zip cannot be read,
    :class:`RubricError` when the rubric is not UTF-8.
    """
    try:
        rubric_text = rubric.data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = rubric.data[: exc.start].count(b"\n") + 1
        raise RubricError(
            [Problem(_base_name(rubric.name), line, None, "is not UTF-8 text; save it as UTF-8")]
        ) from None
    with tempfile.TemporaryDirectory(prefix="br-upload-") as tmp:
        folder = Path(tmp)
        try:
            paths = extract_uploads(folder, files)
            return load_batch(
                engine, paths, Path(_base_name(rubric.name)), name=name, on_leak=on_leak, rubric_text=rubric_text
            )
        except BlindReviewError as exc:
            raise _without_folder(exc, folder) from None


def extract_uploads(folder: Path, uploads: Sequence[Upload]) -> list[Path]:
    """Write ``uploads`` into ``folder`` (zips unpacked, every path kept inside it); returns the batch files
    (.jsonl, .csv, .json) found, sorted. Raises :class:`BatchValidationError` when there is none or a zip
    cannot be read."""
    root = folder.resolve()
    for upload in uploads:
        safe = _base_name(upload.name)
        if not safe:
            continue
        if safe.lower().endswith(".zip"):
            _extract_zip(root, safe, upload.data)
        else:
            (root / safe).write_bytes(upload.data)
    batch_files = sorted(p for p in root.rglob("*") if p.is_file() and p.suffix.lower() in BATCH_SUFFIXES)
    if not batch_files:
        raise BatchValidationError(
            [Problem("(upload)", None, None, "no .jsonl, .csv or .json batch file among the uploaded files")]
        )
    return batch_files


def _base_name(name: str) -> str:
    """The file name alone: a browser may send a path, and only the name is ours to use."""
    return PurePosixPath(name.replace("\\", "/")).name


def _extract_zip(root: Path, name: str, data: bytes) -> None:
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except zipfile.BadZipFile:
        raise BatchValidationError(
            [Problem(name, None, None, "is not a readable .zip file; zip the batch folder again")]
        ) from None
    with archive:
        if sum(m.file_size for m in archive.infolist()) > MAX_UNPACKED_BYTES:
            raise BatchValidationError(
                [
                    Problem(
                        name, None, None, f"would unpack to more than {MAX_UNPACKED_BYTES // 1024**3} GB; upload less"
                    )
                ]
            )
        for member in archive.infolist():
            target = _member_target(root, member)
            if target is None:
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(archive.read(member))


def _member_target(root: Path, member: zipfile.ZipInfo) -> Path | None:
    """Where a zip member goes, or None to skip it: folders, links, absolute paths and anything that would
    land outside ``root`` (``..`` parts, a Windows drive)."""
    rel = PurePosixPath(member.filename.replace("\\", "/"))
    if member.is_dir() or rel.is_absolute() or ".." in rel.parts or not rel.parts:
        return None
    if stat.S_ISLNK(member.external_attr >> 16):
        return None
    target = (root / Path(*rel.parts)).resolve()
    return target if target.is_relative_to(root) and target != root else None


def _without_folder(exc: BlindReviewError, folder: Path) -> BlindReviewError:
    """The same error with the temporary folder cut out of file names: the admin knows the files by the
    names they uploaded."""
    prefixes = [str(folder) + "/", str(folder.resolve()) + "/"]

    def clean(text: str) -> str:
        for prefix in prefixes:
            text = text.replace(prefix, "")
        return text

    if isinstance(exc, ValidationError):
        problems = [replace(p, file=clean(p.file), message=clean(p.message)) for p in exc.problems]
        return type(exc)(problems, clean(exc.hint))
    return type(exc)(clean(str(exc)))
