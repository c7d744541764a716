"""The review page as reviewers use it (issue 27, points 3-6), in real Chromium at 1440x900 and 390x844.

* 3: a compact header line (item, progress, "Saved") puts the prompt and the start of the answer in view on a
  laptop, the form beside them (before: title, picker, banner and progress pushed "Answer to judge" to
  y = 614 on this batch after a submit, ~850 with a longer prompt).
* 4: on a phone, a long answer gets a "Go to your judgement" button and a way back; a wide Markdown table
  scrolls sideways inside its box instead of breaking words ("Throu / ghput").
* 5: keys answer again after the batch picker was used; a refused submit's "Please answer: ..." is in view.
* 6: a reviewer who lands on a batch with nothing for them is taken to one with work; an item from the
  shared pool does not show a total that grows by one with each item.

Set ``BLIND_REVIEW_SHOTS`` to a folder to keep the screenshots.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from sqlalchemy.engine import Engine

from reviewer_app.batches.catalog import find_batch
from reviewer_app.batches.loading import load_batch
from reviewer_app.people.people import add_reviewer, get_person
from reviewer_app.review.assignment import assign
from reviewer_app.review.reviews import next_item, submit_review
from tests.browser.test_review_layout import PHONE, WIDE, _shot
from tests.helpers import RATING_RUBRIC, write_batch, write_rubric
from tests.support.app_server import Server
from tests.support.databases import Templates
from tests.support.review_page import FORM, answer_with_mouse, groups, next_label, settle, submit, wait_item

pytestmark = pytest.mark.browser

TABLE = (
    "| Approach | Throughput (reads/s) | Latency p99 | Notes on well-behaved replication |\n|---|---|---|---|\n"
    + "".join(
        f"| variant-{i} with a longer name | {1000 * i} reads/s | {3 * i} ms | handles reads/s well under load |\n"
        for i in range(6)
    )
)
# Five questions: a form tall enough that a message under its button fell out of view.
FIVE = RATING_RUBRIC.format(overlap=1) + "".join(
    f'[[dimensions]]\nname = "aspect_{n}"\ndescription = "Is aspect {n} handled well?"\nscale = "likert"\n'
    'min = 1\nmax = 5\nlevel = "ordinal"\n'
    for n in range(3)
)


def _answer(i: int) -> str:
    body = "\n\n".join(f"## Part {p}\n\n" + "The reasoning continues with more detail here. " * 12 for p in range(12))
    return f"# Answer {i}\n\n{TABLE}\n{body}"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, templates: Templates) -> Iterator[tuple[Server, dict[str, str]]]:
    from storage.engine import get_engine

    folder = tmp_path_factory.mktemp("header")
    copy = templates.copy("sqlite", "blank", folder)
    engine: Engine = get_engine(copy.url)
    with pytest.MonkeyPatch.context() as env:
        env.setenv("BLIND_REVIEW_DATA_DIR", str(copy.data_dir))
        links = {name: add_reviewer(engine, name, "reviewer")[1] for name in ("rater", "other", "lander")}

        def batch(name: str, n: int, rubric: str, long: bool = True) -> None:
            records = [
                {"sample_id": f"{name}{i}", "scenario": "qa", "model": "m", "output": _answer(i) if long else f"A{i}.",
                 "prompt": f"Explain topic {i} of {name} in depth, comparing the approaches in a table."}
                for i in range(n)
            ]  # fmt: skip
            load_batch(engine, [write_batch(folder / name, records)], write_rubric(folder / name, rubric),
                       name=name, open_now=True)  # fmt: skip

        batch("long", 6, FIVE)
        batch("short", 4, RATING_RUBRIC.format(overlap=1), long=False)
        batch("full", 2, RATING_RUBRIC.format(overlap=1), long=False)  # open to all; "other" answers both items
        batch("pool", 4, RATING_RUBRIC.format(overlap=1), long=False)  # nobody planned: a shared pool
        assign(engine, "long", ["rater"])
        assign(engine, "short", ["rater"])
        other = get_person(engine, "other")
        full = find_batch(engine, "full").id
        assert full is not None
        while (view := next_item(engine, full, other.id)) is not None:
            submit_review(engine, other.id, view.assignment_id, {"correctness": "3", "follows_format": "1"})
        server = Server(copy.url, copy.data_dir, folder / "serve.log")
        yield server, links
        server.stop()
        engine.dispose()


def _y(page: Any, heading: str) -> float:
    return float(
        page.evaluate(
            "(t) => Array.from(document.querySelectorAll('h5')).find(e => e.innerText.trim() === t)"
            ".getBoundingClientRect().top",
            heading,
        )
    )


def _in_view(page: Any, selector: str) -> bool:
    """Whether the element is inside the window and inside every scrolled box around it."""
    return bool(
        page.evaluate(
            "(sel) => { const el = document.querySelector(sel); if (!el) return false;"
            " const r = el.getBoundingClientRect(); if (r.top < 0 || r.bottom > innerHeight) return false;"
            " for (let p = el.parentElement; p; p = p.parentElement) { const s = getComputedStyle(p);"
            "  if (/(auto|scroll)/.test(s.overflowY) && p.scrollHeight > p.clientHeight) {"
            "   const b = p.getBoundingClientRect();"
            "   if (r.top < b.top - 1 || r.bottom > b.bottom + 1) return false; } }"
            " return true; }",
            selector,
        )
    )


def test_the_item_is_in_view_on_a_laptop_after_each_submit(served: Any, chromium: Any) -> None:
    server, links = served
    page = chromium.new_context(viewport=WIDE).new_page()
    page.goto(server.link(links["rater"]))
    label = wait_item(page)
    for n in range(3):
        answer_with_mouse(page, [2, 0, 1, 2, 3])
        submit(page)
        label = next_label(page, label)
        page.wait_for_timeout(300)
        assert "Saved item" in page.inner_text("body")
        prompt, answer = _y(page, "Prompt"), _y(page, "Answer to judge")
        # Measured: 172 and 308 (before this change: 495 and 614 here, "Answer to judge" at ~850 with a longer prompt).
        assert prompt < 260 and answer < 420, (prompt, answer)
        form = page.locator(FORM).bounding_box()
        assert form is not None and form["x"] > 700 and form["y"] < 300, form
        assert _in_view(page, f"{FORM} [role='radiogroup']")
        _shot(page, f"header-wide-after-submit-{n + 1}")


def test_keys_work_after_the_batch_picker(served: Any, chromium: Any) -> None:
    server, links = served
    page = chromium.new_context(viewport=WIDE).new_page()
    page.goto(server.link(links["rater"]))
    first = wait_item(page)
    picker = page.locator(".st-key-review_header [data-testid='stSelectbox'] input")
    option = page.locator("[role='option']", has_text="short").first
    # A click that lands while the page redraws may not open the list, and a redraw under load can close it
    # again before the option is clicked (a CI run at load ~3 waited 30 s for an option of a closed list):
    # open it and pick in one attempt, and try again from the start.
    for attempt in range(4):
        settle(page)
        picker.click()
        try:
            option.wait_for(timeout=5_000)
            page.wait_for_function(
                "() => document.activeElement && document.activeElement.closest('[data-testid=stSelectbox]')",
                timeout=5_000,
            )
            page.wait_for_timeout(200)
            option.click(timeout=5_000)
            break
        except Exception:  # noqa: BLE001 - Playwright's timeout: the list did not open, or closed again
            if attempt == 3:
                raise
            page.keyboard.press("Escape")
    label = next_label(page, first)
    assert label and label != first
    page.wait_for_timeout(500)
    page.keyboard.press("4")  # no click on the page first: the focus was left where the picker had it
    page.wait_for_timeout(500)
    assert groups(page).nth(0).locator("input").nth(3).is_checked(), "the key went to the picker, not the form"


def test_a_refused_submit_shows_its_message_in_view(served: Any, chromium: Any) -> None:
    server, links = served
    page = chromium.new_context(viewport={"width": 1280, "height": 720}).new_page()
    page.goto(server.link(links["rater"]))
    wait_item(page)
    answer_with_mouse(page, [2])
    submit(page)
    page.get_by_text("Please answer:").wait_for(timeout=10_000)
    settle(page)
    page.wait_for_timeout(800)
    _shot(page, "header-refused")
    assert _in_view(page, f"{FORM} [data-testid='stAlertContentError']"), "the refusal is out of view"


def test_a_phone_jumps_to_the_judgement_and_back(served: Any, chromium: Any) -> None:
    server, links = served
    page = chromium.new_context(viewport=PHONE, is_mobile=True, has_touch=True).new_page()
    page.goto(server.link(links["rater"]))
    wait_item(page)
    page.wait_for_timeout(500)
    _shot(page, "header-phone-arrival")
    jump = page.get_by_role("link", name=re.compile("Go to your judgement"))
    assert jump.is_visible()
    assert not _in_view(page, f"{FORM} [role='radiogroup']")
    jump.click()
    page.wait_for_timeout(800)
    assert _in_view(page, f"{FORM} [role='radiogroup']")
    assert not jump.is_visible(), "the button hides while the form is in view"
    _shot(page, "header-phone-judgement")
    page.get_by_role("link", name=re.compile("Back to the answer")).click()
    page.wait_for_timeout(800)
    y = _y(page, "Answer to judge")
    assert 0 <= y < PHONE["height"] / 2, y
    # The table scrolls sideways in its box; no word in it is broken over two lines.
    table = page.locator(".br-md table").first
    sizes = table.evaluate("(t) => [t.scrollWidth, t.clientWidth, t.closest('.br-md').clientWidth]")
    assert sizes[0] > sizes[1] and sizes[1] <= sizes[2], sizes
    broken = table.evaluate(
        "(t) => { const out = []; const walk = document.createTreeWalker(t, NodeFilter.SHOW_TEXT);"
        " for (let n = walk.nextNode(); n; n = walk.nextNode()) { const re = /[^\\s-]+/g; let m;"
        "  while ((m = re.exec(n.data))) { const r = document.createRange(); r.setStart(n, m.index);"
        "   r.setEnd(n, m.index + m[0].length);"
        "   if (new Set(Array.from(r.getClientRects()).map(x => Math.round(x.top))).size > 1) out.push(m[0]); } }"
        " return out; }"
    )
    assert broken == [], broken
    _shot(page, "header-phone-table")


def test_a_reviewer_with_nothing_here_is_taken_to_a_batch_with_work(served: Any, chromium: Any) -> None:
    server, links = served
    page = chromium.new_context(viewport=WIDE).new_page()
    page.goto(server.link(links["lander"]))
    label = wait_item(page)  # before: "Nothing in this batch is waiting for you" on "full"
    body = page.inner_text("body")
    assert "Nothing in “full” is waiting for you" in body
    # The pool hands out one item at a time: no total that grows by one with each (1 -> 2 -> 3).
    totals = []
    for _ in range(3):
        text = page.inner_text(".st-key-review_header")
        assert "shared pool" in text, text
        totals += re.findall(r"of (\d+)", text)
        answer_with_mouse(page, [2, 0])
        submit(page)
        label = next_label(page, label)
        assert label
    assert totals == [], totals
    _shot(page, "header-pool")
