"""Blindness of anchor items in real Chromium (issue 10): a reviewer walks every item of a follow-up batch,
anchors (the baseline batch's own outputs shown again) mixed in; neither the page's HTML nor any websocket
message the server sends says "anchor", "baseline" or "follow-up", names a model or the baseline batch.
(The same through AppTest, element tree and session state, and anchor pages equal to new ones in shape:
tests/ui/views/test_anchor_blindness.py; how messages are captured: tests/browser/test_name_blindness.py.)
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from sqlalchemy import select

from reviewer_app.batches.catalog import set_batch_open
from reviewer_app.batches.loading import load_batch
from reviewer_app.people.people import add_reviewer
from reviewer_app.review.assignment import assign
from storage.engine import read_session
from storage.models import Assignment, Item
from tests.browser.test_name_blindness import _Frames
from tests.helpers import RATING_RUBRIC, write_batch, write_rubric
from tests.support.app_server import Server
from tests.support.databases import Templates
from tests.support.review_page import answer_with_mouse, next_label, submit, wait_item
from tests.ui.views.test_anchor_blindness import FORBIDDEN, _records

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, templates: Templates) -> Iterator[tuple[str, int]]:
    """A served database with baseline "round-one" (closed) and its follow-up "Helpfulness" with anchors,
    every item of the follow-up assigned to ann; her sign-in link and the number of anchor showings."""
    from storage.engine import get_engine

    folder = tmp_path_factory.mktemp("anchors")
    copy = templates.copy("sqlite", "blank", folder)
    engine = get_engine(copy.url)
    with pytest.MonkeyPatch.context() as env:
        env.setenv("BLIND_REVIEW_DATA_DIR", str(copy.data_dir))
        rubric = write_rubric(folder / "a", RATING_RUBRIC.format(overlap=1))
        first = write_batch(folder / "a", _records(("zephyr-7b", "orca-2"), "A first"))
        load_batch(engine, [first], rubric, name="round-one", open_now=True)
        second = write_batch(folder / "b", _records(("zephyr-7b", "falcon-40b"), "A second"))
        summary = load_batch(
            engine, [second], None, name="Helpfulness", follow_up="round-one", anchor_share=0.5, open_now=True
        )
        set_batch_open(engine, "round-one", False)
        link = add_reviewer(engine, "ann")[1]
        assign(engine, "Helpfulness", ["ann"])
        with read_session(engine) as session:
            stmt = (
                select(Assignment.id)
                .join(Item, Item.id == Assignment.item_id)
                .where(Assignment.batch_id == summary.batch_id, Item.is_anchor.is_(True))
            )
            anchors = len(session.execute(stmt).scalars().all())
        server = Server(copy.url, copy.data_dir, folder / "serve.log")
        yield server.link(link), anchors
        server.stop()
        engine.dispose()


# Streamlit's own markup on every page (anchor item or not, any app), which says nothing about the item.
FRAMEWORK = re.compile(r"stAppIframeResizerAnchor")


def _message_leak(frames: _Frames) -> str | None:
    """The first websocket message (raw bytes or decoded) that matches this test's FORBIDDEN."""
    for i, (data, text) in enumerate(zip(frames.raw, frames.decoded, strict=True)):
        for shown in (FRAMEWORK.sub("", data.decode("utf-8", "replace")), FRAMEWORK.sub("", text)):
            found = FORBIDDEN.search(shown)
            if found:
                return f"message {i}: ...{shown[max(0, found.start() - 80) : found.end() + 40]}..."
    return None


def _html_leak(page: Any) -> str | None:
    html = FRAMEWORK.sub("", str(page.content()))  # the page's HTML, iframes' srcdoc included
    found = FORBIDDEN.search(html)
    return None if found is None else html[max(0, found.start() - 80) : found.end() + 40]


def test_no_html_and_no_websocket_message_gives_an_anchor_away(served: tuple[str, int], chromium: Any) -> None:
    link, anchors = served
    assert anchors == 8  # half of the 3 samples per scenario, rounded up, x 2 scenarios x 2 baseline outputs
    context = chromium.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    frames = _Frames(page)
    page.goto(link)
    label = wait_item(page)
    walked = 0
    while label:
        assert _html_leak(page) is None, f"item {label}: {_html_leak(page)}"
        answer_with_mouse(page, [2, 0])
        submit(page)
        label = next_label(page, label)
        walked += 1
    assert walked == 12 + anchors  # every item, the anchors among them, was on the page
    page.wait_for_timeout(500)
    assert frames.raw, "no websocket message was seen: the check would prove nothing"
    assert "A second answer" in frames.text() and "A first answer" in frames.text()  # new outputs and anchors
    assert _message_leak(frames) is None, _message_leak(frames)
    context.close()
