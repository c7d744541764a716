"""The Adjudicate page in real Chromium at laptop and phone width, on the demo: the lead picks the pairwise batch,
reads a disagreement blind and records a ruling with its reason; no model, reviewer or sample name reaches the
page's HTML or any websocket message, and the page does not scroll sideways. The results page then says the
ruling in its Adjudication tab."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.app_server import Server
from tests.support.databases import Templates
from tests.support.review_page import settle

pytestmark = pytest.mark.browser

LAPTOP = {"width": 1440, "height": 900}
PHONE = {"width": 390, "height": 844}
FORBIDDEN = re.compile(r"aurora-7b|borealis-xl|cirrus-mini|dynamo-2|demo-colleague-\d|support-0\d|demo_pairwise")


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, templates: Templates) -> Iterator[tuple[Server, str]]:
    folder = tmp_path_factory.mktemp("adjudicate-server")
    copy = templates.copy("sqlite", "demo", folder)
    server = Server(copy.url, copy.data_dir, folder / "serve.log")
    try:
        yield server, server.link(copy.links["demo-lead"])
    finally:
        server.stop()


class _Frames:
    """Every websocket message the server sends to the page, as text (raw bytes, decoded leniently)."""

    def __init__(self, page: Any) -> None:
        self.messages: list[str] = []
        page.on("websocket", lambda ws: ws.on("framereceived", self._received))

    def _received(self, payload: Any) -> None:
        data = payload if isinstance(payload, bytes) else str(payload).encode()
        self.messages.append(data.decode("utf-8", "replace"))

    def leak(self) -> str | None:
        for text in self.messages:
            found = FORBIDDEN.search(text)
            if found:
                return text[max(0, found.start() - 80) : found.end() + 40]
        return None


def _no_leak(page: Any, frames: _Frames) -> None:
    html = str(page.content())
    found = FORBIDDEN.search(html)
    assert found is None, html[max(0, found.start() - 80) : found.end() + 40]
    assert frames.messages, "no websocket message was seen: the check would prove nothing"
    assert frames.leak() is None, frames.leak()


@pytest.mark.parametrize("viewport", [LAPTOP, PHONE], ids=["laptop", "phone"])
def test_a_lead_rules_on_a_disagreement_blind(
    served: tuple[Server, str], chromium: Any, tmp_path: Path, viewport: dict[str, int]
) -> None:
    _server, link = served
    page = chromium.new_context(viewport=viewport).new_page()
    frames = _Frames(page)
    if viewport["width"] >= 800:
        page.goto(link)
        page.get_by_role("link", name="Adjudicate").wait_for(timeout=60_000)
        settle(page, 90_000)
        frames.messages.clear()  # the start page (the lead's results, unblinded) has been drawn: from here on, this one
        page.get_by_role("link", name="Adjudicate").click()
    else:
        page.goto(link.replace("/?token=", "/adjudicate?token="))
    page.get_by_role("heading", name="Adjudicate").wait_for(timeout=60_000)
    settle(page, 60_000)
    page.get_by_label("Batch").first.click()
    page.get_by_role("option", name=re.compile("pairwise")).click()
    page.get_by_text("Disagreement 1 of", exact=False).wait_for(timeout=60_000)
    page.get_by_text(re.compile(r"\d+ of \d+ ruled")).wait_for(timeout=60_000)
    settle(page, 60_000)
    body = page.inner_text("body")
    before = int(re.search(r"(\d+) of \d+ ruled", body).group(1))  # type: ignore[union-attr]
    assert "What the reviewers answered" in body and "Reviewer 1" in body
    page.get_by_text("A is better", exact=True).last.click()
    page.get_by_label("Why").fill("A gives the refund window the policy states; B guesses.")
    page.get_by_role("button", name="Record ruling").click()
    page.get_by_text("Ruling saved", exact=False).wait_for(timeout=60_000)
    settle(page, 60_000)
    assert f"{before + 1} of" in page.inner_text("body")
    assert page.locator('[data-testid="stException"]').count() == 0
    page.get_by_text("Ruling saved", exact=False).scroll_into_view_if_needed()
    page.screenshot(path=str(tmp_path / f"adjudicate-{viewport['width']}.png"))
    page.get_by_text("What the reviewers answered", exact=True).scroll_into_view_if_needed()
    page.screenshot(path=str(tmp_path / f"adjudicate-panel-{viewport['width']}.png"))
    overflow = page.evaluate("() => document.documentElement.scrollWidth - window.innerWidth")
    assert overflow <= 1, f"the page scrolls sideways by {overflow} px"
    _no_leak(page, frames)
    page.context.close()


@pytest.mark.parametrize("viewport", [LAPTOP, PHONE], ids=["laptop", "phone"])
def test_the_results_page_lists_the_ruling(
    served: tuple[Server, str], chromium: Any, tmp_path: Path, viewport: dict[str, int]
) -> None:
    """After the rulings above (module scope: the same server), the pairwise batch's results show the
    Adjudication tab with them; at laptop width the sidebar's switch re-ranks with them, and the verdict says so."""
    _server, link = served
    page = chromium.new_context(viewport=viewport).new_page()
    page.goto(link)
    page.get_by_label("Batch").first.wait_for(timeout=60_000)
    settle(page, 90_000)
    page.get_by_label("Batch").first.click()
    page.get_by_role("option", name="demo-pairwise").click()
    settle(page, 90_000)
    if viewport is LAPTOP:
        assert "The rankings use the" not in page.inner_text("body")
        switch = page.get_by_text("Rank with adjudicators' rulings")
        for _tick in range(300):  # the other batch's page, being replaced, may still show its own switch
            if switch.count() == 1:
                break
            page.wait_for_timeout(100)
        switch.first.click()
        page.get_by_text("The rankings use the", exact=False).first.wait_for(timeout=90_000)
        settle(page, 90_000)
    for _attempt in range(3):  # a click that lands while the batch's page is still being drawn is lost
        page.get_by_role("tab", name="Adjudication").click()
        try:
            page.get_by_text("Disputed when", exact=False).first.wait_for(timeout=30_000)
            break
        except Exception:  # noqa: BLE001 - Playwright's TimeoutError: click the tab again
            settle(page, 60_000)
    settle(page, 60_000)
    body = page.inner_text("body")
    assert "ruled" in body and "Adjudication" in body
    page.get_by_text("Disputed when", exact=False).first.scroll_into_view_if_needed()
    page.screenshot(path=str(tmp_path / f"results-adjudication-{viewport['width']}.png"))
    assert page.locator('[data-testid="stException"]').count() == 0
    overflow = page.evaluate("() => document.documentElement.scrollWidth - window.innerWidth")
    assert overflow <= 1, f"the page scrolls sideways by {overflow} px"
    page.context.close()
