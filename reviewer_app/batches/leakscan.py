"""Identity-leak scan: outputs in which a model names itself or its maker would unblind the reviewer.

"As an AI language model developed by OpenAI" tells a reviewer more than any label could hide. The scan
runs at load over every output with the default words of :mod:`reviewer_app.batches.leak_words` (where
the rules for ambiguous names such as "Claude" or "Google" are described), the batch's own model names
(and their distinctive parts: ``claude-2`` also yields ``claude``), and the rubric's ``leak_words``.

Text is *folded* before matching (:mod:`reviewer_app.batches.leak_fold`: compatibility forms, invisible
characters, look-alike letters, dashes, spaces, case and diacritics), so that what renders as a name is
matched as one; every folded position maps back to the original text, so :class:`LeakMatch` spans are in the
original, which is what masking needs.

Names are scanned too (:func:`name_scanner_for`): a batch's name and its scenario names reach reviewers as
titles ("alpaca-claude-vicuna"; AlpacaEval's "vicuna" dataset as a scenario beside a vicuna-13b candidate).
A name is a label, not prose, so there is no sentence to judge a word by: the batch's model names and their
parts, the rubric's ``leak_words`` and the coined default names count in any case and context, and names
written in camelCase are read as separate words too ("AlpacaClaudeVicuna"). The ordinary words of the
default list ("Gemini", "Amazon", "Alpaca") count only when the batch has such a model: a scenario named
"amazon-reviews" says nothing unless an Amazon model is in the batch.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass
from enum import IntEnum

import ahocorasick_rs

from reviewer_app.batches import leak_words as lw
from reviewer_app.batches.leak_fold import Origins, fold, fold_pattern, original_span

MASK = "[model name]"

# Parts of model names that say nothing about the model ("instruct", "7b", "v0.1").
_GENERIC_PARTS = set(
    """instruct chat preview base model latest turbo mini large small medium hf it sft dpo rlhf beta alpha
    test demo fast pro ultra lite the and new old final release version""".split()
)


def words_for_models(model_names: Iterable[str]) -> list[str]:
    """The model names themselves plus their distinctive parts (letters only, 4+ characters)."""
    words: set[str] = set()
    for name in model_names:
        words.add(name)
        for part in re.split(r"[^A-Za-z]+", name):
            if len(part) >= 4 and part.lower() not in _GENERIC_PARTS:
                words.add(part)
    return sorted(words)


def _is_word(ch: str) -> bool:
    # CJK, kana and Hangul are written without spaces: "我是Claude" has a word boundary before "Claude".
    return ch.isalnum() and ord(ch) < 0x2E80


def _joined(last: str, following: str) -> bool:
    """Whether ``following`` continues the word that ends in ``last``: a letter after a letter ("Falconry")
    or anything alphanumeric after a digit ("GPT-40"); a version number after a name starts a new part
    ("Qwen2.5", "Claude3")."""
    if not _is_word(last) or not _is_word(following):
        return False
    return not (last.isalpha() and following.isdigit())


# -- rules ---------------------------------------------------------------------------------------------------


class Kind(IntEnum):
    """How much context a word needs to count (see :mod:`reviewer_app.batches.leak_words`)."""

    ALWAYS = 0
    NAME = 1
    MODEL = 2
    VENDOR = 3
    MAKER = 4


@dataclass(frozen=True)
class _Entry:
    word: str  # as written in the list
    kind: Kind
    exact: str | None  # a mixed case that must match when no cue precedes ("PaLM")
    version: re.Pattern[str] | None


@dataclass(frozen=True)
class _Rules:
    self_cue: re.Pattern[str]
    author_cue: re.Pattern[str]
    after_cue: re.Pattern[str]
    self_after: re.Pattern[str]
    before_after: tuple[re.Pattern[str], re.Pattern[str]]
    model_word: re.Pattern[str]
    self_or_ai: re.Pattern[str]
    ai_only: re.Pattern[str]
    first_person: re.Pattern[str]
    maker_after: re.Pattern[str]
    ai_before: re.Pattern[str]


@functools.cache
def _rules() -> _Rules:
    gap = r"[\s,:;\-'\"]*$"
    return _Rules(
        self_cue=re.compile(f"(?:{fold_pattern(lw.SELF_CUES)}){gap}"),
        author_cue=re.compile(f"(?:{fold_pattern(lw.AUTHOR_CUES)})\\s*{lw.AUTHOR_GAP}{gap}"),
        after_cue=re.compile(f"\\s{{0,2}}(?:{fold_pattern(lw.AFTER_CUES)})"),
        self_after=re.compile(fold_pattern(lw.SELF_AFTER)),
        before_after=(
            re.compile(f"(?:{lw.BEFORE_AND_AFTER[0]})\\s+$"),
            re.compile(lw.BEFORE_AND_AFTER[1]),
        ),
        model_word=re.compile(fold_pattern(lw.MODEL_WORDS)),
        self_or_ai=re.compile(fold_pattern(lw.SELF_OR_AI)),
        ai_only=re.compile(fold_pattern(lw.AI_ONLY)),
        first_person=re.compile(fold_pattern(lw.FIRST_PERSON)),
        maker_after=re.compile(fold_pattern(lw.MAKER_AFTER)),
        ai_before=re.compile(fold_pattern(lw.AI_BEFORE)),
    )


def _spellings(folded: str) -> set[str]:
    """The ways a name is written: its parts (split at spaces, dashes, underscores and letter-to-digit
    changes) joined by a space, a dash, an underscore or nothing ("gpt-4", "gpt 4", "gpt4")."""
    parts = [p for p in re.split(r"[\s_\-]+|(?<=[^\W\d_])(?=\d)", folded) if p]
    out = {folded}
    if len(parts) <= 1:
        return out
    if len(parts) > 5:
        out.update(sep.join(parts) for sep in (" ", "-", "_", ""))
        return out
    joined = [parts[0]]
    for part in parts[1:]:
        joined = [j + sep + part for j in joined for sep in (" ", "-", "_", "")]
    out.update(joined)
    return out


def _default_entries() -> list[_Entry]:
    entries: list[_Entry] = []
    for words, kind in ((lw.ALWAYS, Kind.ALWAYS), (lw.NAMES, Kind.NAME), (lw.MODELS, Kind.MODEL)):
        for w in words:
            exact = w if kind is Kind.NAME and any(c.isupper() for c in w[1:]) else None
            version = lw.VERSIONS.get(w.lower())
            entries.append(_Entry(w, kind, exact, re.compile(version) if version else None))
    entries += [_Entry(w, Kind.VENDOR, None, None) for w in lw.VENDORS]
    entries += [_Entry(w, Kind.MAKER, None, None) for w in lw.MAKERS]
    return entries


def _name_entries(entries: list[_Entry], own: set[str]) -> list[_Entry]:
    """The default entries as they apply to a name, which has no sentence around a word: a coined name counts
    in any case; one whose mixed case is its mark ("PaLM", "LLaMA") only in that case ("palm-reading" is
    not a model); an ordinary word ("Gemini", "Amazon") not at all. A word that is one of the batch's own
    model words (``own``, folded) counts in any case, whatever its kind."""
    out = []
    for e in entries:
        mine = fold(e.word) in own
        if e.kind is Kind.NAME and e.exact is not None and not mine:
            out.append(e)
        elif e.kind <= Kind.NAME or e.kind is Kind.MAKER or mine:  # a title naming "OpenAI" names a maker
            out.append(_Entry(e.word, Kind.ALWAYS, None, None))
    return out


@dataclass(frozen=True)
class LeakMatch:
    """A word of the list found in a text: ``text[start:end]`` is how the output wrote it."""

    word: str
    start: int
    end: int


class LeakScanner:
    """Finds self-identifications in text: the default words with their rules, plus ``extra`` words (a
    batch's model names, a rubric's ``leak_words``). An extra word with a digit or a separator counts in any
    case and context; a plain one when capitalised or after a cue, unless the default list already has it.
    With ``names=True`` the scanner reads names, not prose (:func:`name_scanner_for`, :meth:`scan_name`):
    every extra word counts in any case and context, and the default words as :func:`_name_entries` says.

    An Aho-Corasick automaton (ahocorasick-rs) finds every candidate in one pass over the folded text; only
    candidates are looked at again, with the context rules (a regular-expression alternation of the same
    words was 25x slower on 100,000 real outputs).
    """

    def __init__(self, extra: Iterable[str] = (), *, defaults: bool = True, names: bool = False) -> None:
        entries = _default_entries() if defaults else []
        extra = [w.strip() for w in extra]
        if names:
            entries = _name_entries(entries, {fold(w) for w in extra if w})
        known = {fold(e.word) for e in entries}
        for w in extra:
            if not w or fold(w) in known:
                continue
            if names and sum(c.isalnum() for c in w) < 2:
                continue  # a model called "a" would make every "a" in a title a leak
            plain = w.isalpha() and not names
            entries.append(_Entry(w, Kind.NAME if plain else Kind.ALWAYS, None, None))
            known.add(fold(w))
        self._entry: dict[str, _Entry] = {}
        for entry in sorted(entries, key=lambda e: e.kind):  # a spelling shared by two words: the stronger
            for spelling in _spellings(fold(entry.word)):
                self._entry.setdefault(spelling, entry)
        self._patterns = sorted(self._entry)
        self._automaton = (
            ahocorasick_rs.AhoCorasick(
                self._patterns,
                matchkind=ahocorasick_rs.MatchKind.LeftmostLongest,
                implementation=ahocorasick_rs.Implementation.DFA,  # 2x faster searches; built once per load
            )
            if self._patterns
            else None
        )
        self.words = sorted({e.word for e in entries}, key=lambda w: (-len(w), w.lower()))

    def find(self, text: str) -> list[LeakMatch]:
        """Every leak in ``text``, in order, with its span in ``text``."""
        if self._automaton is None:
            return []
        folded = fold(text)
        hits = self._automaton.find_matches_as_indexes(folded)
        if not hits:
            return []
        origins = None if text.isascii() else Origins(text)
        kept: list[tuple[_Entry, int, int]] = []
        makers: list[tuple[_Entry, int, int]] = []  # makers named as facts, unless beside a leak (below)
        models: list[tuple[_Entry, int, int]] = []  # model words that did not count on their own
        for idx, start, end in hits:
            pattern = self._patterns[idx]
            if (_is_word(pattern[0]) and start > 0 and _is_word(folded[start - 1])) or (
                end < len(folded) and _joined(pattern[-1], folded[end])
            ):
                continue
            entry = self._entry[pattern]
            if entry.kind is not Kind.ALWAYS and not _in_context(entry, text, folded, origins, start, end):
                if entry.kind is Kind.MAKER:
                    makers.append((entry, start, end))
                elif entry.kind is Kind.MODEL:
                    models.append((entry, start, end))
                continue
            kept.append((entry, start, end))
        if makers and (kept or models):
            # "Anthropic's [model name]" would still name the model: a maker right beside a leak is one too, and
            # a model word beside a maker is that maker's model ("Claude (Anthropic)", "Anthropic's Claude").
            pairs = [(m, o) for m in makers for o in models if _beside(folded, m[1], m[2], o[1], o[2])]
            kept += [o for _, o in pairs]
            kept += [m for m in makers if any(_beside(folded, m[1], m[2], k[1], k[2]) for k in kept)]
            kept = sorted(set(kept), key=lambda k: k[1])
        found: list[LeakMatch] = []
        for entry, start, end in kept:
            lo, hi = (start, end) if origins is None else original_span(text, origins, start, end)
            found.append(LeakMatch(entry.word, lo, hi))
        return found

    def scan(self, text: str) -> list[str]:
        """The distinct leak words found in ``text``, as written in the word list, in order of first match."""
        return list(dict.fromkeys(m.word for m in self.find(text)))

    def scan_name(self, name: str) -> list[str]:
        """The distinct leak words in a name (a batch's, a scenario's, a title), read as written and with its
        camelCase parts apart ("AlpacaClaudeVicuna" is "Alpaca Claude Vicuna"; "DeepSeek" stays one word
        in the first reading). Meant for a scanner made by :func:`name_scanner_for`."""
        found = self.scan(name)
        spaced = _CAMEL_CASE.sub(" ", name)
        if spaced != name:
            seen = {_squeezed(w) for w in found}  # "OpenAI" read apart is "Open AI": one word, said once
            found += [w for w in self.scan(spaced) if _squeezed(w) not in seen]
        return list(dict.fromkeys(found))


# Where a camelCase name starts a new word: a capital after a small letter, or a capitalised word after a
# digit ("GPT4Eval").
_CAMEL_CASE = re.compile(r"(?<=[a-z])(?=[A-Z])|(?<=[0-9])(?=[A-Z][a-z])")


def _squeezed(word: str) -> str:
    return re.sub(r"[\W_]+", "", fold(word))


_FOLLOWER = re.compile(r"\s+([^\W_][\w\-]*)")


def _in_context(entry: _Entry, text: str, folded: str, origins: Origins | None, start: int, end: int) -> bool:
    """Whether a name that is also an ordinary word is, here, a model or its maker naming itself. The
    cheap tests come first: most candidates are settled without a regular-expression search."""
    rules = _rules()

    def original(i: int) -> str:
        return text[i if origins is None else origins[i]]

    after = folded[end : end + 48]
    follower = _FOLLOWER.match(after)
    if follower is not None and _capitalised(text, origins, end + follower.start(1), end + follower.end(1)):
        if follower.group(1) not in lw.NAME_PARTS and not (entry.version and entry.version.match(after)):
            return False  # "Claude Monet", "Nova Scotia", "Google Maps": someone or something else
    before = folded[max(0, start - 64) : start]

    def self_cue() -> bool:
        return not after.startswith("'") and rules.self_cue.search(before) is not None  # not "I am Claude's"

    def author_cue() -> bool:
        return (
            rules.after_cue.match(after) is not None
            or rules.author_cue.search(before) is not None
            or (rules.before_after[1].match(after) is not None and rules.before_after[0].search(before) is not None)
        )

    if entry.kind is Kind.NAME:
        if entry.exact is not None:
            written = text[start:end] if origins is None else text[origins[start] : origins[end - 1] + 1]
            letters = [c for c in written if c.isalpha()]
            mark = [c for c in entry.exact if c.isalpha()]
            if len(letters) == len(mark) and all(
                a.isupper() == b.isupper() for a, b in zip(letters, mark, strict=True)
            ):
                return True
        elif original(start).isupper():
            return True
        return self_cue() or author_cue()
    if entry.kind is Kind.MAKER:  # "developed by the Google Brain team" is a fact; "created by OpenAI, I" a leak
        sentence = _sentence(folded, start, end)
        return (
            self_cue()
            or rules.first_person.search(sentence) is not None
            or rules.model_word.match(after) is not None
            or rules.maker_after.match(after) is not None
            or rules.self_after.match(after) is not None
            or _made_me(rules, before)
        )
    if entry.kind is Kind.VENDOR:  # a company does not say "I am Google"; "私はグーグルで" is "I, on Google"
        return author_cue() and rules.self_or_ai.search(_sentence(folded, start, end)) is not None
    return (
        (entry.version is not None and entry.version.match(after) is not None)
        or rules.model_word.match(after) is not None
        or rules.self_after.match(after) is not None
        or self_cue()
        or author_cue()
        or rules.ai_only.search(_sentence(folded, start, end)) is not None
    )


def _capitalised(text: str, origins: Origins | None, start: int, end: int) -> bool:
    """Whether the word at folded ``start:end`` is written capitalised ("Monet"), not in capitals throughout
    ("CREATED": a text in capitals says nothing of names)."""
    lo, hi = (start, end) if origins is None else (origins[start], origins[end - 1] + 1)
    word = text[lo:hi]
    return word[:1].isupper() and not (len(word) > 1 and word.isupper())


_SENTENCE_END = re.compile(r"[.!?\n]\s|[\u3002\uff01\uff1f]")


def _sentence(folded: str, start: int, end: int) -> str:
    """The sentence around ``folded[start:end]`` (at most 240 characters each side)."""
    left = folded[max(0, start - 240) : start]
    ends = list(_SENTENCE_END.finditer(left))
    head = left[ends[-1].end() :] if ends else left
    right = folded[end : end + 240]
    stop = _SENTENCE_END.search(right)
    return head + folded[start:end] + (right[: stop.start() + 1] if stop else right)


_BETWEEN = re.compile(r"(?:'s)?[\s,:;()\-]{0,3}(?:by\s+|from\s+|of\s+)?")


def _beside(folded: str, start: int, end: int, other_start: int, other_end: int) -> bool:
    """Whether the span ``start:end`` and the other are next to each other, a possessive, a little
    punctuation or "by"/"from"/"of" apart ("Anthropic's Claude", "Claude (Anthropic)", "ChatGPT by OpenAI")."""
    if end <= other_start:
        gap = folded[end:other_start]
    elif other_end <= start:
        gap = folded[other_end:start]
    else:
        return True
    return _BETWEEN.fullmatch(gap) is not None


def _made_me(rules: _Rules, before: str) -> bool:
    """Whether ``before`` (folded text just before a maker) ends in an authorship cue whose subject is the
    writer: an AI ("an AI language model developed by"), or nobody ("Trained by OpenAI.", a sentence that
    starts with the cue), but not a thing named before it ("TensorFlow: Developed by the Google Brain team")."""
    cue = _rules().author_cue.search(before)
    if cue is None:
        return False
    head = _clause_before(before[: cue.start()])
    return rules.ai_before.search(head) is not None or not head.strip(" \t-*>#\"'`")


def _clause_before(before: str) -> str:
    """The part of ``before`` (folded text just before a name) in the name's own sentence."""
    ends = list(_SENTENCE_END.finditer(before))
    return before[ends[-1].end() :] if ends else before


def mask(text: str, matches: Iterable[LeakMatch]) -> str:
    """``text`` with every matched span replaced by ``[model name]`` (what reviewers see with
    ``--on-leak mask``)."""
    out: list[str] = []
    pos = 0
    for m in sorted(matches, key=lambda m: m.start):
        if m.start < pos:
            continue
        out.append(text[pos : m.start])
        out.append(MASK)
        pos = m.end
    out.append(text[pos:])
    return "".join(out)


def scanner_for(model_names: Iterable[str], extra_words: Iterable[str] = ()) -> LeakScanner:
    """The scanner for a batch: the default words, the batch's model names and their parts, and the
    rubric's ``leak_words``."""
    return LeakScanner([*words_for_models(model_names), *extra_words])


def name_scanner_for(model_names: Iterable[str], extra_words: Iterable[str] = ()) -> LeakScanner:
    """The scanner for a batch's names and titles (use :meth:`LeakScanner.scan_name`): the batch's model
    names and their parts, the rubric's ``leak_words`` and the default list's coined names, each counted in
    any case and context (see the module docstring)."""
    return LeakScanner([*words_for_models(model_names), *extra_words], names=True)
