"""The identity-leak scan: names in any spelling, plain words only as names."""

from __future__ import annotations

from reviewer_app.services.leakscan import scanner_for, words_for_models


def test_model_names_yield_their_distinctive_parts() -> None:
    words = words_for_models(["claude-2", "Mixtral-8x7B-Instruct-v0.1", "gpt4_1106_preview"])
    assert {"claude-2", "claude", "Mixtral", "gpt4_1106_preview"} <= set(words)
    assert "Instruct" not in words and "preview" not in words


def test_spellings_and_word_boundaries() -> None:
    scan = scanner_for(["claude-2"]).scan
    assert scan("As an AI language model developed by OpenAI, I cannot.") == ["OpenAI"]
    assert scan("I am CLAUDE 2, made by Anthropic") == ["claude-2", "Anthropic"]
    assert scan("gpt-4 and GPT 4 and gpt4 are one model") == ["GPT-4"]
    assert scan("Falconry and palmistry are old arts") == []


def test_plain_words_count_only_as_capitalised_names() -> None:
    scan = scanner_for(["falcon-7b"]).scan
    assert scan("A falcon sat in the palm of her hand, like a bard of old.") == []
    assert scan("Google's PaLM and Falcon from TII") == ["PaLM", "Falcon"]
