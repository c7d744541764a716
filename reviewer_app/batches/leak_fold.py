"""Folding text for the identity-leak scan: what renders as a name is matched as one, and maps back.

Text is *folded* before matching, one character at a time, so that what renders as a name is matched as
one: compatibility forms (NFKC: full-width ``Ｃｌａｕｄｅ``, mathematical letters) become plain letters,
format characters (soft hyphens, zero-width spaces and joiners) disappear, letters that look like Latin
ones (Unicode's confusables data, via the ``confusable_homoglyphs`` package: Cyrillic ``С``, Greek ``Ο``)
become those letters, every dash is ``-`` and every space a space, and the result is lower-cased with
diacritics stripped. Because each original character folds on its own, every folded position maps back
to the original text (:class:`Origins`, :func:`original_span`): the scan's matches are spans of the
original, which is what masking needs.

A module of its own: the scan (:mod:`reviewer_app.batches.leakscan`) matches words on folded text and its
rules decide what counts; how one character reads is a question apart, with its own tables.
"""

from __future__ import annotations

import bisect
import functools
import json
import re
import unicodedata
from importlib import resources

_DROPPED_MARKS = ((0x0300, 0x036F), (0x1AB0, 0x1AFF), (0x1DC0, 0x1DFF), (0x20D0, 0x20FF), (0xFE20, 0xFE2F))


@functools.cache
def _confusables() -> dict[str, str]:
    """Character -> the ASCII letter or digit it is drawn like (Unicode's confusables.txt, as shipped by
    ``confusable_homoglyphs``), for the 1,300-odd characters that have one."""
    data = json.loads(resources.files("confusable_homoglyphs").joinpath("confusables.json").read_text("utf-8"))
    table: dict[str, str] = {}
    for char, glyphs in data.items():
        if char.isascii():
            continue
        ascii_like = [g["c"] for g in glyphs if len(g["c"]) == 1 and g["c"].isascii() and g["c"].isalnum()]
        if ascii_like:
            # The same case when there is a choice, letters before digits.
            ascii_like.sort(key=lambda c: (c.isupper() != char.isupper(), c.isdigit()))
            table[char] = ascii_like[0]
    return table


def _fold_char(char: str) -> str:
    out: list[str] = []
    confusables = _confusables()
    for ch in unicodedata.normalize("NFKC", char):
        code = ord(ch)
        category = unicodedata.category(ch)
        if category == "Cf" or 0xFE00 <= code <= 0xFE0F or 0xE0100 <= code <= 0xE01EF:
            continue  # soft hyphen, zero-width space/joiner, bidi controls, variation selectors
        if any(lo <= code <= hi for lo, hi in _DROPPED_MARKS):
            continue  # a combining accent or overlay, even on its own
        if category == "Pd" or ch == "\u2212":
            ch = "-"
        elif category == "Zs":
            ch = " "
        elif ch in "\u2018\u2019\u02bc\u2032\uff07":
            ch = "'"
        for low in ch.lower():
            if not low.isascii():
                # By the lower-case letter, so both cases fold alike (Cyrillic "т" has no Latin twin, "Т" has).
                low = confusables.get(low) or confusables.get(low.upper(), low)
                low = low.lower()
            if ord(low) < 0x0530 or 0x1E00 <= ord(low) <= 0x1EFF:  # Latin, Greek, Cyrillic: strip accents
                out.extend(d for d in unicodedata.normalize("NFD", low) if not unicodedata.combining(d))
            else:
                out.append(low)
    folded = "".join(out)
    # fold() lower-cases whole texts after folding their non-ASCII runs: what is folded must stay as it is.
    return folded if folded.lower() == folded else "".join(c for c in folded if c.lower() == c)


class _FoldTable(dict[int, str]):
    """``str.translate`` table that folds each character on first sight and remembers it."""

    def __missing__(self, code: int) -> str:
        folded = _fold_char(chr(code))
        self[code] = folded
        return folded


_FOLD = _FoldTable()


_NON_ASCII = re.compile(r"[^\x00-\x7f]+")


def fold(text: str) -> str:
    """``text`` as the scan matches it (see the module docstring): each character's fold, in order."""
    if text.isascii():
        return text.lower()
    return _NON_ASCII.sub(lambda run: run.group().translate(_FOLD), text).lower()


class Origins:
    """For each position of ``fold(text)``, the index of the original character it came from: the identity
    but after characters that fold to more or fewer than one (only non-ASCII ones can)."""

    def __init__(self, text: str) -> None:
        self._starts = [0]  # folded positions where a piece of the mapping starts
        self._origins = [0]  # the original index at that position
        self._constant = [False]  # whether the whole piece comes from one character (an expansion)
        shift = 0  # folded position minus original index so far
        for run in _NON_ASCII.finditer(text):
            for i in range(run.start(), run.end()):
                n = len(_FOLD[ord(text[i])])
                if n == 1:
                    continue
                if n > 1:
                    self._add(i + shift, i, True)
                self._add(i + shift + n, i + 1, False)
                shift += n - 1

    def _add(self, start: int, origin: int, constant: bool) -> None:
        self._starts.append(start)
        self._origins.append(origin)
        self._constant.append(constant)

    def __getitem__(self, position: int) -> int:
        k = bisect.bisect_right(self._starts, position) - 1
        return self._origins[k] if self._constant[k] else self._origins[k] + position - self._starts[k]


def fold_pattern(source: str) -> str:
    """A regular expression written in plain lower case, folded like text (its ASCII is left alone)."""
    return "".join(c if c.isascii() else _fold_char(c) for c in source)


def original_span(text: str, origins: Origins, start: int, end: int) -> tuple[int, int]:
    """The span of ``text`` that ``fold(text)[start:end]`` came from, with the characters after it that fold to
    nothing."""
    lo, hi = origins[start], origins[end - 1] + 1
    while hi < len(text) and not _FOLD[ord(text[hi])]:  # a trailing zero-width or combining character
        hi += 1
    return lo, hi
