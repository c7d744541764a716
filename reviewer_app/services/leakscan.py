"""Identity-leak scan: outputs that name a model or a vendor would unblind the reviewer.

"As an AI language model developed by OpenAI" tells a reviewer more than any label could hide. The scan
runs at load over every output with a default word list, the batch's own model names (and their
distinctive parts: ``claude-2`` also yields ``claude``), and the rubric's ``leak_words``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import ahocorasick_rs

DEFAULT_LEAK_WORDS: tuple[str, ...] = (
    "OpenAI",
    "ChatGPT",
    "GPT-3",
    "GPT-3.5",
    "GPT-4",
    "GPT-4o",
    "GPT4",
    "Anthropic",
    "Claude",
    "Gemini",
    "Bard",
    "PaLM",
    "Google DeepMind",
    "DeepMind",
    "LLaMA",
    "Llama 2",
    "Llama 3",
    "Meta AI",
    "Mistral",
    "Mixtral",
    "Vicuna",
    "LMSYS",
    "Falcon",
    "Technology Innovation Institute",
    "Qwen",
    "Alibaba Cloud",
    "DeepSeek",
    "Cohere",
    "Command R",
    "Grok",
    "xAI",
    "Phi-3",
    "Microsoft Copilot",
    "Stanford Alpaca",
)

# Parts of model names that say nothing about the model ("instruct", "7b", "v0.1").
_GENERIC_PARTS = {
    "instruct",
    "chat",
    "preview",
    "base",
    "model",
    "latest",
    "turbo",
    "mini",
    "large",
    "small",
    "medium",
    "hf",
    "it",
    "sft",
    "dpo",
    "rlhf",
    "beta",
    "alpha",
    "test",
    "demo",
    "fast",
    "pro",
    "ultra",
    "lite",
    "the",
    "and",
    "new",
    "old",
    "final",
    "release",
    "version",
}


def words_for_models(model_names: Iterable[str]) -> list[str]:
    """The model names themselves plus their distinctive parts (letters only, 4+ characters)."""
    words: set[str] = set()
    for name in model_names:
        words.add(name)
        for part in re.split(r"[^A-Za-z]+", name):
            if len(part) >= 4 and part.lower() not in _GENERIC_PARTS:
                words.add(part)
    return sorted(words)


class LeakScanner:
    """Finds leak words in text: case-insensitive, whole words only (``Falcon`` but not ``Falconry``), with
    space, hyphen, underscore or nothing between the parts of a name ("GPT 4", "gpt-4", "gpt4").

    An Aho-Corasick automaton (ahocorasick-rs) finds every word in one pass over the text; a regular
    expression alternation of the same words was 25x slower on 100,000 real outputs.
    """

    def __init__(self, words: Iterable[str]) -> None:
        by_lower: dict[str, str] = {}
        for w in words:
            if w.strip():
                by_lower.setdefault(w.strip().lower(), w.strip())
        self.words = sorted(by_lower.values(), key=lambda w: (-len(w), w.lower()))
        self._canonical: dict[str, str] = {}
        for lower, word in sorted(by_lower.items(), key=lambda kv: (-len(kv[0]), kv[0])):
            parts = [p for p in re.split(r"[\s_-]+", lower) if p]
            for sep in (" ", "-", "_", ""):
                self._canonical.setdefault(sep.join(parts), word)
        patterns = sorted(self._canonical)
        self._automaton = (
            ahocorasick_rs.AhoCorasick(patterns, matchkind=ahocorasick_rs.MatchKind.LeftmostLongest)
            if patterns
            else None
        )
        self._patterns = patterns

    def scan(self, text: str) -> list[str]:
        """The distinct leak words found in ``text``, as written in the word list, in order of first match."""
        if self._automaton is None:
            return []
        lower = text.lower()
        same_length = len(lower) == len(text)  # true but for a few exotic characters; then match any case
        found: list[str] = []
        for idx, start, end in self._automaton.find_matches_as_indexes(lower):
            if (start > 0 and lower[start - 1].isalnum()) or (end < len(lower) and lower[end].isalnum()):
                continue
            word = self._canonical[self._patterns[idx]]
            if same_length and word.isalpha() and text[start].islower():
                # Plain words are names only when capitalised: "PaLM" and "Falcon" are, "the palm of your
                # hand" and "a falcon" are not. Names with digits or dashes ("gpt-4") match in any case.
                continue
            if word not in found:
                found.append(word)
        return found


def scanner_for(model_names: Iterable[str], extra_words: Iterable[str] = ()) -> LeakScanner:
    return LeakScanner([*DEFAULT_LEAK_WORDS, *words_for_models(model_names), *extra_words])
