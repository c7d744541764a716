"""Counting an output's words the one way the tool counts them: ``len(text.split())``, done fast.

Storage counts every output's words once at load (``Output.n_words``, what reports read) and the automatic
checks ``max_words``/``min_words`` count them again on the same text: one function, so a check and the report
never disagree on what a word is; and joining names the one way the sentences of reports join them."""

from __future__ import annotations

import re
from collections.abc import Sequence

__all__ = ["count_words", "join_names"]

# Whitespace as ``str.split()`` sees it: ten ASCII characters, and these beyond ASCII (written out: finding
# them among all 1.1 million code points took 0.3 s of every process start; a test holds the list complete).
_ASCII_SPACE = bytes(c for c in range(128) if chr(c).isspace())
UNICODE_SPACES = "\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"  # a regex class's body
_UNICODE_SPACE = re.compile(f"[{UNICODE_SPACES}]")
_WORD_BYTES = bytes(32 if c in _ASCII_SPACE else 120 for c in range(256))  # space -> " ", the rest -> "x"


def count_words(text: str) -> int:
    """``len(text.split())`` (the ``n_words`` of :func:`storage.models.text_counts`) without making a string
    per word: a text whose only whitespace is ASCII is mapped to spaces and x's and its word starts counted.
    Twice as fast on typical outputs; other texts are split as before."""
    if not text.isascii() and _UNICODE_SPACE.search(text):
        return len(text.split())
    mapped = text.encode("utf-8", "surrogatepass").translate(_WORD_BYTES)
    return mapped.count(b" x") + mapped.startswith(b"x")


def join_names(names: Sequence[str]) -> str:
    """``["A", "B", "C"]`` -> "A, B and C", for the plain-language sentences."""
    names = list(names)
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
