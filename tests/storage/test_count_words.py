"""The load's word count is ``storage.models.text_counts``'s, computed without a string per word."""

from __future__ import annotations

import random

from reviewer_app.domain.words import count_words
from storage.models import text_counts

# Every character str.split() treats as whitespace, some that look like it but are not (zero-width space,
# word joiner, byte-order mark, NUL), ASCII, accented, CJK, emoji and a lone surrogate.
ALPHABET = [chr(c) for c in range(0x80)] + [
    *(chr(c) for c in range(0x80, 0x10000) if chr(c).isspace()),
    "\u200b",
    "\u2060",
    "\ufeff",
    "\u00e9",
    "\u4e2d",
    "\U0001f642",
    "\ud800",
]


def test_the_word_count_is_the_split_count_for_any_text() -> None:
    rng = random.Random(14)
    texts = ["", " ", "word", " two  words ", "\x1c\x1d\x1e\x1f", "a\u3000b", "a\u200bb", "\u2028x\u2029"]
    texts += ["".join(rng.choices(ALPHABET, k=rng.randint(0, 40))) for _ in range(8_000)]
    texts += ["".join(rng.choices("ab \n\u00e9", k=rng.randint(0, 40))) for _ in range(2_000)]
    for text in texts:
        assert count_words(text) == text_counts(text)[1], repr(text)


def test_the_written_out_whitespace_is_every_non_ascii_character_split_breaks_on() -> None:
    import re

    from reviewer_app.domain.words import UNICODE_SPACES

    every = {chr(c) for c in range(128, 0x110000) if chr(c).isspace()}
    listed = {chr(c) for c in range(128, 0x110000) if re.fullmatch(f"[{UNICODE_SPACES}]", chr(c))}
    assert listed == every
