"""Untrusted text (outputs, prompts, references, criteria, instructions, names) shown as its author wrote it.

Model outputs and prompts are rendered as CommonMark with GFM tables and strikethrough by markdown-it-py,
never by Streamlit's own Markdown, which adds what no model meant: ``$5 and $10`` typeset as LaTeX,
``:red[...]`` coloured, ``:material/...:`` turned into icons, emoji shortcodes replaced. The renderer's
settings are the whole policy:

* raw HTML is off, so ``<script>`` or ``<img onerror=...>`` in a text is shown as those characters;
* no math, no directives, no linkify (a bare ``www.x.com`` stays text);
* a table wider than its box scrolls sideways inside it (on a phone, words are not broken to fit);
* an image (``![p](http://x/a.png)``) is never loaded: it becomes a placeholder naming its alt text and
  address, so no tracking pixel can tell an outsider who reviews when; the batch's own images are shown
  separately, from the server's files;
* a link is kept as a link only for http(s) and mailto, opens in a new tab with no referrer
  (``rel="noopener noreferrer nofollow"``), and shows its address when the text says something else, so
  a reviewer can judge where it points without following it.

The HTML goes to the page with ``st.html``, which inserts it without running it (Streamlit sanitises it
again with DOMPurify). Short untrusted strings that must sit in one of Streamlit's Markdown places (a
caption, a label, a message) go through :func:`markdown_literal` instead, which shows them verbatim.
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from typing import Any

import streamlit as st
from markdown_it import MarkdownIt
from markdown_it.token import Token

_LINK_SCHEMES = ("http://", "https://", "mailto:")

_STYLES = """<style>
.br-md { overflow-wrap: anywhere; line-height: 1.6; }
.br-md > :first-child { margin-top: 0; }
.br-md > :last-child { margin-bottom: 0; }
.br-md pre { background: rgba(128, 128, 128, 0.1); padding: 0.75em 1em; border-radius: 0.5em;
  overflow-x: auto; white-space: pre; }
.br-md code { font-family: "Source Code Pro", monospace; font-size: 0.875em; }
.br-md :not(pre) > code { background: rgba(128, 128, 128, 0.12); padding: 0.1em 0.3em; border-radius: 0.25em; }
.br-md table { border-collapse: collapse; margin: 0.5em 0 1em; display: block; max-width: 100%; overflow-x: auto; }
.br-md th, .br-md td { border: 1px solid rgba(128, 128, 128, 0.35); padding: 0.3em 0.6em; overflow-wrap: normal; }
.br-md blockquote { border-left: 3px solid rgba(128, 128, 128, 0.4); margin: 0 0 1em; padding-left: 1em; }
.br-md .br-image, .br-md .br-href { color: rgba(110, 110, 110, 1); font-size: 0.9em; }
.br-raw { white-space: pre-wrap; overflow-wrap: anywhere; font-family: "Source Code Pro", monospace;
  font-size: 0.875em; background: rgba(128, 128, 128, 0.1); padding: 0.75em 1em; border-radius: 0.5em; margin: 0; }
.br-md .br-image { border: 1px dashed rgba(128, 128, 128, 0.5); border-radius: 0.25em; padding: 0 0.3em; }
</style>"""


def _image(_renderer: Any, tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str:
    token = tokens[idx]
    alt = "".join(child.content for child in token.children or []) or "no description"
    src = str(token.attrGet("src") or "")
    where = f" ({html.escape(src)})" if src else ""
    return f'<span class="br-image">[image not loaded: {html.escape(alt)}]{where}</span>'


def _link_open(_renderer: Any, tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str:
    href = str(tokens[idx].attrGet("href") or "")
    if not href.lower().startswith(_LINK_SCHEMES):
        return ""  # a relative or unusual address: its text only
    return (
        f'<a href="{html.escape(href)}" target="_blank" rel="noopener noreferrer nofollow" '
        'referrerpolicy="no-referrer">'
    )


def _link_close(_renderer: Any, tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str:
    start = idx - 1
    while start >= 0 and tokens[start].type != "link_open":
        start -= 1
    href = str(tokens[start].attrGet("href") or "") if start >= 0 else ""
    if not href.lower().startswith(_LINK_SCHEMES):
        return ""
    text = "".join(t.content for t in tokens[start + 1 : idx])
    shown = (
        ""
        if text.strip() in (href, href.removeprefix("mailto:"))
        else f' <span class="br-href">({html.escape(href)})</span>'
    )
    return "</a>" + shown


def _renderer() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
    md.enable(["table", "strikethrough"])
    # Entities stay as written: "&#67;laude" must not turn into a name the leak scan never saw.
    md.disable("entity")
    md.add_render_rule("image", _image)
    md.add_render_rule("link_open", _link_open)
    md.add_render_rule("link_close", _link_close)
    return md


_MD = _renderer()


def to_html(text: str) -> str:
    """``text`` rendered as CommonMark/GFM (see the module docstring): HTML that loads nothing and runs
    nothing, wrapped in ``<div class="br-md">``."""
    return f'<div class="br-md">{_MD.render(text)}</div>'


def install_styles() -> None:
    """The rendered text's styles (code blocks, tables, placeholders); once per page, takes no space."""
    st.html(_STYLES)


def render_markdown(text: str) -> None:
    """Show untrusted Markdown as its author wrote it (see the module docstring)."""
    st.html(to_html(text) if text.strip() else '<div class="br-md"><p><em>(empty)</em></p></div>')


def raw_html(text: str) -> str:
    """``text`` itself, character for character (leading and trailing line breaks too), as escaped HTML."""
    return f'<pre class="br-raw">{html.escape(text)}</pre>'


def render_raw(text: str) -> None:
    """Show the text itself, character for character, in a monospaced box: nothing is interpreted."""
    st.html(raw_html(text))


# What can make Streamlit's Markdown fetch, run or restyle something: emphasis, code, links and images
# (``[``), HTML (``<``), entities (``&``), ``$`` math and ``~~`` strikethrough are backslash-escaped. The rest
# (a full stop, an apostrophe, "answer: correctness") is left as it is, so plain messages read the same.
_SPECIAL = re.compile(r"([\\`*_\[\]<>&$~])")
# A colon that starts a ``:directive[...]``, a ``:material/...:`` icon or an ``:emoji:`` shortcode: Streamlit
# looks for those in the raw text, before any backslash counts, so an invisible word joiner goes after it.
_NAME_COLON = re.compile(r":(?=[\w/+-])")
WORD_JOINER = "\u2060"


def markdown_literal(text: str) -> str:
    """``text`` for one of Streamlit's Markdown places (a caption, a label, a message), shown verbatim.

    No emphasis, link, image, HTML, code span, ``$`` math, directive, icon or emoji shortcode can form (see
    above; the word joiner after such a colon is invisible). Line breaks become spaces."""
    escaped = _SPECIAL.sub(r"\\\1", " ".join(text.splitlines()))
    return _NAME_COLON.sub(":" + WORD_JOINER, escaped)
