"""AppTest helpers: run the real app script against the test database, read everything it sent."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from streamlit.testing.v1 import AppTest

APP = str(Path(__file__).resolve().parents[2] / "reviewer_app" / "ui" / "app.py")


def app_for(link_or_token: str | None) -> AppTest:
    """An AppTest of the app signed in with a sign-in link (or bare token), not yet run.

    Its runs may take up to 180 s: a liveness limit, not a speed check (speed is the benchmarks' job). The
    first run in a test process imports the app's stack, which at load 8 can take a good part of 60 s."""
    at = AppTest.from_file(APP, default_timeout=180)
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


def results_tab_key(at: AppTest) -> str:
    """The session-state key of the results page's tabs (one per batch: ``results-tab-<batch id>``)."""
    return next(str(k) for k, _v in at.session_state.items() if str(k).startswith("results-tab-"))


def open_tab(at: AppTest, label: str, timeout: float = 300) -> Any:
    """Open the results page's tab ``label`` (only the open tab is drawn: ``st.tabs(on_change="rerun")``), run
    the page, and return that tab."""
    at.session_state[results_tab_key(at)] = label
    at.run(timeout=timeout)
    assert not at.exception, at.exception
    return next(t for t in at.tabs if t.label == label)


def every_tab(at: AppTest, nodes: Any, timeout: float = 300) -> list[tuple[str, Any]]:
    """The page as ``nodes(at)`` lists it (``(kind, element)`` in page order), with every results tab drawn:
    what the page sent before the tabs, then each tab's marker followed by what that tab draws when open.
    Only the open tab is drawn at a time, so the page is run once per tab."""
    labels = [t.label for t in at.tabs]
    page: list[tuple[str, Any]] = []
    for label in labels:
        open_tab(at, label, timeout)
        run = nodes(at)
        marks = [k for k, (kind, e) in enumerate(run) if kind == "tab"]
        if not page:
            page = run[: marks[0]]
        here = next(k for k in marks if run[k][1].label == label)
        after = [k for k in marks if k > here]
        page += run[here : after[0] if after else len(run)]
    return page
