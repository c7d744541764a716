"""AppTest helpers: run the real app script against the test database, read everything it sent."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from streamlit.testing.v1 import AppTest

APP = str(Path(__file__).resolve().parents[2] / "reviewer_app" / "ui" / "app.py")


def app_for(link_or_token: str | None) -> AppTest:
    """An AppTest of the app signed in with a sign-in link (or bare token), not yet run."""
    at = AppTest.from_file(APP, default_timeout=60)
    if link_or_token:
        at.query_params["token"] = link_or_token.split("token=")[-1]
    return at


def _nodes(node: Any) -> Iterator[Any]:
    """``node`` and everything under it, in page order."""
    yield node
    children = getattr(node, "children", None)
    if isinstance(children, dict):
        for child in children.values():
            yield from _nodes(child)


def sent_text(at: Any) -> str:
    """Every element the script sent to the browser (or under one block), as protobuf text."""
    root = getattr(at, "_tree", at)
    return "\n".join(str(n.proto) for n in _nodes(root) if getattr(n, "proto", None) is not None)


def state_text(at: AppTest) -> str:
    """The session state as ``key=value`` lines (what a blindness check reads)."""
    return "\n".join(f"{k}={v!r}" for k, v in at.session_state.items())


def element_kinds(at: AppTest) -> list[str]:
    """The page's elements in order, by type; a Markdown element as ``markdown:<its text>`` (headings are how a
    page's sections are found)."""
    out: list[str] = []
    for node in _nodes(at._tree):
        kind = getattr(node, "type", None)
        if kind == "markdown":
            out.append(f"markdown:{node.value}")
        elif kind is not None:
            out.append(str(kind))
    return out
