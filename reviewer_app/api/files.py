"""Files in and out of the API: uploads read within the same bounds as the Admin page's, and answers that are
files (reports, exports) sent from a temporary folder or streamed as the service writes them.

Uploads: each file at most ``BLIND_REVIEW_MAX_UPLOAD_MB`` (the Admin page's per-file limit), a whole request at
most ``BLIND_REVIEW_MAX_UNPACKED_MB`` (what one zip may unpack to); a larger one is refused with 413 before its
bytes are kept, by its Content-Length when it sends one and while reading otherwise.
"""

from __future__ import annotations

import io
import queue
import shutil
import tempfile
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TextIO, TypeVar

from fastapi import Request, UploadFile
from starlette.background import BackgroundTask
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.responses import FileResponse, StreamingResponse

from reviewer_app.batches.uploads import Upload, upload_name, without_folder
from reviewer_app.errors import BlindReviewError
from reviewer_app.settings import max_unpacked_bytes, max_upload_mb

__all__ = ["check_request_size", "file_answer", "read_upload", "run_on_file", "run_on_upload", "streamed_text"]

T = TypeVar("T")

_CHUNK = 1024 * 1024


def check_request_size(request: Request) -> None:
    """413 for a request whose declared body is over the whole-request bound (checked before it is read)."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > max_unpacked_bytes():
        raise HTTPException(
            413,
            f"the request is {int(declared) // 2**20} MB; the server takes at most "
            f"{max_unpacked_bytes() // 2**20} MB in one request (BLIND_REVIEW_MAX_UNPACKED_MB)",
        )


async def read_upload(file: UploadFile) -> Upload:
    """The upload's name and bytes; 413 if it is over the per-file bound (read in chunks, so an upload without a
    declared size is cut off at the bound, not held whole)."""
    limit = max_upload_mb() * 2**20
    name = file.filename or "upload"
    if file.size is not None and file.size > limit:
        raise _too_large(name, limit)
    data = bytearray()
    while chunk := await file.read(_CHUNK):
        data += chunk
        if len(data) > limit:
            raise _too_large(name, limit)
    return Upload(name, bytes(data))


def _too_large(name: str, limit: int) -> HTTPException:
    return HTTPException(
        413,
        f"{name}: over {limit // 2**20} MB, the most one file may be (BLIND_REVIEW_MAX_UPLOAD_MB); split it or zip it",
    )


def run_on_file(name: str, data: bytes, service: Callable[[Path], T]) -> T:
    """Run ``service`` on ``data`` written to a temporary folder under the base name of ``name``, so that its
    messages name the file as the caller knows it (``ratings.csv:12: ...``, never the server's folder); the
    folder goes afterwards whatever happens."""
    with tempfile.TemporaryDirectory(prefix="br-api-") as tmp:
        folder = Path(tmp)
        path = folder / (upload_name(name) or "upload")
        path.write_bytes(data)
        try:
            return service(path)
        except BlindReviewError as exc:
            raise without_folder(exc, folder) from None


async def run_on_upload(file: UploadFile, service: Callable[[Path], T]) -> T:
    """:func:`run_on_file` on an upload, read within its bounds, in a worker thread."""
    upload = await read_upload(file)
    return await run_in_threadpool(run_on_file, upload.name, upload.data, service)


def file_answer(
    make: Callable[[Path], Path], filename: str, media_type: str, *, attachment: bool = True
) -> FileResponse:
    """Run ``make`` on a path in a fresh temporary folder and send what it wrote; the folder goes once sent."""
    folder = Path(tempfile.mkdtemp(prefix="br-api-"))
    try:
        written = make(folder / filename)
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    return FileResponse(
        written,
        media_type=media_type,
        filename=filename if attachment else None,
        content_disposition_type="attachment" if attachment else "inline",
        background=BackgroundTask(shutil.rmtree, folder, ignore_errors=True),
    )


class _Gone(Exception):
    """The client went away mid-stream: the writer stops (and its database session closes)."""


_Chunks = queue.Queue[bytes | BaseException | None]


def _put(chunks: _Chunks, item: bytes | BaseException | None, gone: threading.Event) -> None:
    while not gone.is_set():
        try:
            chunks.put(item, timeout=0.5)
            return
        except queue.Full:
            continue
    raise _Gone


class _QueueText(io.TextIOBase):
    """A text stream whose writes go, encoded and gathered into chunks, to a bounded queue (the response reads
    it): the writer waits when the reader is slow, so memory stays bounded whatever the export's size."""

    def __init__(self, out: _Chunks, gone: threading.Event) -> None:
        self._out = out
        self._gone = gone
        self._buffer: list[str] = []
        self._size = 0

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        self._buffer.append(text)
        self._size += len(text)
        if self._size >= _CHUNK:
            self.flush()
        return len(text)

    def flush(self) -> None:
        if self._buffer:
            _put(self._out, "".join(self._buffer).encode(), self._gone)
            self._buffer, self._size = [], 0


def streamed_text(write: Callable[[TextIO], object], filename: str, media_type: str) -> StreamingResponse:
    """Stream what ``write`` writes to a text stream, as it writes it (in a thread of its own).

    The response starts only once the first chunk is written or ``write`` has finished: an error before then
    (an unknown batch, nothing to export yet) is raised here and answered as a problem, not as a broken 200."""
    chunks: _Chunks = queue.Queue(maxsize=8)
    gone = threading.Event()

    def run() -> None:
        stream = _QueueText(chunks, gone)
        try:
            write(stream)  # type: ignore[arg-type]  # a TextIOBase is the text stream the writers expect
            stream.flush()
            _put(chunks, None, gone)
        except _Gone:
            pass
        except BaseException as exc:  # noqa: BLE001 - handed to the reader, who raises it
            try:
                _put(chunks, exc, gone)
            except _Gone:
                pass

    threading.Thread(target=run, name=f"api-export-{filename}", daemon=True).start()
    first = chunks.get()
    if isinstance(first, BaseException):
        raise first

    def rest() -> Iterator[bytes]:
        try:
            if first is None:
                return
            yield first
            while (chunk := chunks.get()) is not None:
                if isinstance(chunk, BaseException):
                    raise chunk  # mid-stream: the connection is cut, so no client takes a partial file as whole
                yield chunk
        finally:
            gone.set()  # also when the client left early: the writer stops at its next chunk

    return StreamingResponse(
        rest(), media_type=media_type, headers={"Content-Disposition": f'attachment; filename="{filename}"'}
    )
