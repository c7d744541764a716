"""Driving the review page in Chromium (Playwright): read the item label, answer with the mouse or the keyboard,
submit. Used by the browser tests and by scripts/bench_review.py."""

from __future__ import annotations

import re
import tempfile
from pathlib import Path
from typing import Any

ITEM = re.compile(r"^Item (\w+)$")
FORM = ".st-key-judgement"  # the review form's container (components.rating_form.FORM_KEY)


def wait_item(page: Any, timeout: float = 45_000) -> str:
    """The label of the item on the page, once the page has settled."""
    heading = page.locator("h3", has_text=re.compile(r"^Item \w+$")).first
    heading.wait_for(timeout=timeout)
    settle(page, timeout)
    # An item page always ends with its form; the heading alone can be there before the rest is drawn.
    page.locator(FORM + " button").first.wait_for(timeout=timeout)
    settle(page, timeout)
    # In the first second after a page load, an answer clicked and submitted at machine speed can be dropped
    # by Streamlit's frontend (seen about once in three runs; never after that second). People are slower.
    since_load = float(page.evaluate("() => performance.now()"))
    if since_load < 1500:
        page.wait_for_timeout(1500 - since_load)
    m = ITEM.match(heading.inner_text().strip())
    assert m, heading.inner_text()
    return m.group(1)


def settle(page: Any, timeout: float = 45_000) -> None:
    """Wait until the script run is over and nothing on the page is stale."""
    page.wait_for_function(
        "() => { const app = document.querySelector('[data-test-script-state]');"
        " return app && app.getAttribute('data-test-script-state') === 'notRunning'"
        " && !document.querySelector('[data-stale=\"true\"]'); }",
        timeout=timeout,
    )


def groups(page: Any) -> Any:
    return page.locator(FORM + ' [role="radiogroup"]')


def answer_with_mouse(page: Any, picks: list[int]) -> None:
    """Click the n-th option of each question, checking that the click took (a click that lands while the
    page is still laying itself out can be lost, as it can for a person, who would click again)."""
    for i, n in enumerate(picks):
        option = groups(page).nth(i).locator("label").nth(n)
        for _ in range(3):
            option.click()
            if option.locator("input").is_checked():
                break
            page.wait_for_timeout(200)
        assert option.locator("input").is_checked(), f"question {i + 1}: option {n + 1} did not take"


def answer_with_keys(page: Any, picks: list[int]) -> None:
    page.locator("h3", has_text="Item").first.click()  # focus the page, not a text box
    for n in picks:
        page.keyboard.press(str(n + 1))
    page.keyboard.press("Enter")


def submit(page: Any) -> None:
    # A person's click on Submit comes well after their last answer; a click in the same few milliseconds
    # can reach the form before the radio's new value has been recorded by Streamlit's frontend.
    page.wait_for_timeout(150)
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
        "(prev) => { const h = Array.from(document.querySelectorAll('h3'))"
        ".find(e => /^Item \\w+$/.test(e.innerText.trim()));"
        " return (h && h.innerText.trim() !== 'Item ' + prev)"
        " || document.body.innerText.includes('finished every item'); }",
        arg=previous,
        timeout=timeout,
    )
