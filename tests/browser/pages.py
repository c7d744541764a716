"""Driving the review page: read the item label, answer with the mouse or the keyboard, submit."""

from __future__ import annotations

import re
import tempfile
from pathlib import Path
from typing import Any

ITEM = re.compile(r"^Item (\w+)$")


def wait_item(page: Any, timeout: float = 45_000) -> str:
    """The label of the item on the page, once the page has settled."""
    heading = page.locator("h3", has_text=re.compile(r"^Item \w+$")).first
    heading.wait_for(timeout=timeout)
    settle(page, timeout)
    m = ITEM.match(heading.inner_text().strip())
    assert m, heading.inner_text()
    return m.group(1)


def settle(page: Any, timeout: float = 45_000) -> None:
    """Wait until the script run is over and nothing on the page is stale."""
    page.wait_for_function(
        "() => { const app = document.querySelector('[data-test-script-state]');"
        " return app && app.getAttribute('data-test-script-state') !== 'running'"
        " && !document.querySelector('[data-stale=\"true\"]'); }", timeout=timeout)


def groups(page: Any) -> Any:
    return page.locator('[data-testid="stForm"] [role="radiogroup"]')


def answer_with_mouse(page: Any, picks: list[int]) -> None:
    for i, n in enumerate(picks):
        groups(page).nth(i).locator("label").nth(n).click()


def answer_with_keys(page: Any, picks: list[int]) -> None:
    page.locator("h3", has_text="Item").first.click()  # focus the page, not a text box
    for n in picks:
        page.keyboard.press(str(n + 1))
    page.keyboard.press("Enter")


def submit(page: Any) -> None:
    page.get_by_role("button", name=re.compile("Submit and next|Save changes")).click()


def next_label(page: Any, previous: str, timeout: float = 45_000) -> str:
    """Wait for the page to move past item ``previous``; returns the new label ("" when all are done)."""
    try:
        _wait_moved(page, previous, timeout)
    except Exception:
        page.screenshot(path=str(Path(tempfile.gettempdir()) / "blind-review-browser-failure.png"), full_page=True)
        raise
    if "finished every item" in page.inner_text("body"):
        return ""
    return wait_item(page)


def _wait_moved(page: Any, previous: str, timeout: float) -> None:
    page.wait_for_function(
        "(prev) => { const h = Array.from(document.querySelectorAll('h3')).find(e => /^Item \\w+$/.test(e.innerText.trim()));"
        " return (h && h.innerText.trim() !== 'Item ' + prev) || document.body.innerText.includes('finished every item'); }",
        arg=previous, timeout=timeout)
