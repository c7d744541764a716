"""Every page's own address, opened directly in real Chromium (issue 27, point 14): a lead who opened
``/progress`` got Streamlit's "Page not found" over the page that was shown, because a person's start page is
served at ``/`` only. Each role's pages, and a page of another role, open without that box."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.support.app_server import Server
from tests.support.review_page import settle

pytestmark = pytest.mark.browser

# (person, address, a heading the page shows)
ADDRESSES = [
    ("demo-lead", "progress", "Progress and results"),
    ("demo-lead", "compare", "Compare versions"),
    ("demo-lead", "history", "Model history"),
    ("demo-lead", "review", "Review"),
    ("demo-admin", "admin", "Admin"),
    ("demo-admin", "progress", "Progress and results"),
    ("demo-reviewer", "review", None),
    ("demo-reviewer", "progress", None),  # a lead's page: the reviewer's own start page, with a note
]


def _not_found(page: Any) -> bool:
    return bool(page.get_by_text("Page not found").count())


@pytest.mark.parametrize(("person", "path", "heading"), ADDRESSES, ids=[f"{p}-{a}" for p, a, _h in ADDRESSES])
def test_a_pages_own_address_opens_it_without_page_not_found(
    demo_server: tuple[Server, dict[str, str]],
    chromium: Any,
    tmp_path: Path,
    person: str,
    path: str,
    heading: str | None,
) -> None:
    _server, links = demo_server
    page = chromium.new_context(viewport={"width": 1440, "height": 900}).new_page()
    page.goto(links[person].replace("/?token=", f"/{path}?token="))
    page.locator("h1, h3").first.wait_for(timeout=60_000)
    settle(page, 60_000)
    page.wait_for_timeout(500)  # the box, when there is one, comes with the run's first messages
    settle(page, 60_000)
    page.screenshot(path=str(tmp_path / f"{person}-{path}.png"))
    assert not _not_found(page), f"/{path} as {person}: {page.inner_text('body')[:300]}"
    assert "session=" in page.url and "token=" not in page.url
    body = page.inner_text("body")
    if heading is not None:
        page.get_by_role("heading", name=heading).first.wait_for(timeout=10_000)
        assert f"/{path}?" in page.url  # the address stays the page's own (a bookmark of it works)
    if person == "demo-reviewer" and path == "progress":
        assert "Progress & results is for leads" in body
        assert "Progress and results" not in body and "demo-colleague-1" not in body  # nothing of the lead's page
    page.context.close()
