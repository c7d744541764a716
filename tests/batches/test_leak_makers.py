"""Makers named as facts stay for reviewers to judge; a model naming itself or its maker is masked (issue 27,
point 10). "TensorFlow: Developed by the Google Brain team" used to reach reviewers as "[model name] team".

Blindness is a security property: the must-mask sentences are also written as someone hiding a name would
write them (case, punctuation, spacing, invisible characters, look-alike letters, full-width forms)."""

from __future__ import annotations

import pytest

from reviewer_app.batches.leakscan import MASK, mask, scanner_for

# Sentences of the real AlpacaEval outputs (tests/fixtures/alpaca_eval's models) whose makers were masked.
FACTS = [
    "1. TensorFlow: Developed by the Google Brain team, TensorFlow is a popular open-source library.",
    "TensorFlow is an open-source library developed by Google Brain Team. It is one of the most popular.",
    "PyTorch is a deep learning framework developed by OpenAI.",
    "Environments such as the Arcade Learning Environment (ALE) or OpenAI Gym provide a standard interface.",
    "Join the conversation and be part of the #OpenAI revolution!",
    "OpenAI was founded in 2015.",
    "DeepMind's AlphaGo beat Lee Sedol in 2016.",
    "Anthropic was founded by former OpenAI employees.",
    "Stability AI released Stable Diffusion in 2022.",
    "The LMSYS leaderboard ranks chatbots by votes.",
]

SELF = [
    "I am Claude, an AI assistant.",
    "As an AI developed by OpenAI, I cannot browse the web.",
    "As an AI language model developed by OpenAI, I cannot.",
    "I was trained by Google.",
    "OpenAI created me.",
    "Trained by OpenAI.",
    "built by open-ai",
    "My creators at Anthropic gave me these rules.",
    "I'm an OpenAI model.",
    "Anthropic's assistant here, how can I help?",
    "Anthropic's Claude is an AI assistant.",
    "Claude (Anthropic) answer: the total is 40.",
    "I was developed by the Google Brain team.",
    "This assistant was made by DeepMind.",
    "Fui entrenado por OpenAI.",
    "Je suis un assistant créé par Anthropic.",
    "我是由深度求索开发的助手。",
]

DISGUISES = [
    lambda t: t.upper(),
    lambda t: t.lower(),
    lambda t: t.replace("OpenAI", "Open\u200bAI").replace("Anthropic", "Anthro\u00adpic"),  # invisible characters
    lambda t: t.replace("OpenAI", "\u041epen\u0410I").replace("Anthropic", "\u0410nthropic"),  # Cyrillic O, A
    lambda t: t.replace("OpenAI", "\uff2f\uff50\uff45\uff4e\uff21\uff29"),  # full-width
    lambda t: t.replace("OpenAI", "Open-AI").replace("Google", "G o o g l e".replace(" ", "")),
    lambda t: t.replace(" by ", "  by\u00a0"),  # odd spacing
]


@pytest.mark.parametrize("text", FACTS)
def test_a_maker_named_as_a_fact_is_not_masked(text: str) -> None:
    assert scanner_for([]).scan(text) == []


def test_the_issues_sentence_reaches_reviewers_as_written() -> None:
    text = "TensorFlow: Developed by the Google Brain team"
    scanner = scanner_for(["gpt4_1106_preview", "claude-2"])
    assert mask(text, scanner.find(text)) == text


@pytest.mark.parametrize("disguise", range(len(DISGUISES)))
@pytest.mark.parametrize("text", SELF)
def test_a_model_naming_itself_or_its_maker_is_masked_however_written(text: str, disguise: int) -> None:
    written = DISGUISES[disguise](text)
    found = scanner_for([]).find(written)
    assert found, written
    masked = mask(written, found)
    assert MASK in masked
    for name in ("OpenAI", "Anthropic", "Claude", "DeepMind", "Google", "深度求索"):
        assert name.lower() not in masked.lower().replace("\u200b", "").replace("\u00ad", ""), masked


def test_a_maker_beside_a_masked_model_is_masked_too() -> None:
    text = "Tools: Anthropic's Claude is an AI assistant."
    assert mask(text, scanner_for([]).find(text)) == f"Tools: {MASK}'s {MASK} is an AI assistant."


def test_a_title_naming_a_maker_is_still_a_leak() -> None:
    from reviewer_app.batches.leakscan import name_scanner_for

    assert name_scanner_for([]).scan_name("openai-vs-anthropic") == ["OpenAI", "Anthropic"]
