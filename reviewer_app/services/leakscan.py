"""Identity-leak scan: outputs that name a model or a vendor would unblind the reviewer.

"As an AI language model developed by OpenAI" tells a reviewer more than any label could hide. The scan
runs at load over every output with a default word list, the batch's own model names (and their
distinctive parts: ``claude-2`` also yields ``claude``), and the rubric's ``leak_words``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

DEFAULT_LEAK_WORDS: tuple[str, ...] = (
    "OpenAI", "ChatGPT", "GPT-3", "GPT-3.5", "GPT-4", "GPT-4o", "GPT4", "Anthropic", "Claude", "Gemini",
    "Bard", "PaLM", "Google DeepMind", "DeepMind", "LLaMA", "Llama 2", "Llama 3", "Meta AI", "Mistral",
    "Mixtral", "Vicuna", "LMSYS", "Falcon", "Technology Innovation Institute", "Qwen", "Alibaba Cloud",
    "DeepSeek", "Cohere", "Command R", "Grok", "xAI", "Phi-3", "Microsoft Copilot", "Stanford Alpaca",
)

# Parts of model names that say nothing about the model ("instruct", "7b", "v0.1").
_GENERIC_PARTS = {
    "instruct", "chat", "preview", "base", "model", "latest", "turbo", "mini", "large", "small", "medium",
    "hf", "it", "sft", "dpo", "rlhf", "beta", "alpha", "test", "demo", "fast", "pro", "ultra", "lite",
    "the", "and", "new", "old", "final", "release", "version",
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
    """Finds leak words in text: case-insensitive, whole words only (``Falcon`` but not ``Falconry``)."""

    def __init__(self, words: Iterable[str]) -> None:
        by_lower: dict[str, str] = {}
        for w in words:
            if w.strip():
                by_lower.setdefault(w.strip().lower(), w.strip())
        unique = sorted(by_lower.values(), key=lambda w: (-len(w), w.lower()))
        self.words = unique
        if unique:
            alternation = "|".join(re.sub(r"(\\ |\\-|_)", r"[\\s_-]+", re.escape(w)) for w in unique)
            self._pattern: re.Pattern[str] | None = re.compile(
                rf"(?<![A-Za-z0-9])(?:{alternation})(?![A-Za-z0-9])", re.IGNORECASE
            )
        else:
            self._pattern = None
        self._canonical = {w.lower(): w for w in unique}

    def scan(self, text: str) -> list[str]:
        """The distinct leak words found in ``text``, as written in the word list, in order of first match."""
        if self._pattern is None:
            return []
        found: list[str] = []
        for m in self._pattern.finditer(text):
            key = re.sub(r"[\s_-]+", " ", m.group(0).lower())
            word = next((w for k, w in self._canonical.items() if re.sub(r"[\s_-]+", " ", k) == key), m.group(0))
            if word not in found:
                found.append(word)
        return found


def scanner_for(model_names: Iterable[str], extra_words: Iterable[str] = ()) -> LeakScanner:
    return LeakScanner([*DEFAULT_LEAK_WORDS, *words_for_models(model_names), *extra_words])
