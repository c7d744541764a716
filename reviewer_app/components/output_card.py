"""Model outputs shown blind: "Answer" in rating mode, "Answer A" / "Answer B" side by side in pairwise."""

from __future__ import annotations

import streamlit as st

from reviewer_app.components.safe_text import escape_untrusted
from reviewer_app.domain.views import ShownOutput


def render_outputs(outputs: list[ShownOutput]) -> None:
    """One bordered card per output; two columns when there are two."""
    columns = st.columns(len(outputs)) if len(outputs) > 1 else [st.container()]
    for column, output in zip(columns, outputs, strict=True):
        with column, st.container(border=True):
            st.markdown(f"**Answer {output.side}**" if output.side else "**Answer**")
            st.markdown(escape_untrusted(output.text))
