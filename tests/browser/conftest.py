"""Real headless Chromium (Debian's /usr/bin/chromium, never a downloaded browser) against `blind-review serve`.

The server helper is :class:`tests.support.app_server.Server`; the page helpers are in
:mod:`tests.support.review_page`.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.app_server import Server
from tests.support.chromium import CHROMIUM, CHROMIUM_ARGS
from tests.support.databases import Templates


@pytest.fixture(scope="package")
def chromium() -> Iterator[object]:
    # Package scope, not session: Playwright's sync API keeps an asyncio loop running in this thread while
    # it is open, and later tests that call asyncio.run() (tests/generation) fail under it.
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: install Debian's chromium (make browser-deps)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture(scope="module")
def demo_server(
    tmp_path_factory: pytest.TempPathFactory, templates: Templates
) -> Iterator[tuple[Server, dict[str, str]]]:
    """A `blind-review serve` of a private copy of the demo database, one per test module, with the demo
    people's sign-in links (name -> link) pointed at it."""
    folder = tmp_path_factory.mktemp("demo-server")
    copy = templates.copy("sqlite", "demo", folder)
    server = Server(copy.url, copy.data_dir, folder / "serve.log")
    try:
        yield server, {name: server.link(link) for name, link in copy.links.items()}
    finally:
        server.stop()
