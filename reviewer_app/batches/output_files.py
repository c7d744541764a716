"""Writing a lead-facing file (report, comparison, history, monitor): one way, one set of messages.

Kept apart from the services that compute those things so that a command importing it pulls in nothing else
(the monitor's start-up time is part of its benchmark)."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from pathlib import Path

from reviewer_app.errors import ReportError


def write_rendered(render_text: Callable[[], str], fmt: str, formats: Sequence[str], out: Path) -> Path:
    """Write what ``render_text`` gives into ``out`` (its folder made) when ``fmt`` is one of ``formats``;
    ReportError if the format is unknown or the file cannot be written."""
    if fmt not in formats:
        raise ReportError(f"unknown format {fmt!r}; use one of {', '.join(formats)}")
    text = render_text()
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise ReportError(f"cannot write {out} ({exc.strerror}); check the path and permissions") from exc
    return out


def file_stem(*names: str, fallback: str = "output") -> str:
    """A default file name's stem from batch or model names, joined by ``-vs-``: anything but letters and
    digits (of any script), dots, dashes and underscores becomes ``_``, so a name like ``team/v1 (draft)``
    names one file in the folder the command runs in (not one in a folder ``team``) and no name can climb
    out of it with ``..``."""
    parts = [re.sub(r"[^\w.-]+", "_", n).strip("._") for n in names]
    return "-vs-".join(p or fallback for p in parts)
