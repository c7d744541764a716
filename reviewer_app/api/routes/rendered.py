"""Answers in the formats the CLI writes (json, csv, md, html; parquet where the service writes it): JSON
inline, the others as files to save, named as the CLI names them."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from starlette.responses import Response

from reviewer_app.api.files import file_answer

__all__ = ["MEDIA", "TextFormat", "rendered", "rendered_responses"]

TextFormat = Literal["json", "csv", "md", "html"]
MEDIA = {
    "json": "application/json",
    "csv": "text/csv; charset=utf-8",
    "md": "text/markdown; charset=utf-8",
    "html": "text/html; charset=utf-8",
    "jsonl": "application/x-ndjson",
    "parquet": "application/vnd.apache.parquet",
    "zip": "application/zip",
}


def rendered_responses(*formats: str) -> dict[int | str, dict[str, Any]]:
    """The OpenAPI ``responses`` entry for an endpoint answering in ``formats``."""
    return {200: {"content": {MEDIA[f].split(";")[0]: {} for f in formats}, "description": "in the asked format"}}


def rendered(
    fmt: str, filename: str, render: Callable[[], str], write: Callable[[Path], Path] | None = None
) -> Response:
    """``render()`` as ``fmt`` (JSON inline, the other text formats as a named file); a binary format is written
    by ``write`` into a temporary file and sent from there."""
    if write is not None and fmt not in ("json", "csv", "md", "html"):
        return file_answer(write, filename, MEDIA[fmt])
    headers = {} if fmt == "json" else {"Content-Disposition": f'attachment; filename="{filename}"'}
    return Response(render(), media_type=MEDIA[fmt], headers=headers)
