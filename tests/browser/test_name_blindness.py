"""Blindness through names in real Chromium: batches named after their models ("alpaca-claude-vicuna",
"GPT4vsClaude") with scenarios named so ("vicuna" beside vicuna-13b, "claude-questions"). A reviewer walks
every item of every batch, through the batch picker; neither the page's HTML nor any websocket message the
server sends names a model, and the sign-in screen neither. (The same batches through AppTest, element tree
and session state: tests/ui/views/test_name_blindness.py.)
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest

from reviewer_app.people.people import add_reviewer
from tests.support.app_server import Server
from tests.support.databases import Templates
from tests.support.review_page import answer_with_mouse, next_label, settle, submit, wait_item
from tests.ui.views.test_name_blindness import FORBIDDEN, load_named_batches

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def served(
    tmp_path_factory: pytest.TempPathFactory, templates: Templates
) -> Iterator[tuple[Server, str, dict[str, int]]]:
    from storage.engine import get_engine

    folder = tmp_path_factory.mktemp("names")
    copy = templates.copy("sqlite", "blank", folder)
    engine = get_engine(copy.url)
    with pytest.MonkeyPatch.context() as env:
        env.setenv("BLIND_REVIEW_DATA_DIR", str(copy.data_dir))
        link = add_reviewer(engine, "ann")[1]
        ids = load_named_batches(engine, folder, "ann")
        server = Server(copy.url, copy.data_dir, folder / "serve.log")
        yield server, server.link(link), ids
        server.stop()
        engine.dispose()


class _Frames:
    """Every websocket message the server sends to a page: the raw bytes and the decoded ForwardMsg text."""

    def __init__(self, page: Any) -> None:
        self.raw: list[bytes] = []
        self.decoded: list[str] = []
        page.on("websocket", lambda ws: ws.on("framereceived", self._received))

    def _received(self, payload: Any) -> None:
        from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

        data = payload if isinstance(payload, bytes) else str(payload).encode()
        self.raw.append(data)
        msg = ForwardMsg()
        try:
            msg.ParseFromString(data)
            self.decoded.append(str(msg))
        except Exception:  # noqa: BLE001 - not a ForwardMsg: its raw bytes are checked all the same
            self.decoded.append("")

    def leak(self) -> str | None:
        for i, (data, text) in enumerate(zip(self.raw, self.decoded, strict=True)):
            for shown in (data.decode("utf-8", "replace"), text):
                found = FORBIDDEN.search(shown)
                if found:
                    return f"message {i}: ...{shown[max(0, found.start() - 80) : found.end() + 40]}..."
        return None

    def text(self) -> str:
        return "\n".join(self.decoded)


def _html_leak(page: Any) -> str | None:
    html = str(page.content())  # the page's HTML, iframes' srcdoc included
    found = FORBIDDEN.search(html)
    return None if found is None else html[max(0, found.start() - 80) : found.end() + 40]


def _choose(page: Any, title: str) -> None:
    """Pick a batch in the picker (a click that lands while the page redraws may not open it: try again)."""
    settle(page)
    option = page.get_by_role("option", name=title, exact=True)
    for _ in range(3):
        page.get_by_role("combobox").first.click()
        try:
            option.wait_for(timeout=3000)
            break
        except Exception:  # noqa: BLE001 - Playwright's timeout: the list did not open
            page.keyboard.press("Escape")
    option.click()
    settle(page)


def test_no_html_and_no_websocket_message_names_a_model_through_a_name(
    served: tuple[Server, str, dict[str, int]], chromium: Any
) -> None:
    server, link, ids = served
    context = chromium.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    frames = _Frames(page)
    page.goto(link)
    label = wait_item(page)
    walked = 0
    # The picker, opened: its options are the titles reviewers see.
    for attempt in range(3):  # a click that lands while the page redraws may not open the list: try again
        settle(page)
        page.get_by_role("combobox").first.click()
        try:
            page.get_by_role("option").first.wait_for(timeout=5_000)
            break
        except Exception:  # noqa: BLE001 - Playwright's timeout: the list did not open
            if attempt == 2:
                raise
            page.keyboard.press("Escape")
    options = [o.inner_text().strip() for o in page.get_by_role("option").all()]
    assert options == [f"Batch {ids['alpaca-claude-vicuna']}", f"Batch {ids['GPT4vsClaude']}", "support-v1"]
    assert _html_leak(page) is None
    page.keyboard.press("Escape")
    for title in options:
        if walked == 12 + 8 + 4:
            break  # a finished batch opens the next one with work (issue 27, point 6): all walked already
        _choose(page, title)
        label = wait_item(page)
        while label:
            assert _html_leak(page) is None, f"item {label} of {title}: {_html_leak(page)}"
            scenario = page.get_by_text(re.compile(r" · (new|revising a submitted answer)$")).first.inner_text()
            assert not FORBIDDEN.search(scenario)
            answer_with_mouse(page, [2, 0])
            submit(page)
            label = next_label(page, label)
            walked += 1
    assert walked == 12 + 8 + 4  # every item of the three batches was on the page
    page.wait_for_timeout(500)
    assert frames.raw, "no websocket message was seen: the check would prove nothing"
    assert f"Batch {ids['alpaca-claude-vicuna']}" in frames.text() and "Scenario 2" in frames.text()
    assert frames.leak() is None, frames.leak()
    context.close()


def test_the_sign_in_screen_names_no_batch(served: tuple[Server, str, dict[str, int]], chromium: Any) -> None:
    server, _link, _ids = served
    context = chromium.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    frames = _Frames(page)
    page.goto(server.url + "/")
    page.get_by_text("Sign in by opening the personal link").wait_for()
    settle(page)
    assert frames.raw and _html_leak(page) is None and frames.leak() is None
    assert page.title() == "Blind Review"
    context.close()
