"""The API's docs page in real Chromium, offline: Swagger UI comes from the server itself (no CDN; every request
the page makes goes to the server, checked), it lists the API's operations under the app's
Content-Security-Policy, and a token entered with Authorize calls the API from the page."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pytest

from reviewer_app.people.api_tokens import issue_api_token
from reviewer_app.people.people import add_reviewer
from storage.engine import get_engine
from tests.support.app_server import Server
from tests.support.databases import Templates

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, templates: Templates) -> Iterator[tuple[Server, str]]:
    folder = tmp_path_factory.mktemp("api-docs")
    copy = templates.copy("sqlite", "blank", folder)
    engine = get_engine(copy.url)
    add_reviewer(engine, "lena", "lead")
    token = issue_api_token(engine, "lena")[1]
    engine.dispose()
    server = Server(copy.url, copy.data_dir, folder / "serve.log")
    yield server, token
    server.stop()


@pytest.mark.parametrize("width", [1440, 390])
def test_the_docs_page_works_offline(
    chromium: Any, served: tuple[Server, str], width: int, tmp_path_factory: pytest.TempPathFactory
) -> None:
    server, token = served
    context = chromium.new_context(viewport={"width": width, "height": 900})
    elsewhere: list[str] = []
    blocked: list[str] = []

    def only_the_server(route: Any) -> None:
        if urlparse(route.request.url).netloc == urlparse(server.url).netloc:
            route.continue_()
        else:
            elsewhere.append(route.request.url)
            route.abort()

    context.route("**/*", only_the_server)
    page = context.new_page()
    page.on("console", lambda m: blocked.append(m.text) if "Content Security Policy" in m.text else None)
    try:
        page.goto(f"{server.url}/api/v1/docs")
        page.wait_for_selector(".opblock", timeout=30_000)
        assert "Blind Review API" in page.inner_text(".info .title")
        paths = page.locator(".opblock-summary-path").all_inner_texts()
        assert len(paths) >= 20 and "/batches/{batch}/report" in [p.replace("\u200b", "") for p in paths]
        # Authorize with the token, then call GET /me from the page.
        page.click("button.authorize")
        page.fill(".modal-ux input[type=text], .modal-ux input[type=password]", token)
        page.click(".modal-ux button.authorize")
        page.click(".modal-ux button.btn-done")
        me = page.locator(".opblock-get", has=page.locator(".opblock-summary-path", has_text="/me")).first
        me.locator(".opblock-summary").click()
        me.locator("button.try-out__btn").click()
        me.locator("button.execute").click()
        body = me.locator(".responses-wrapper .live-responses-table .microlight").first
        body.wait_for(timeout=15_000)
        assert '"lena"' in body.inner_text() and '"lead"' in body.inner_text()
        shots = Path(tmp_path_factory.getbasetemp()) / "screenshots"
        shots.mkdir(exist_ok=True)
        page.screenshot(path=str(shots / f"api-docs-{width}.png"), full_page=False)
        assert not elsewhere, f"the docs page asked for something outside the server: {elsewhere}"
        assert not blocked, f"the Content-Security-Policy blocked part of the page: {blocked}"
    finally:
        context.close()
