"""The review page with long answers, in real Chromium, at 1440x900 and on a phone (390x844).

Wide screens: the judgement sits beside the answer(s) and stays in view while a long answer scrolls past
(before, a 14,500-character pair was 11 screens tall with the form at the bottom). Phones: the form follows
the answers, as before. Keys: ↑/↓ scroll the page and leave answers alone, the highlighted question is
shown from the start, and X, C, B tick "can't judge", focus the comment and go back to the previous item.

Set ``BLIND_REVIEW_SHOTS`` to a folder to keep the screenshots these tests take.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout
from sqlalchemy.engine import Engine

from reviewer_app.batches.loading import load_batch
from reviewer_app.people.people import add_reviewer
from reviewer_app.review.assignment import assign
from tests.helpers import PAIRWISE_RUBRIC, RATING_RUBRIC, write_batch, write_rubric
from tests.support.app_server import Server
from tests.support.databases import Templates
from tests.support.review_page import FORM, answer_with_mouse, groups, next_label, settle, submit, wait_item

pytestmark = pytest.mark.browser

WIDE = {"width": 1440, "height": 900}
PHONE = {"width": 390, "height": 844}


def long_answer(seed: int) -> str:
    """About 14,500 characters of Markdown: headings, paragraphs, a list and a code block."""
    parts = [f"# Answer {seed}\n"]
    for i in range(18):
        parts.append(f"## Part {i + 1}\n")
        parts.append(f"Paragraph {i + 1} of answer {seed}: " + "the reasoning continues with more detail here. " * 14)
        parts.append("- a first point\n- a second point\n- a third point\n")
    parts.append("```python\nprint('done')\n```\n")
    return "\n".join(parts)[:14_500]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, templates: Templates) -> Iterator[tuple[Server, str, str]]:
    from storage.engine import get_engine

    folder = tmp_path_factory.mktemp("layout")
    copy = templates.copy("sqlite", "blank", folder)
    engine: Engine = get_engine(copy.url)
    with pytest.MonkeyPatch.context() as env:
        env.setenv("BLIND_REVIEW_DATA_DIR", str(copy.data_dir))
        rater = add_reviewer(engine, "rater", "reviewer")[1]
        judge = add_reviewer(engine, "judge", "reviewer")[1]
        rating = [
            {"sample_id": f"r{i}", "scenario": "qa", "prompt": f"Explain topic {i} in depth.", "model": "m",
             "output": long_answer(i)}
            for i in range(8)
        ]  # fmt: skip
        load_batch(engine, [write_batch(folder / "r", rating)], write_rubric(folder, RATING_RUBRIC.format(overlap=1)),
                   name="long", open_now=True)  # fmt: skip
        pairs = [
            {"sample_id": f"p{i}", "scenario": "qa", "prompt": f"Compare approaches to problem {i}.", "model": m,
             "output": long_answer(10 * i + j)}
            for i in range(3)
            for j, m in enumerate(("m1", "m2"))
        ]  # fmt: skip
        load_batch(
            engine,
            [write_batch(folder / "p", pairs)],
            write_rubric(folder, PAIRWISE_RUBRIC.format(overlap=1), name="pairwise.toml"),
            name="pairs",
            open_now=True,
        )
        assign(engine, "long", ["rater"])
        assign(engine, "pairs", ["judge"])
        server = Server(copy.url, copy.data_dir, folder / "serve.log")
        yield server, rater, judge
        server.stop()
        engine.dispose()


def _shot(page: Any, name: str) -> None:
    folder = os.environ.get("BLIND_REVIEW_SHOTS")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(folder) / f"{name}.png"))


def _box(page: Any, selector: str) -> dict[str, float]:
    box = page.locator(selector).first.bounding_box()
    assert box is not None, selector
    return dict(box)


def _in_view(page: Any, selector: str, height: int) -> bool:
    box = _box(page, selector)
    return box["y"] >= 0 and box["y"] + box["height"] <= height


def _scroll_main(page: Any, to: str) -> float:
    """Scroll the page's scrolling container ('end' or a pixel count); returns its scrollTop."""
    return float(
        page.evaluate(
            "(to) => { const m = document.querySelector('[data-testid=\"stMain\"]');"
            " const el = (m && m.scrollHeight > m.clientHeight) ? m : document.scrollingElement;"
            " el.scrollTop = to === 'end' ? el.scrollHeight : Number(to); return el.scrollTop; }",
            to,
        )
    )


def _scroll_top(page: Any) -> float:
    return float(
        page.evaluate(
            "() => { const m = document.querySelector('[data-testid=\"stMain\"]');"
            " return Math.max(m ? m.scrollTop : 0, document.scrollingElement.scrollTop); }"
        )
    )


SUBMIT = FORM.replace("judgement", "submit_answer") + " button"


@pytest.mark.parametrize("who", ["rater", "judge"])
def test_the_judgement_stays_beside_a_long_answer_on_a_wide_screen(
    served: tuple[Server, str, str], chromium: Any, who: str
) -> None:
    server, rater, judge = served
    context = chromium.new_context(viewport=WIDE)
    page = context.new_page()
    page.goto(server.link(rater if who == "rater" else judge))
    label = wait_item(page)
    page.wait_for_timeout(3000)
    _shot(page, f"wide-{who}-arrival")
    # On arrival the first question and the submit button are on the first screen, beside the prompt.
    assert _in_view(page, f"{FORM} [role='radiogroup']", WIDE["height"])
    answer = _box(page, '[data-testid="stColumn"]:has(h5) >> nth=0')
    form = _box(page, FORM)
    assert form["x"] > answer["x"] + 300, "the form is not beside the answer"
    # Read down to the end of the long answer: the form is still there to answer.
    for to in ("2500", "6000", "end"):
        _scroll_main(page, to)
        page.wait_for_timeout(200)
        assert _in_view(page, SUBMIT, WIDE["height"]), f"submit out of view after scrolling to {to}"
    _shot(page, f"wide-{who}-scrolled")
    # Several submits in a row: every new item starts at its top with the form beside it.
    for n in range(2):
        answer_with_mouse(page, [1, 0] if who == "rater" else [0])
        submit(page)
        label = next_label(page, label)
        assert label
        page.wait_for_timeout(300)
        assert _scroll_top(page) == 0
        assert _in_view(page, f"{FORM} [role='radiogroup']", WIDE["height"])
        assert "Saved item" in page.inner_text("body")
        _shot(page, f"wide-{who}-after-submit-{n + 1}")
    context.close()


def test_a_phone_keeps_the_form_under_the_answer(served: tuple[Server, str, str], chromium: Any) -> None:
    server, rater, _judge = served
    context = chromium.new_context(viewport=PHONE, is_mobile=True, has_touch=True)
    page = context.new_page()
    page.goto(server.link(rater))
    wait_item(page)
    _shot(page, "phone-arrival")
    cards = _box(page, '[data-testid="stColumn"]:has(h5) >> nth=0')
    form = _box(page, FORM)
    assert form["y"] >= cards["y"] + cards["height"] - 1, "on a phone the form comes after the answer"
    assert form["width"] > PHONE["width"] * 0.8
    page.locator(SUBMIT).scroll_into_view_if_needed()
    page.wait_for_timeout(200)
    _shot(page, "phone-form")
    context.close()


def _active(page: Any) -> int:
    return int(
        page.evaluate(
            f"() => Array.from(document.querySelectorAll('{FORM} [role=\"radiogroup\"]'))"
            ".findIndex(g => g.classList.contains('br-active'))"
        )
    )


def _checked(page: Any) -> list[bool]:
    return [groups(page).nth(i).locator("input:checked").count() > 0 for i in range(groups(page).count())]


def test_keys_leave_scrolling_alone_and_reach_the_rest_of_the_form(
    served: tuple[Server, str, str], chromium: Any
) -> None:
    server, rater, _judge = served
    context = chromium.new_context(viewport=WIDE)
    page = context.new_page()
    page.goto(server.link(rater))
    first = wait_item(page)
    # The keyboard script outlines a question once it has run: wait for the first question's outline (a loaded
    # machine can take longer than a fixed pause: a CI run at load ~3 had none after 5 s, and one at load ~4 saw
    # the second question's for a moment while the form was still being drawn), then it must be that one.
    with contextlib.suppress(PlaywrightTimeout):
        page.wait_for_function(
            f"() => {{ const g = document.querySelectorAll('{FORM} [role=\"radiogroup\"]');"
            " return g.length > 0 && g[0].classList.contains('br-active'); }",
            timeout=20_000,
        )
    assert _active(page) == 0, "a question is outlined from the start"
    page.locator("h3", has_text=re.compile(r"^Item ")).first.click()
    # ↓ scrolls the page, twice as far for two presses, and changes no answer and no highlight.
    before = _scroll_top(page)
    page.keyboard.press("ArrowDown")
    page.wait_for_timeout(300)
    once = _scroll_top(page)
    page.keyboard.press("ArrowDown")
    page.wait_for_timeout(300)
    twice = _scroll_top(page)
    assert before < once < twice, (before, once, twice)
    assert _active(page) == 0 and not any(_checked(page))
    page.keyboard.press("ArrowUp")
    page.wait_for_timeout(300)
    assert _scroll_top(page) < twice
    # Number keys answer and move the outline on; J/K move it without answering.
    page.keyboard.press("3")
    page.wait_for_timeout(300)
    assert _active(page) == 1 and _checked(page) == [True, False]
    page.keyboard.press("k")
    assert _active(page) == 0
    page.keyboard.press("j")
    assert _active(page) == 1
    # C focuses the comment box; what is typed there is text, not answers.
    page.keyboard.press("c")
    assert page.evaluate("() => document.activeElement.tagName") == "TEXTAREA"
    page.keyboard.type("1 thought")
    assert _checked(page) == [True, False]
    page.locator("h3", has_text=re.compile(r"^Item ")).first.click()
    # X ticks "can't judge" and puts the cursor in the reason box.
    page.keyboard.press("x")
    page.wait_for_function("() => document.activeElement && document.activeElement.type === 'text'", timeout=5000)
    assert page.locator(f"{FORM} [data-testid='stCheckbox'] input").is_checked()
    page.keyboard.type("outside my expertise")
    page.keyboard.press("Enter")  # Enter in the reason box submits
    second = next_label(page, first)
    assert second and second != first
    settle(page)
    # B goes back to the item just finished, with its answer.
    page.locator("h3", has_text=re.compile(r"^Item ")).first.click()
    page.keyboard.press("b")
    back = next_label(page, second)
    assert back == first
    assert page.locator(f"{FORM} [data-testid='stCheckbox'] input").is_checked()
    assert page.locator(f"{FORM} [data-testid='stTextInput'] input").input_value() == "outside my expertise"
    _shot(page, "wide-keys-back-to-previous")
    context.close()


def _wait_active(page: Any, index: int) -> None:
    page.wait_for_function(
        f"() => Array.from(document.querySelectorAll('{FORM} [role=\"radiogroup\"]'))"
        f".findIndex(g => g.classList.contains('br-active')) === {index}",
        timeout=5000,
    )


def _refused(page: Any, how: str) -> None:
    """Submit (by the button or by Enter) and wait for the refusal to be drawn."""
    before = page.get_by_text("Please answer:").count()
    if how == "button":
        submit(page)
    else:
        page.locator("h3", has_text=re.compile(r"^Item ")).first.click()
        page.keyboard.press("Enter")
    page.wait_for_function(
        f"() => document.body.innerText.split('Please answer:').length - 1 > {before}"
        " || document.querySelectorAll('[data-testid=\"stAlertContentError\"]').length > 0",
        timeout=10_000,
    )
    settle(page)
    page.wait_for_timeout(300)


def test_a_refused_submit_outlines_the_first_question_left_unanswered(
    served: tuple[Server, str, str], chromium: Any
) -> None:
    server, rater, _judge = served
    context = chromium.new_context(viewport=WIDE)
    page = context.new_page()
    page.goto(server.link(rater))
    first = wait_item(page)
    # The keyboard script outlines the first question once it has loaded (a loaded machine took over 300 ms).
    _wait_active(page, 0)
    # Only the second question answered, with the mouse: the outline follows the click there.
    groups(page).nth(1).locator("label").nth(0).click()
    _wait_active(page, 1)
    _refused(page, "button")
    assert wait_item(page) == first and "Not answered yet." in page.inner_text(FORM)
    _wait_active(page, 0)  # the first question, the one missing (it stayed on the second before)
    # J moves it away; a second refusal of the same item brings it back again.
    page.locator("h3", has_text=re.compile(r"^Item ")).first.click()
    page.keyboard.press("j")
    assert _active(page) == 1
    _refused(page, "enter")
    _wait_active(page, 0)
    _shot(page, "wide-refused-outline")
    # The keys answer the outlined question: 3 answers the missing one and Enter saves.
    page.keyboard.press("3")
    page.wait_for_timeout(300)
    assert _checked(page) == [True, True]
    page.keyboard.press("Enter")
    second = next_label(page, first)
    assert second and second != first
    # The other way round: the first question answered, the outline taken back to it, the second missing.
    page.wait_for_timeout(300)
    page.locator("h3", has_text=re.compile(r"^Item ")).first.click()
    page.keyboard.press("4")
    _wait_active(page, 1)
    page.keyboard.press("k")
    assert _active(page) == 0
    _refused(page, "enter")
    _wait_active(page, 1)
    assert _checked(page) == [True, False]
    context.close()
