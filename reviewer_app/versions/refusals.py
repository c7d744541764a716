"""Which outputs refuse: a phrase such as "I can't help with" near the start of the text.

An output refuses when one of :data:`DEFAULT_REFUSAL_PHRASES` (English; a caller adds its own: the rubric's
``refusal_phrases``) appears in its first :data:`REFUSAL_WINDOW` characters, case-insensitively, with curly
apostrophes read as straight ones. It is a heuristic: a refusal in another language or a polite partial
answer ("I'm unable to check this, but ...") is counted as it reads. The drift table's ``refusal_rate``
(``drift``) counts them.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable

import ahocorasick_rs
import numpy as np
import pandas as pd

DEFAULT_REFUSAL_PHRASES: tuple[str, ...] = (
    "i can't help with",
    "i cannot help with",
    "i can't assist with",
    "i cannot assist with",
    "i can't provide",
    "i cannot provide",
    "i can't comply",
    "i cannot comply",
    "i can't do that",
    "i cannot do that",
    "i won't be able to",
    "i'm unable to",
    "i am unable to",
    "i'm not able to help",
    "i am not able to help",
    "i'm sorry, but i can't",
    "i'm sorry, but i cannot",
    "i am sorry, but i cannot",
    "i must decline",
    "i have to decline",
    "as an ai language model",
    "against my guidelines",
)
REFUSAL_WINDOW = 300  # characters at the start of an output where a refusal phrase counts


def refusals(texts: pd.Series, extra_phrases: Iterable[str] = ()) -> np.ndarray:
    """Which texts refuse (bool per text; a missing text does not): a default or extra phrase within the
    first :data:`REFUSAL_WINDOW` characters, case-insensitive, curly apostrophes read as straight.

    One Aho-Corasick pass (ahocorasick-rs) over the texts' starts joined by a character no phrase holds, the
    matches then placed back in their texts: a regular expression per text was most of the drift table's
    time at 100,000 outputs."""
    phrases = list(dict.fromkeys(_normalise(p) for p in (*DEFAULT_REFUSAL_PHRASES, *extra_phrases) if p.strip()))
    heads = [t[:REFUSAL_WINDOW] if isinstance(t, str) else "" for t in texts.tolist()]
    if not heads or not phrases:
        return np.zeros(len(heads), dtype=bool)
    joined = _SEPARATOR.join(heads)
    folded = _normalise(joined)
    # One lower() for all: unless a text holds the separator or a letter whose lower case is longer ("İ"),
    # every text keeps its place; otherwise each is folded on its own.
    if len(folded) != len(joined) or joined.count(_SEPARATOR) != len(heads) - 1:
        heads = [_normalise(h).replace(_SEPARATOR, " ") for h in heads]
        folded = _SEPARATOR.join(heads)
    # Matched as UTF-8 bytes with a DFA (what the str API does inside, less its mapping of every offset back
    # to a character: 0.1 s instead of 0.4 s at 100,000 outputs). Texts end at byte offsets: the characters'
    # own when all are ASCII, else each head's encoded length.
    data = folded.encode("utf-8")
    if len(data) == len(folded):
        sizes = np.fromiter(map(len, heads), dtype=np.int64, count=len(heads))
    else:
        sizes = np.fromiter((len(h.encode("utf-8")) for h in heads), dtype=np.int64, count=len(heads))
    ends = np.cumsum(sizes + 1)
    found = _matcher(tuple(phrases)).find_matches_as_indexes(data)
    out = np.zeros(len(heads), dtype=bool)
    out[np.searchsorted(ends, np.fromiter((start for _, start, _ in found), dtype=np.int64), side="right")] = True
    return out


@functools.lru_cache(maxsize=16)
def _matcher(phrases: tuple[str, ...]) -> ahocorasick_rs.BytesAhoCorasick:
    """The automaton of ``phrases`` (normalised), built once per list."""
    encoded = [p.encode("utf-8") for p in phrases]
    return ahocorasick_rs.BytesAhoCorasick(encoded, implementation=ahocorasick_rs.Implementation.DFA)


_SEPARATOR = "\x00"  # in no phrase (they are stripped text), so no match spans two outputs


def _normalise(text: str) -> str:
    return text.lower().replace("\u2019", "'").replace("\u2018", "'")
