"""The lead's "Compare versions" and "Model history" pages and the results page's Production and Judge tabs in real
Chromium, on the demo (its follow-up batch demo-v2 and three weeks of feedback): each is reached from the
sidebar, its form runs, its charts are drawn, nothing raises, and at phone width the page does not scroll
sideways."""

from __future__ import annotations

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


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, templates: Templates) -> Iterator[tuple[Server, str]]:
    folder = tmp_path_factory.mktemp("lead-server")
    copy = templates.copy("sqlite", "demo", folder)
    server = Server(copy.url, copy.data_dir, folder / "serve.log")
    try:
        yield server, server.link(copy.links["demo-lead"])
    finally:
        server.stop()


def _open(chromium: Any, link: str, viewport: dict[str, int], page_title: str) -> Any:
    """The lead signed in, on the page of the sidebar entry ``page_title`` (at phone width the sidebar is
    folded away: the page is opened by its address instead)."""
    page = chromium.new_context(viewport=viewport).new_page()
    if viewport["width"] >= 800:
        page.goto(link)
        page.get_by_role("link", name=page_title).wait_for(timeout=60_000)
        settle(page, 60_000)
        page.get_by_role("link", name=page_title).click()
    else:
        path = {"Compare versions": "compare", "Model history": "history"}[page_title]
        page.goto(link.replace("/?token=", f"/{path}?token="))
    page.get_by_role("heading", name=page_title).wait_for(timeout=60_000)
    settle(page, 60_000)
    return page


# Whether a Vega-Lite chart (a visible one, when asked) has drawn: a canvas, or an SVG with marks.
_DRAWN = """(visibleOnly) => [...document.querySelectorAll('[data-testid="stVegaLiteChart"]')]
    .some(c => (!visibleOnly || c.checkVisibility())
               && c.querySelector('canvas, svg .mark-symbol, svg .mark-rect, svg path'))"""


def _a_chart_drawn(page: Any, *, visible_only: bool = False) -> None:
    """Wait up to 30 s for a chart to be drawn: a timeout fails the test."""
    page.wait_for_function(_DRAWN, arg=visible_only, timeout=30_000)


def _submit(page: Any, button: str, heading: str) -> None:
    """Press the page's form button and wait for the section ``heading`` and a drawn chart."""
    page.get_by_role("button", name=button).click()
    page.get_by_text(heading, exact=True).wait_for(timeout=90_000)
    settle(page, 60_000)
    _a_chart_drawn(page)


def _check(page: Any, shot: Path) -> None:
    assert page.locator('[data-testid="stException"]').count() == 0, page.inner_text("body")[:2000]
    for _attempt in range(3):  # a chart Streamlit redraws between finding and scrolling is detached: find it again
        chart = page.locator('[data-testid="stVegaLiteChart"]').first
        if not chart.count():
            break
        try:
            chart.scroll_into_view_if_needed(timeout=10_000)
            break
        except Exception:  # noqa: BLE001 - Playwright's Error "not attached to the DOM" or a timeout
            settle(page, 30_000)
    page.screenshot(path=str(shot))  # the first chart on screen, kept by pytest's tmp_path, for a look
    overflow = page.evaluate("() => document.documentElement.scrollWidth - window.innerWidth")
    assert overflow <= 1, f"the page scrolls sideways by {overflow} px"


@pytest.mark.parametrize("viewport", [LAPTOP, PHONE], ids=["laptop", "phone"])
def test_compare_versions_draws_the_verdicts(
    served: tuple[Server, str], chromium: Any, tmp_path: Path, viewport: dict[str, int]
) -> None:
    _server, link = served
    page = _open(chromium, link, viewport, "Compare versions")
    _submit(page, "Compare", "Verdicts")
    page.get_by_text("Behaviour drift", exact=True).wait_for()
    assert "demo-v2 against demo" in page.inner_text("body")
    _check(page, tmp_path / f"compare-{viewport['width']}.png")
    page.context.close()


@pytest.mark.parametrize("viewport", [LAPTOP, PHONE], ids=["laptop", "phone"])
def test_model_history_draws_a_model_over_batches(
    served: tuple[Server, str], chromium: Any, tmp_path: Path, viewport: dict[str, int]
) -> None:
    _server, link = served
    page = _open(chromium, link, viewport, "Model history")
    _submit(page, "Show history", "Scores and verdicts")
    _check(page, tmp_path / f"history-{viewport['width']}.png")
    page.context.close()


def test_the_production_tab_shows_the_feedback_beside_the_panel(
    served: tuple[Server, str], chromium: Any, tmp_path: Path
) -> None:
    _server, link = served
    page = chromium.new_context(viewport=LAPTOP).new_page()
    page.goto(link)
    page.get_by_text("Progress & results").first.wait_for(timeout=60_000)
    settle(page, 90_000)
    page.get_by_role("tab", name="Production").click()
    page.get_by_text("dynamo-2", exact=False).first.wait_for(timeout=60_000)
    settle(page, 60_000)
    _a_chart_drawn(page, visible_only=True)
    _check(page, tmp_path / "production.png")
    page.context.close()


@pytest.mark.parametrize("viewport", [LAPTOP, PHONE], ids=["laptop", "phone"])
def test_the_judge_tab_shows_the_judge_assisted_rankings(
    served: tuple[Server, str], chromium: Any, tmp_path: Path, viewport: dict[str, int]
) -> None:
    """demo-judged: the panel rated 6 of 12 samples per scenario, the demo's recorded judge all of them."""
    _server, link = served
    page = chromium.new_context(viewport=viewport).new_page()
    page.goto(link)
    page.get_by_label("Batch").first.wait_for(timeout=60_000)  # at phone width the sidebar is folded
    settle(page, 90_000)
    page.get_by_label("Batch").first.click()
    page.get_by_role("option", name="demo-judged").click()
    settle(page, 90_000)
    for _attempt in range(3):  # a click that lands while the batch's page is still being drawn is lost
        page.get_by_role("tab", name="Judge vs panel").click()
        try:
            page.get_by_text("items rated", exact=False).first.wait_for(timeout=30_000)
            break
        except Exception:  # noqa: BLE001 - Playwright's TimeoutError: click the tab again
            settle(page, 60_000)
    settle(page, 60_000)
    assert "144 judgements; 144 of 144 items rated" in page.inner_text("body")
    expanders = page.locator('[data-testid="stExpander"] summary', has_text="the panel's alone")
    assert expanders.count() == 10  # 3 scenarios x (their numeric dimensions + overall)
    expanders.first.click()
    opened = page.locator('[data-testid="stExpander"]', has_text="the panel's alone").first
    opened.locator('[data-testid="stDataFrame"]').nth(1).wait_for(timeout=30_000)  # ranking, what the judge did
    settle(page, 30_000)
    expanders.first.scroll_into_view_if_needed()
    _check(page, tmp_path / f"judge-{viewport['width']}.png")
    page.context.close()


@pytest.mark.parametrize("viewport", [LAPTOP, PHONE], ids=["laptop", "phone"])
def test_the_style_control_tab_and_the_verdicts_fragility(
    served: tuple[Server, str], chromium: Any, tmp_path: Path, viewport: dict[str, int]
) -> None:
    """The demo batch: style control per scenario and dimension (its sentence, both rankings, what style is
    worth), and a scenario's verdicts with how fragile they are."""
    _server, link = served
    page = chromium.new_context(viewport=viewport).new_page()
    page.goto(link)
    page.get_by_role("tab", name="Style control").wait_for(timeout=90_000)
    settle(page, 90_000)
    for _attempt in range(3):  # a click that lands while the page is still being drawn is lost
        page.get_by_role("tab", name="Style control").click()
        try:
            page.get_by_text("each 100 extra words", exact=False).first.wait_for(timeout=30_000)
            break
        except Exception:  # noqa: BLE001 - Playwright's TimeoutError: click the tab again
            settle(page, 60_000)
    settle(page, 60_000)
    _check(page, tmp_path / f"style-{viewport['width']}.png")
    body = page.inner_text("body")  # the tables are drawn on a canvas: their words are not in the text
    assert "each 100 extra words" in body and "Style control answers" in body  # the method under the tables
    assert page.locator('[data-testid="stDataFrame"]').count() >= 1
    page.get_by_role("tab", name="support").first.click()
    page.get_by_text("How fragile the verdicts are", exact=False).first.wait_for(timeout=60_000)
    settle(page, 60_000)
    page.get_by_text("How fragile the verdicts are", exact=False).first.scroll_into_view_if_needed()
    assert "most favourable to" in page.inner_text("body")
    _check(page, tmp_path / f"fragility-{viewport['width']}.png")
    page.context.close()
