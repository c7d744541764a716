"""Model outputs shown blind: "Answer" in rating mode, "Answer A" / "Answer B" side by side in pairwise.

Each answer is rendered as Markdown the way its model wrote it (see ``safe_text``), with a "Show raw
text" switch under it that shows the characters themselves, for a reviewer who wants to judge the
formatting (a stray ``**``, a broken table) rather than what it renders to.
"""

from __future__ import annotations

import streamlit as st

from reviewer_app.domain.views import ShownCheck, ShownOutput
from reviewer_app.ui.components.safe_text import markdown_literal, render_markdown, render_raw


def render_outputs(outputs: list[ShownOutput], key: str = "out") -> None:
    """One bordered card per output; two columns when there are two. ``key`` names this item's switches
    (the page passes the assignment id), so every new item starts rendered."""
    columns = st.columns(len(outputs)) if len(outputs) > 1 else [st.container()]
    for column, output in zip(columns, outputs, strict=True):
        with column, st.container(border=True):
            st.markdown(f"**Answer {output.side}**" if output.side else "**Answer**")
            raw = st.toggle("Show raw text", key=f"{key}_raw_{output.side or 'answer'}")
            if raw:
                render_raw(output.text)
            else:
                render_markdown(output.text)
            if output.checks:
                st.caption(checks_line(output.checks))


def checks_line(checks: tuple[ShownCheck, ...]) -> str:
    """The automatic checks under an answer (rubric ``show_checks``), as literal text: names and details
    are the admin's and the check's words, never Markdown."""
    parts = [
        f"{'✅' if c.passed else '❌'} {c.name}" + ("" if c.passed or not c.detail else f" ({c.detail})")
        for c in checks
    ]
    return markdown_literal("Automatic checks: " + " · ".join(parts))
