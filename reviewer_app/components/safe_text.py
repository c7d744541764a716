"""Untrusted text (model outputs, prompts) made safe for ``st.markdown``.

Outputs are shown as Markdown, but any HTML in them must appear as text and never run. Outside code we
escape ``&``, ``<`` and ``>`` (so ``<script>`` is shown, not parsed), ``$`` (Streamlit would typeset
``$5 and $10`` as LaTeX) and ``![`` (a Markdown image could load a remote tracking pixel). Code spans and
fenced blocks are left alone: the Markdown renderer already shows their content verbatim, and escaping
there would show ``&lt;`` to the reviewer.
"""

from __future__ import annotations

import html
import re

# Fenced blocks (possibly unterminated: Markdown then runs them to the end) and inline code spans.
_CODE = re.compile(r"(```.*?(?:```|\Z)|~~~.*?(?:~~~|\Z)|`[^`\n]+`)", re.S)


def escape_untrusted(text: str) -> str:
    """Escape text that is not code; see the module docstring."""
    parts = _CODE.split(text)
    out = []
    for i, part in enumerate(parts):
        if i % 2:
            out.append(part)
        else:
            out.append(html.escape(part, quote=False).replace("$", "\\$").replace("![", "!\\["))
    return "".join(out)
