"""After Submit the next item starts with its prompt in view, however far down the reviewer had scrolled
(before, the page kept the old scroll position: a new answer appeared under an identical-looking form)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from sqlalchemy.engine import Engine

from reviewer_app.batches.loading import load_batch
from reviewer_app.people.people import add_reviewer
from reviewer_app.review.assignment import assign
from tests.helpers import RATING_RUBRIC, write_batch, write_rubric
from tests.support.app_server import Server
from tests.support.databases import Templates
from tests.support.review_page import answer_with_mouse, next_label, submit, wait_item

pytestmark = pytest.mark.browser

LONG = "\n\n".join(f"Paragraph {i}: " + "a long answer that goes on " * 30 for i in range(40))


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, templates: Templates) -> Iterator[tuple[Server, str]]:
    from storage.engine import get_engine

    folder = tmp_path_factory.mktemp("scroll")
    copy = templates.copy("sqlite", "blank", folder)
    engine: Engine = get_engine(copy.url)
    with pytest.MonkeyPatch.context() as env:
        env.setenv("BLIND_REVIEW_DATA_DIR", str(copy.data_dir))
        link = add_reviewer(engine, "reader", "reviewer")[1]
        records = [
            {"sample_id": f"s{i}", "scenario": "qa", "prompt": f"Question {i}?", "model": "m", "output": LONG}
            for i in range(8)
        ]
        load_batch(
            engine,
            [write_batch(folder, records)],
            write_rubric(folder, RATING_RUBRIC.format(overlap=1)),
            name="long",
            open_now=True,
        )
        assign(engine, "long")
        server = Server(copy.url, copy.data_dir, folder / "serve.log")
        yield server, link
        server.stop()
        engine.dispose()


def _prompt_in_view(page: Any) -> bool:
    return bool(
        page.evaluate(
            "() => { const h = Array.from(document.querySelectorAll('h5')).find(e => e.innerText.trim() === 'Prompt');"
            " if (!h) return false; const r = h.getBoundingClientRect();"
            " return r.top >= 0 && r.bottom <= window.innerHeight; }"
        )
    )


@pytest.mark.parametrize("viewport", [(1440, 900), (390, 844)])
def test_every_new_item_starts_with_its_prompt_in_view(
    served: tuple[Server, str], chromium: Any, viewport: tuple[int, int]
) -> None:
    server, link = served
    context = chromium.new_context(viewport={"width": viewport[0], "height": viewport[1]})
    page = context.new_page()
    page.goto(server.link(link))
    label = wait_item(page)
    arrivals = 0
    for _ in range(2):
        # The reviewer read down to the end of the long answer (on a wide screen the form stays beside it;
        # on a phone it comes after it).
        page.get_by_role("button", name="Submit and next").scroll_into_view_if_needed()
        page.evaluate(
            "() => { const m = document.querySelector('[data-testid=\"stMain\"]');"
            " [m, document.scrollingElement].forEach(el => { if (el) el.scrollTop = el.scrollHeight; }); }"
        )
        page.wait_for_timeout(200)
        assert not _prompt_in_view(page)
        answer_with_mouse(page, [2, 0])
        submit(page)
        label = next_label(page, label)
        page.wait_for_timeout(300)
        assert _prompt_in_view(page), f"item {label}: the prompt is not in view after Submit"
        arrivals += 1
    assert arrivals == 2
    context.close()
