"""The identity-leak scan: self-identifications in any spelling, script or language; names as topics stay
unflagged; spans map back to the original text for masking; and the labelled corpus's figures."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from reviewer_app.batches.leak_fold import fold
from reviewer_app.batches.leakscan import MASK, mask, scanner_for, words_for_models

CORPUS = Path(__file__).resolve().parents[1] / "fixtures" / "leak_corpus.jsonl"


def test_model_names_yield_their_distinctive_parts() -> None:
    words = words_for_models(["claude-2", "Mixtral-8x7B-Instruct-v0.1", "gpt4_1106_preview"])
    assert {"claude-2", "claude", "Mixtral", "gpt4_1106_preview"} <= set(words)
    assert "Instruct" not in words and "preview" not in words


def test_spellings_and_word_boundaries() -> None:
    scan = scanner_for(["claude-2", "acme-sage-7b"]).scan
    assert scan("As an AI language model developed by OpenAI, I cannot.") == ["OpenAI"]
    assert scan("I am CLAUDE 2, made by Anthropic") == ["Claude 2", "Anthropic"]
    assert scan("gpt-4 and GPT 4 and gpt4 are one model") == ["GPT-4"]
    assert scan("Falconry and palmistry are old arts") == []
    assert scan("Qwen2.5 and Claude3 are versions, not other words") == ["Qwen", "Claude 3"]
    assert scan("Answer by ACME SAGE 7B.") == ["acme-sage-7b"]  # the batch's own model, in any spelling


@pytest.mark.parametrize(
    ("text", "word"),
    [
        ("I'm a large language model, trained by Google.", "Google"),
        ("I was created by Open AI.", "Open AI"),
        ("This assistant was made by anthropic.", "Anthropic"),
        ("Chat GPT here, how can I help?", "Chat GPT"),
        ("I am GPT\u20114.", "GPT-4"),  # a non-breaking hyphen
        ("I am Cla\u00adude, an assistant.", "Claude"),  # a soft hyphen
        ("I am Cl\u200baude, an assistant.", "Claude"),  # a zero-width space
        ("I am \u0421laude, an assistant.", "Claude"),  # a Cyrillic capital Es
        ("I am \uff23\uff4c\uff41\uff55\uff44\uff45, an assistant.", "Claude"),  # full-width
        ("I am Gemma, an open model.", "Gemma"),
        ("I'm Phi-4, a small model.", "Phi-4"),
        ("I am GPT-5.", "GPT-5"),
        ("I'm Kimi, how can I help?", "Kimi"),
        ("Nemotron here.", "Nemotron"),
        ("I'm ERNIE Bot.", "ERNIE Bot"),
        ("I am Amazon Nova, a foundation model.", "Amazon Nova"),
        ("I am GLM-4.", "GLM-4"),
        ("I'm Yi, a bilingual model.", "Yi"),
        ("I was trained by Meta.", "Meta"),
        ("Je suis Claude, un assistant créé par Anthropic", "Claude"),
        ("我是通义千问，由阿里云开发", "通义千问"),
        ("Ich bin ein Sprachmodell von Google", "Google"),
        ("Я — Claude, ИИ-ассистент.", "Claude"),
        ("Меня зовут Gemini.", "Gemini"),
    ],
)
def test_self_identifications_the_old_scan_missed(text: str, word: str) -> None:
    assert word in scanner_for([]).scan(text)


@pytest.mark.parametrize(
    "text",
    [
        "Claude Monet painted water lilies.",
        "Falcon 9 boosters landed on the drone ship.",
        "The Gemini programme preceded Apollo.",
        "A bird sat in the palm of her hand.",
        "Android is developed by Google.",
        "As a Gemini, I love long conversations.",
        "I am Claude's neighbour.",
        "Nova Scotia is a province of Canada.",
    ],
)
def test_names_used_as_topics_are_not_leaks(text: str) -> None:
    assert scanner_for([]).scan(text) == []


def test_spans_are_in_the_original_text_and_masking_keeps_the_rest() -> None:
    scanner = scanner_for([])
    text = "Hi! I am Cla\u00adude\u200b, made by \u0410nthropic (GPT\u20114 too)."
    found = scanner.find(text)
    assert [text[m.start : m.end] for m in found] == ["Cla\u00adude\u200b", "\u0410nthropic", "GPT\u20114"]
    assert mask(text, found) == f"Hi! I am {MASK}, made by {MASK} ({MASK} too)."
    assert mask("nothing here", []) == "nothing here"
    assert fold("\uff27\uff30\uff34\u2011\uff14") == "gpt-4"


def test_the_labelled_corpus_meets_its_goals() -> None:
    """Recall >= 90% on the sentences in which a model names itself or its maker; at most 10% of the
    sentences that use the same names as topics flagged. The figures are printed (``pytest -s``)."""
    rows = [json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines() if line.strip()]
    kinds = Counter(r["leak"] for r in rows)
    assert len(rows) >= 300 and min(kinds.values()) >= 0.4 * len(rows)
    assert len({r["note"].split(":")[0] for r in rows}) >= 10
    scanner = scanner_for([])
    flagged = [bool(scanner.find(r["text"])) for r in rows]
    leaks = [f for f, r in zip(flagged, rows, strict=True) if r["leak"]]
    lookalikes = [f for f, r in zip(flagged, rows, strict=True) if not r["leak"]]
    recall = sum(leaks) / len(leaks)
    flag_rate = sum(lookalikes) / len(lookalikes)
    held = [(f, r["leak"]) for f, r in zip(flagged, rows, strict=True) if r["note"].startswith("held-out")]
    held_recall = sum(f for f, leak in held if leak) / sum(1 for _, leak in held if leak)
    held_rate = sum(f for f, leak in held if not leak) / sum(1 for _, leak in held if not leak)
    print(
        f"\nleak corpus: {len(leaks)} leaks, recall {recall:.1%}; {len(lookalikes)} look-alikes, "
        f"{flag_rate:.1%} flagged (held-out part: recall {held_recall:.1%}, flagged {held_rate:.1%})"
    )
    assert recall >= 0.90
    assert flag_rate <= 0.10
