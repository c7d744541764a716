"""How the admin's page words a service's message, and shows it after the rerun an action ends with.

A service's message names the CLI's commands and flags; this page names its own tabs and fields instead (the
checks and the file:line detail stay the service's). Every tab of the page (``admin``, ``admin_batches``)
runs its actions through :func:`act` and shows their outcome with :func:`show_result`.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import streamlit as st

from reviewer_app.errors import BlindReviewError, ValidationError
from reviewer_app.ui.components.safe_text import markdown_literal

# How this page names the arguments a service may find fault with (the CLI names them by its flags).
FIELD_LABELS = {
    "paths": "Batch files",
    "rubric": "Rubric",
    "name": "Batch name",
    "on_leak": "Outputs that name a model or vendor",
    "confirm": "Batch name to confirm",
    "display_name": "Batch title for reviewers",
    "scenario": "Scenario titles",
    "follow_up": "Baseline batch",
    "anchor_share": "Share of samples shown again",
    "reviewers": "Reviewers of this batch",
    "url": "URL",
    "events": "Events",
}
# Where this page opens a batch, in an audience's line (``reviewer_app.batches.audience.Audience.line``).
HOW_TO_OPEN = "Batches tab, Open batch"
# Where a service's message names a command or a flag, this page names its own tab or field (the checks and
# the file:line detail stay the service's).
PAGE_WORDS = [
    (re.compile(r"Fix these and run the command again\."), "Fix these and load again."),
    (
        re.compile(r"or load with --on-leak mask, flag or exclude\."),
        'or load again with another choice under "Outputs that name a model or vendor".',
    ),
    (re.compile(r"; see --on-leak\)"), ")"),
    (re.compile(r" ?\(?see `blind-review list-batches`\)?"), " (see the Batches tab)"),
    (re.compile(r"use `blind-review new-link [^`]*` for a new sign-in link"), "make them a new sign-in link below"),
    (re.compile(r"\(`blind-review add-reviewer NAME --role admin`\)"), "(Add a person, with the role admin)"),
    (re.compile(r"add them with `blind-review add-reviewer [^`]*`"), "add them under People"),
]


def page_message(exc: BlindReviewError) -> str:
    """A service's error as this page says it: its fields by their labels, its commands by the tabs."""
    text = exc.worded(lambda f: FIELD_LABELS.get(f, f)) if isinstance(exc, ValidationError) else str(exc)
    for pattern, words in PAGE_WORDS:
        text = pattern.sub(words, text)
    return text


def show_result(key: str) -> None:
    """The outcome :func:`act` kept under ``key``, once: its first line as success or error, the rest (a
    sign-in link) in a code block."""
    result = st.session_state.pop(key, None)
    if result is None:
        return
    ok, text = result
    first, _, rest = text.partition("\n")
    (st.success if ok else st.error)(markdown_literal(first))  # names and messages are shown as typed
    if rest.strip():
        # A code block shows the text as it is, with a copy button that copies exactly that (a sign-in link).
        st.code(rest.strip("\n"), language=None, wrap_lines=True)


def act(key: str, action: Callable[[], str]) -> None:
    """Run one service call, keep its message for the next run, and rerun."""
    try:
        st.session_state[key] = (True, action())
    except BlindReviewError as exc:
        st.session_state[key] = (False, page_message(exc))
    st.rerun()
