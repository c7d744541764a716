"""Blindness through names, as an attacker would test it: batches whose name and scenario names contain the
candidates' model names ("alpaca-claude-vicuna"; AlpacaEval's "vicuna" dataset beside vicuna-13b). Signed
in as a reviewer, on every item of every batch, neither the page (every element sent) nor the session
state names a model; the batch picker, the progress line and the sign-in screen neither. The lead's page
keeps the real names. Real Chromium (page HTML and websocket messages): tests/browser/test_name_blindness.py.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy.engine import Engine

from reviewer_app.batches.admin import set_titles
from reviewer_app.batches.loading import load_batch
from reviewer_app.people.people import add_reviewer
from reviewer_app.review import reviews
from reviewer_app.review.assignment import assign
from reviewer_app.ui.components.safe_text import markdown_literal
from tests.helpers import RATING_RUBRIC, write_batch, write_rubric
from tests.support.apptest import app_for, sent_text, state_text

# Every model of the batches, the words they are made of, and the names that leak them.
# (Parts that could be hex digits are matched as whole words: element ids are hashes.)
FORBIDDEN = re.compile(r"claude|vicuna|alpaca|gpt-?4|(?<![0-9a-z])(?:1106|13b|7b)(?![0-9a-z])", re.IGNORECASE)

BATCHES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {  # name -> (models, scenarios)
    "alpaca-claude-vicuna": (("vicuna-13b", "claude-2", "alpaca-7b"), ("vicuna", "helpful_base")),
    "GPT4vsClaude": (("gpt4_1106_preview", "claude-2"), ("koala", "claude-questions")),
    "support-v1": (("m-one", "m-two"), ("qa",)),  # names nothing: shown as it is
}


def _records(models: tuple[str, ...], scenarios: tuple[str, ...]) -> list[dict[str, Any]]:
    return [
        {
            "sample_id": f"{scenario}-{i}",
            "scenario": scenario,
            "prompt": f"Question {i} for the {len(scenario)}-letter topic?",
            "model": model,
            "output": f"An answer, number {i}, from a machine.",
        }
        for scenario in scenarios
        for i in range(2)
        for model in models
    ]


def load_named_batches(engine: Engine, folder: Path, reviewer: str) -> dict[str, int]:
    """The three batches above, every item planned for ``reviewer``; returns {name: batch id}."""
    ids = {}
    for name, (models, scenarios) in BATCHES.items():
        summary = load_batch(
            engine,
            [write_batch(folder / name, _records(models, scenarios))],
            write_rubric(folder / name, RATING_RUBRIC.format(overlap=1)),
            name=name,
            open_now=True,
        )
        ids[name] = summary.batch_id
        assign(engine, name, [reviewer])
    return ids


@pytest.fixture
def named(engine: Engine, tmp_path: Path) -> tuple[dict[str, int], str, str]:
    """The batches, a reviewer's and a lead's sign-in links."""
    link = add_reviewer(engine, "ann")[1]
    lead = add_reviewer(engine, "leo", "lead")[1]
    return load_named_batches(engine, tmp_path, "ann"), link, lead


def _item_caption(at: Any) -> str:
    """The item header's caption: "<scenario title> · new" (or "· revising a submitted answer")."""
    return next(c.value for c in at.caption if c.value.endswith((" · new", " · revising a submitted answer")))


def _blind(at: Any, where: str) -> str:
    assert not at.exception, at.exception
    page = sent_text(at)
    for text in (page, state_text(at)):
        leak = FORBIDDEN.search(text)
        assert leak is None, f"{where} shows {leak.group(0)!r}: ...{text[leak.start() - 80 : leak.end() + 40]}..."
    return page


def test_no_page_a_reviewer_sees_names_a_model_through_a_name(
    engine: Engine, named: tuple[dict[str, int], str, str]
) -> None:
    ids, link, _lead = named
    at = app_for(link)
    at.run()
    _blind(at, "the first page")
    picker = at.selectbox(key="batch_id")
    assert picker.options == [f"Batch {ids['alpaca-claude-vicuna']}", f"Batch {ids['GPT4vsClaude']}", "support-v1"]
    person_id = at.session_state["person_id"]
    scenarios_seen: set[str] = set()
    checked = 0
    for batch in reviews.batches_for(engine, person_id):
        at.session_state["batch_id"] = batch.batch_id
        if "assignment_id" in at.session_state:
            del at.session_state["assignment_id"]
        at.run()
        _blind(at, f"batch {batch.name}'s first page")
        for entry in reviews.queue(engine, batch.batch_id, person_id):
            at.session_state["assignment_id"] = entry.assignment_id
            at.run()
            page = _blind(at, f"item {entry.label} of {batch.name}")
            assert f"Item {entry.label}" in page  # the item really is on the page
            caption = _item_caption(at)
            scenarios_seen.add(caption.split(" · ")[0])
            checked += 1
    assert checked == 12 + 8 + 4  # every item of the three batches
    # helpful_base, vicuna -> "Scenario 2"; claude-questions, koala -> "Scenario 1"; qa as it is (captions
    # escape Markdown: "helpful\\_base").
    assert scenarios_seen == {markdown_literal(s) for s in ("helpful_base", "Scenario 2", "Scenario 1", "koala", "qa")}


def test_answers_previous_items_and_a_set_title_stay_blind(
    engine: Engine, named: tuple[dict[str, int], str, str]
) -> None:
    ids, link, _lead = named
    set_titles(engine, "alpaca-claude-vicuna", display_name="Helpfulness, round 1", scenarios={"vicuna": "Open"})
    at = app_for(link)
    at.run()
    picker = at.selectbox(key="batch_id")
    assert picker.options[:2] == [
        "Helpfulness, round 1",
        f"Batch {ids['GPT4vsClaude']}",
    ]
    picker.select(ids["alpaca-claude-vicuna"])
    at.run()
    for _ in range(3):  # answer a few: the "Saved" note and "Your previous items" appear
        for radio in at.radio:
            radio.set_value("1")  # a stored answer: "1" on the Likert scale, "Yes" on the binary one
        next(b for b in at.button if b.label == "Submit and next").click()
        at.run()
        page = _blind(at, "the page after a submit")
    assert "Saved item" in page and "Your previous items (3)" in page
    caption = _item_caption(at)
    assert caption.split(" · ")[0] in ("Open", markdown_literal("helpful_base"))


def test_the_sign_in_screen_and_a_refused_link_name_nothing(
    engine: Engine, named: tuple[dict[str, int], str, str]
) -> None:
    for token in (None, "not-a-real-token"):
        at = app_for(token)
        at.run()
        _blind(at, "the sign-in screen")


def test_the_lead_keeps_the_real_names(engine: Engine, named: tuple[dict[str, int], str, str]) -> None:
    ids, _link, lead = named
    at = app_for(lead)
    at.run()
    assert not at.exception
    picker = at.selectbox(key="lead_batch_id")
    assert picker.options[0] == "alpaca-claude-vicuna (rating)"
    picker.select(ids["alpaca-claude-vicuna"])
    at.run()
    page = sent_text(at)
    assert "vicuna" in page and "helpful_base" in page  # the scenarios table keeps the names
    caption = next(c.value for c in at.caption if c.value.startswith("Reviewers see"))
    assert caption.startswith(f"Reviewers see batch 'alpaca-claude-vicuna' as 'Batch {ids['alpaca-claude-vicuna']}';")
    assert "scenario 'vicuna' as 'Scenario 2'" in caption and "helpful" not in caption
