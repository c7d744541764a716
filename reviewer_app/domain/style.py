"""An output's style, counted the one way the tool counts it: Markdown headers, list items, bold spans and
code blocks (its length in words is ``words.count_words``).

These are the style features Chatbot Arena's style control holds fixed (Li, Angelopoulos & Chiang, "Does style
matter? Disentangling style and substance in Chatbot Arena", LMSYS blog, August 2024; FastChat PR #3495:
answer length, Markdown headers, bold elements and list elements), plus fenced code blocks. Storage counts them
once at load (``Output.n_headers`` ...) so that a report reads four small integers per output, never the text;
the migration that added them counted every stored output the same way.

Counting rules, CommonMark-ish and deliberately simple (a count, not a parser): a fenced code block is a
```` ``` ```` or ``~~~`` fence line to its closing fence (an unclosed one runs to the end); inside code blocks
nothing else is counted. A header is an ATX line (``#`` to ``######``, up to three spaces in, then a space and
text); a list item a line starting (after any indent) with ``-``, ``*`` or ``+``, or a number with ``.`` or ``)``,
then a space and text; a bold span ``**text**`` or ``__text__`` on one line.
"""

from __future__ import annotations

import re
from typing import NamedTuple

__all__ = ["STYLE_FEATURES", "StyleCounts", "style_counts"]

STYLE_FEATURES = ("headers", "list_items", "bold", "code_blocks")

_FENCE = re.compile(r"^[ \t]{0,3}(`{3,}|~{3,})", re.MULTILINE)
_HEADER = re.compile(r"^ {0,3}#{1,6}[ \t]+\S", re.MULTILINE)
_LIST_ITEM = re.compile(r"^[ \t]*(?:[-*+]|\d{1,9}[.)])[ \t]+\S", re.MULTILINE)
_BOLD = re.compile(r"\*\*(?=\S)[^*\n]+?\*\*|__(?=\S)[^_\n]+?__")


class StyleCounts(NamedTuple):
    headers: int
    list_items: int
    bold: int
    code_blocks: int


def style_counts(text: str) -> StyleCounts:
    """The text's Markdown headers, list items, bold spans and fenced code blocks (see the module docstring)."""
    prose, blocks = _without_code(text)
    return StyleCounts(len(_HEADER.findall(prose)), len(_LIST_ITEM.findall(prose)), len(_BOLD.findall(prose)), blocks)


def _without_code(text: str) -> tuple[str, int]:
    """The text with its fenced code blocks cut out, and how many there were."""
    fences = list(_FENCE.finditer(text))
    if not fences:
        return text, 0
    kept: list[str] = []
    start, blocks, k = 0, 0, 0
    while k < len(fences):
        opening = fences[k]
        marker = opening.group(1)
        kept.append(text[start : opening.start()])
        blocks += 1
        close = next(
            (j for j in range(k + 1, len(fences)) if fences[j].group(1)[0] == marker[0]
             and len(fences[j].group(1)) >= len(marker)),
            None,
        )  # fmt: skip
        if close is None:
            return "".join(kept), blocks
        start, k = fences[close].end(), close + 1
    kept.append(text[start:])
    return "".join(kept), blocks
