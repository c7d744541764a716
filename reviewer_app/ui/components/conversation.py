"""The prompt as the reviewer sees it: plain text, or a multi-turn conversation as chat bubbles."""

from __future__ import annotations

import streamlit as st

from reviewer_app.ui.components.safe_text import markdown_literal, render_markdown

_AVATARS = {"system": ":material/settings:", "tool": ":material/build:"}


def render_prompt(prompt: str | list[dict[str, str]]) -> None:
    """Show a prompt; a message list becomes one chat bubble per turn, roles named."""
    if isinstance(prompt, str):
        with st.container(border=True):
            render_markdown(prompt)
        return
    for message in prompt:
        role = str(message.get("role", "user"))
        with st.chat_message(role if role in ("user", "assistant") else "ai", avatar=_AVATARS.get(role)):
            st.caption(markdown_literal(role))
            render_markdown(str(message.get("content", "")))
