"""The last step of every Markdown this tool writes: names and texts from batch files cannot become markup.

Model, scenario, sample and reviewer names are untrusted (a model called ``![m](http://host/x.png)``), and
the Markdown is read in viewers that render images, links and HTML. Our own Markdown uses headings, lists,
tables and code spans, never a link, an image or a tag, so the whole document can be made inert at once:

* every ``<`` becomes ``&lt;``: no tag, comment or autolink can open;
* every ``[`` that Markdown would read as a bracket becomes ``&#91;``: no link, image, reference definition
  or footnote can form (CommonMark: an entity never stands for a structural character). A bracket that is
  already backslash-escaped (the comments section escapes its texts so) is left alone, and one after an
  escaped backslash (``\\\\[``) is not: an even run of backslashes escapes only itself.

Both render as the characters they replace, so a name is shown as written.
"""

from __future__ import annotations

import re

__all__ = ["inert_markdown"]

_LIVE_BRACKET = re.compile(r"(?<!\\)((?:\\\\)*)\[")


def inert_markdown(text: str) -> str:
    """``text`` (a whole Markdown document of ours) with no tag, link or image able to form."""
    return _LIVE_BRACKET.sub(r"\1&#91;", text.replace("<", "&lt;"))
