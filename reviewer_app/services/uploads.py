"""Loading a batch from uploaded files (the Admin page): unpack them safely, then the same load as the CLI.

The uploads are written into a private temporary folder, zips unpacked with their folders (so the image
paths a batch file names still resolve), and :func:`load_batch` runs on them: the checks and the messages
are those of ``blind-review load-batch``, with the temporary folder cut out of every file name.

A zip member is written only if its path stays inside the folder: absolute paths, ``..`` parts and links
are skipped, so an archive cannot write anywhere else on the server. A zip with more entries than
``BLIND_REVIEW_MAX_ZIP_FILES`` or whose declared sizes add up to more than ``BLIND_REVIEW_MAX_UNPACKED_MB``
is refused before anything is unpacked; while unpacking, the bytes actually written are counted against the
same limit, since a header's sizes are only what the archive claims. A damaged archive (bad CRC, a member
that ends early) is a located problem for the admin, never a traceback.
"""

from __future__ import annotations

import io
import stat
import tempfile
import zipfile
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath

from sqlalchemy.engine import Engine

from reviewer_app.domain.enums import OnLeak
from reviewer_app.errors import BatchValidationError, BlindReviewError, Problem, RubricError, ValidationError
from reviewer_app.services.batches import LoadSummary, load_batch
from reviewer_app.settings import max_unpacked_bytes, max_zip_members

BATCH_SUFFIXES = (".jsonl", ".csv", ".json")
UPLOAD_TYPES = ("jsonl", "csv", "json", "zip", "png", "jpg", "jpeg", "gif", "webp")
_CHUNK = 1024 * 1024


@dataclass(frozen=True)
class Upload:
    """One uploaded file: its name as the browser gave it, and its bytes."""

    name: str
    data: bytes


def load_uploaded_batch(
    engine: Engine, files: Sequence[Upload], rubric: Upload, *, name: str, on_leak: OnLeak | str = OnLeak.MASK
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
        if safe in ("", ".", ".."):
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


# A zip bomb expands hundreds of times; real batches do not: model text deflates 3-5x, repetitive JSONL
# perhaps 20x, images barely. Past a floor that small test uploads never reach, more than this ratio is refused.
MAX_EXPANSION = 100
EXPANSION_FLOOR = 64 * 1024**2


def _extract_zip(root: Path, name: str, data: bytes) -> None:
    limit = min(max_unpacked_bytes(), max(EXPANSION_FLOOR, MAX_EXPANSION * len(data)))
    max_members = max_zip_members()
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, EOFError):
        raise _zip_problem(name, "is not a readable .zip file; zip the batch folder again") from None
    with archive:
        members = archive.infolist()
        if len(members) > max_members:
            raise _zip_problem(
                name,
                f"holds {len(members):,} files, more than the {max_members:,} allowed "
                "(BLIND_REVIEW_MAX_ZIP_FILES); upload fewer files",
            )
        if sum(m.file_size for m in members) > limit:
            raise _too_big(name, limit)
        written = 0
        for member in members:
            target = _member_target(root, member)
            if target is None:
                continue
            try:
                target.parent.mkdir(parents=True, exist_ok=True)  # inside: "a" and "a/b.jsonl" clash here
                with archive.open(member) as src, target.open("wb") as dst:
                    while chunk := src.read(_CHUNK):
                        written += len(chunk)
                        if written > limit:  # counted, not declared: an archive's headers can lie
                            raise _too_big(name, limit)
                        dst.write(chunk)
            except (
                zipfile.BadZipFile,
                zipfile.LargeZipFile,
                NotImplementedError,
                RuntimeError,
                ValueError,
                EOFError,
                OSError,
                zlib.error,
            ) as exc:
                # A bad CRC, a truncated or encrypted member, an unknown compression: the admin's file, not a bug.
                raise _zip_problem(
                    name, f"{member.filename}: cannot be unpacked ({_reason(exc)}); zip the batch folder again"
                ) from None


def _too_big(name: str, limit: int) -> BatchValidationError:
    if limit < max_unpacked_bytes():
        return _zip_problem(
            name,
            f"would unpack to more than {limit / 1024**2:,.0f} MB, over {MAX_EXPANSION} times its own size, "
            "which no real batch does (a zip bomb?); zip the batch folder again",
        )
    return _zip_problem(
        name, f"would unpack to more than {limit / 1024**2:,.0f} MB (BLIND_REVIEW_MAX_UNPACKED_MB); upload less"
    )


def _zip_problem(name: str, message: str) -> BatchValidationError:
    return BatchValidationError([Problem(name, None, None, message)])


def _reason(exc: BaseException) -> str:
    if isinstance(exc, RuntimeError) and "encrypted" in str(exc):
        return "it is encrypted"
    text = str(exc).split(" for file ")[0] if str(exc) else type(exc).__name__
    return text[:120]


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
