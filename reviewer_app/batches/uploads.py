"""Loading a batch from uploaded files (the Admin page): unpack them safely, then the same load as the CLI.

The uploads are written into a private temporary folder, zips unpacked with their folders (so the image
paths a batch file names still resolve), and :func:`load_batch` runs on them: the checks and the messages
are those of ``blind-review load-batch``, with the temporary folder cut out of every file name. No upload
overwrites another (AlpacaEval's files are all ``model_outputs.json``): a later one with a taken name is
kept under a new one, which the summary names, and the summary counts the outputs of every model.

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
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePosixPath

from sqlalchemy.engine import Engine

from reviewer_app.batches.admin import outputs_per_model
from reviewer_app.batches.catalog import find_batch
from reviewer_app.batches.follow_up import DEFAULT_ANCHOR_SHARE
from reviewer_app.batches.load_summary import LoadSummary
from reviewer_app.batches.loading import load_batch
from reviewer_app.batches.titles import warning_lines
from reviewer_app.domain.enums import OnLeak
from reviewer_app.errors import BatchValidationError, BlindReviewError, Problem, RubricError, ValidationError
from reviewer_app.settings import max_unpacked_bytes, max_zip_members

BATCH_SUFFIXES = (".jsonl", ".csv", ".json")
UPLOAD_TYPES = ("jsonl", "csv", "json", "zip", "png", "jpg", "jpeg", "gif", "webp")
_CHUNK = 1024 * 1024


@dataclass(frozen=True)
class Upload:
    """One uploaded file: its name as the browser gave it, and its bytes."""

    name: str
    data: bytes


@dataclass(frozen=True)
class Unpacked:
    """The batch files found among the uploads, and the uploads kept under another name because an earlier
    upload had taken theirs (AlpacaEval's files are all ``model_outputs.json``)."""

    paths: list[Path]
    renamed: list[tuple[str, str]] = field(default_factory=list)  # (name as uploaded, name it is read as)


@dataclass(frozen=True)
class UploadedLoad:
    """A load from the Admin page: the load's summary, with what the page adds to it."""

    summary: LoadSummary
    per_model: dict[str, int]  # model -> outputs loaded (the batch's, also when it was loaded before)
    renamed: list[tuple[str, str]]
    archived: bool = False  # already loaded, as a batch that is archived

    def lines(self) -> list[str]:
        """The summary worded for the page (the CLI prints :meth:`LoadSummary.lines`): the models with their
        output counts, so a lopsided batch shows at once, and where the full leak list is."""
        s = self.summary
        per_model = "  outputs per model: " + (", ".join(f"{m} {n}" for m, n in self.per_model.items()) or "none")
        if s.already_loaded:
            out = [f"Already loaded: this content is batch {s.batch_name!r} (id {s.batch_id}); nothing was written."]
            if self.archived:
                out.append("  It is archived: restore it under Batches, Archived batches.")
            return [*out, per_model]
        out = [
            f"Loaded batch {s.batch_name!r} (id {s.batch_id}, {s.mode} mode, seed {s.seed}):",
            f"  {sum(s.scenarios.values())} samples in {len(s.scenarios)} scenario(s): "
            + ", ".join(f"{k} {v}" for k, v in sorted(s.scenarios.items())),
            f"  {s.outputs} outputs from {len(s.models)} model(s), {s.items} review items, {s.images} image(s)",
            per_model,
        ]
        out += [
            f"  the upload {old!r} was read as {new!r} (an earlier upload had its name)" for old, new in self.renamed
        ]
        if s.baseline is not None:
            out.append(
                f"  follow-up of {s.baseline!r}: {s.anchor_items} anchor item(s), the baseline's own outputs of "
                f"{s.anchor_samples} sample(s), shown again blind among the new ones"
            )
        if s.audience is not None:
            out.append("  " + s.audience.line(how_to_open="the Batches tab, Open batch"))
        names = warning_lines(s.name_leaks, s.batch_id, s.batch_name, s.scenarios, where=TITLES_HERE)
        if not s.leaks:
            return [*out, "  identity-leak scan: no output names a model or vendor", *names]
        verb = {
            OnLeak.MASK: "masked (reviewers see '[model name]' in their place; reports keep the text)",
            OnLeak.EXCLUDE: "excluded from review",
        }.get(s.on_leak, "flagged (reviewed as written)")
        out.append(f"  {len(s.leaks)} output(s) name a model or vendor, {verb}:")
        out += [f"    sample {lk.sample_id} / {lk.model}: {', '.join(lk.words)}" for lk in s.leaks[:SHOWN_LEAKS]]
        if len(s.leaks) > SHOWN_LEAKS:
            out.append(
                f"    ... and {len(s.leaks) - SHOWN_LEAKS} more: the Batches tab lists every one (Identity leaks)"
            )
        return out + names


SHOWN_LEAKS = 20
TITLES_HERE = 'the Batches tab, "Titles reviewers see"'  # where the page sets the titles reviewers see


def load_uploaded_batch(
    engine: Engine, files: Sequence[Upload], rubric: Upload, *, name: str, on_leak: OnLeak | str = OnLeak.MASK
) -> LoadSummary:
    """:func:`load_uploads` for callers that want the load's summary alone."""
    return load_uploads(engine, files, rubric, name=name, on_leak=on_leak).summary


def load_uploads(
    engine: Engine,
    files: Sequence[Upload],
    rubric: Upload | None,
    *,
    name: str,
    on_leak: OnLeak | str = OnLeak.MASK,
    follow_up: str | None = None,
    anchor_share: float = DEFAULT_ANCHOR_SHARE,
    open_now: bool = False,
    reviewers: Sequence[str] = (),
) -> UploadedLoad:
    """Unpack ``files`` (batch files, images, or zips of them) into a temporary folder and load the batch
    with ``rubric``; the folder is removed afterwards whatever happens. Uploads with the same name are all
    kept (see :func:`unpack_uploads`). With ``follow_up`` (a baseline batch's name) the batch is a follow-up
    of it (``load-batch --follow-up``): ``rubric`` may then be None, the baseline's is taken.

    Raises what :func:`load_batch` raises, with the temporary folder taken out of the messages, and
    :class:`BatchValidationError` when no batch file was uploaded or a zip cannot be read,
    :class:`RubricError` when the rubric is not UTF-8.
    """
    rubric_text = None if rubric is None else _rubric_text(rubric)
    with tempfile.TemporaryDirectory(prefix="br-upload-") as tmp:
        folder = Path(tmp)
        try:
            unpacked = unpack_uploads(folder, files)
            summary = load_batch(
                engine,
                unpacked.paths,
                None if rubric is None else Path(upload_name(rubric.name)),
                name=name,
                on_leak=on_leak,
                rubric_text=rubric_text,
                follow_up=follow_up,
                anchor_share=anchor_share,
                open_now=open_now,
                reviewers=reviewers,
            )
        except BlindReviewError as exc:
            raise without_folder(exc, folder) from None
    archived = summary.already_loaded and find_batch(engine, summary.batch_name).archived_at is not None
    return UploadedLoad(summary, outputs_per_model(engine, summary.batch_id), unpacked.renamed, archived)


def _rubric_text(rubric: Upload) -> str:
    try:
        return rubric.data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = rubric.data[: exc.start].count(b"\n") + 1
        raise RubricError(
            [Problem(upload_name(rubric.name), line, None, "is not UTF-8 text; save it as UTF-8")]
        ) from None


def extract_uploads(folder: Path, uploads: Sequence[Upload]) -> list[Path]:
    """The batch files of :func:`unpack_uploads`."""
    return unpack_uploads(folder, uploads).paths


def unpack_uploads(folder: Path, uploads: Sequence[Upload]) -> Unpacked:
    """Write ``uploads`` into ``folder`` (zips unpacked, every path kept inside it) and find the batch files
    (.jsonl, .csv, .json), sorted. Raises :class:`BatchValidationError` when there is none or a zip cannot be
    read.

    No upload overwrites another: a file whose name an earlier upload took is written beside it as
    ``name (2).json`` (same folder, so the images it names still resolve), and a zip that would overwrite
    anything is unpacked into a folder of its own, ``set (2)/``. Both are listed in ``renamed``."""
    root = folder.resolve()
    written: set[Path] = set()
    renamed: list[tuple[str, str]] = []
    for upload in uploads:
        safe = upload_name(upload.name)
        if safe in ("", ".", ".."):
            continue
        if safe.lower().endswith(".zip"):
            moved = _extract_zip(root, safe, upload.data, written)
            if moved is not None:
                renamed.append((safe, moved + "/"))
            continue
        target = _free_name(root / safe, written)
        target.write_bytes(upload.data)
        written.add(target)
        if target.name != safe:
            renamed.append((safe, target.name))
    batch_files = sorted(p for p in root.rglob("*") if p.is_file() and p.suffix.lower() in BATCH_SUFFIXES)
    if not batch_files:
        raise BatchValidationError(
            [Problem("(upload)", None, None, "no .jsonl, .csv or .json batch file among the uploaded files")]
        )
    return Unpacked(batch_files, renamed)


def _free_name(target: Path, taken: set[Path]) -> Path:
    """``target``, or ``stem (2).ext``, ``stem (3).ext``... beside it: the first that no upload wrote."""
    n = 1
    candidate = target
    while candidate in taken or candidate.exists():
        n += 1
        candidate = target.with_name(f"{target.stem} ({n}){target.suffix}")
    return candidate


def upload_name(name: str) -> str:
    """The file name alone: a browser may send a path, and only the name is ours to use."""
    return PurePosixPath(name.replace("\\", "/")).name


# A zip bomb expands hundreds of times; real batches do not: model text deflates 3-5x, repetitive JSONL
# perhaps 20x, images barely. Past a floor that small test uploads never reach, more than this ratio is refused.
MAX_EXPANSION = 100
EXPANSION_FLOOR = 64 * 1024**2


def _extract_zip(root: Path, name: str, data: bytes, written: set[Path]) -> str | None:
    """Unpack the zip ``name`` into ``root``, or into a folder of its own when a member would overwrite a
    file an earlier upload wrote; returns that folder's name then, else None. Adds what it writes to
    ``written``."""
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
        base, moved = root, None
        targets = [_member_target(base, m) for m in members]
        if any(t is not None and (t in written or t.exists()) for t in targets):
            folder = _free_name(root / PurePosixPath(name).stem, written)
            base, moved = folder, folder.name
            targets = [_member_target(base, m) for m in members]
        seen: set[Path] = set()
        for member, target in zip(members, targets, strict=True):
            if target is None:
                continue
            if target in seen:
                raise _zip_problem(name, f"holds two entries named {member.filename}; zip the batch folder again")
            seen.add(target)
        written_bytes = 0
        for member, target in zip(members, targets, strict=True):
            if target is None:
                continue
            try:
                target.parent.mkdir(parents=True, exist_ok=True)  # inside: "a" and "a/b.jsonl" clash here
                with archive.open(member) as src, target.open("wb") as dst:
                    while chunk := src.read(_CHUNK):
                        written_bytes += len(chunk)
                        if written_bytes > limit:  # counted, not declared: an archive's headers can lie
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
            written.add(target)
    return moved


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


def without_folder(exc: BlindReviewError, folder: Path) -> BlindReviewError:
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
