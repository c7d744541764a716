"""A click on Submit while the reviewer is still in a box (the reason, the comment, a number) saves the answer
and moves to the next item, with "Saved", every time (issue 27: the page used to stay on the item, form
filled, no message, although the answer was saved; see ``components.rating_form``)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from sqlalchemy import select
from sqlalchemy.engine import Engine

from reviewer_app.batches.loading import load_batch
from reviewer_app.people.people import add_reviewer
from reviewer_app.review.assignment import assign
from storage.engine import read_session
from storage.models import Assignment, Rating
from tests.helpers import write_batch, write_rubric
from tests.support.app_server import Server
from tests.support.databases import Templates
from tests.support.review_page import answer_with_mouse, next_label, wait_item

pytestmark = pytest.mark.browser

RUBRIC = """
mode = "rating"
overlap = 1
seed = 3
[[dimensions]]
name = "correctness"
description = "Is every fact right?"
scale = "likert"
min = 1
max = 5
level = "ordinal"
[[dimensions]]
name = "errors"
description = "MQM error score"
scale = "continuous"
min = 0
max = 25
higher_is_better = false
"""
ROUNDS = 3  # each way of leaving a box, three times: the old page stayed put on most such clicks


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, templates: Templates) -> Iterator[tuple[Server, Engine, str]]:
    from storage.engine import get_engine

    folder = tmp_path_factory.mktemp("typed")
    copy = templates.copy("sqlite", "blank", folder)
    engine = get_engine(copy.url)
    with pytest.MonkeyPatch.context() as env:
        env.setenv("BLIND_REVIEW_DATA_DIR", str(copy.data_dir))
        link = add_reviewer(engine, "erin", "reviewer")[1]
        records = [
            {"sample_id": f"s{i}", "scenario": "qa", "prompt": f"Question {i}?", "model": "m", "output": f"Answer {i}."}
            for i in range(3 * ROUNDS)
        ]
        load_batch(engine, [write_batch(folder, records)], write_rubric(folder, RUBRIC), name="typed", open_now=True)
        assign(engine, "typed", ["erin"])
        server = Server(copy.url, copy.data_dir, folder / "serve.log")
        yield server, engine, link
        server.stop()
        engine.dispose()


def _click_submit(page: Any) -> None:
    """The mouse on Submit while the box still has the focus: no Tab, no wait for the box to send its text."""
    page.get_by_role("button", name=re.compile("Submit and next")).click()


def test_submit_from_inside_a_box_saves_and_moves_on(served: Any, chromium: Any) -> None:
    server, engine, link = served
    page = chromium.new_context(viewport={"width": 1440, "height": 900}).new_page()
    page.goto(server.link(link))
    label = wait_item(page)
    seen: list[str] = []
    for round_ in range(ROUNDS):
        # 1. "I can't judge", the reason typed, Submit clicked with the reason box still focused.
        page.get_by_text("I can't judge this item").click()
        reason = page.get_by_label(re.compile("Why not"))
        reason.click()
        reason.fill(f"outside my expertise {round_}")
        _click_submit(page)
        label = _moved(page, label, seen)
        # 2. The answers given, then a comment typed, Submit clicked from the comment box.
        answer_with_mouse(page, [3])
        page.get_by_test_id("stNumberInputField").fill("2.5")
        comment = page.get_by_label("Comment (optional)")
        comment.click()
        comment.fill(f"fine {round_}")
        _click_submit(page)
        label = _moved(page, label, seen)
        # 3. The number typed last, Submit clicked from the number box.
        answer_with_mouse(page, [1])
        number = page.get_by_test_id("stNumberInputField")
        number.click()
        number.fill("12")
        _click_submit(page)
        label = _moved(page, label, seen)
    assert label == ""  # every item done
    with read_session(engine) as s:
        statuses = s.execute(select(Assignment.status)).scalars().all()
        errors = s.execute(select(Rating.value).where(Rating.dimension == "errors")).scalars().all()
    assert sorted(statuses) == ["done"] * (2 * ROUNDS) + ["skipped"] * ROUNDS
    assert sorted(errors) == sorted(["2.5", "12"] * ROUNDS)


def _moved(page: Any, label: str, seen: list[str]) -> str:
    """The page left item ``label`` within a few seconds and says it saved it."""
    new = next_label(page, label, timeout=15_000)
    assert page.get_by_text(f"Saved item {label}.").is_visible()
    seen.append(label)
    return new
