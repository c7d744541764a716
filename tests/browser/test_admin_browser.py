"""The Admin page in real Chromium: two AlpacaEval files with the same name both load, and a sign-in link
copied with the copy button opens the app as that person."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy.engine import Engine

from reviewer_app.batches.admin import batch_table
from reviewer_app.people.people import add_reviewer
from tests.helpers import RATING_RUBRIC
from tests.support.app_server import Server
from tests.support.databases import Templates
from tests.support.review_page import settle

pytestmark = pytest.mark.browser

ALPACA = Path(__file__).resolve().parents[1] / "fixtures" / "alpaca_eval"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, templates: Templates) -> Iterator[tuple[Server, Engine, str]]:
    from storage.engine import get_engine

    folder = tmp_path_factory.mktemp("admin-server")
    copy = templates.copy("sqlite", "blank", folder)
    engine = get_engine(copy.url)
    with pytest.MonkeyPatch.context() as env:
        env.setenv("BLIND_REVIEW_DATA_DIR", str(copy.data_dir))
        link = add_reviewer(engine, "root", "admin")[1]
        server = Server(copy.url, copy.data_dir, folder / "serve.log")
        yield server, engine, server.link(link)
        server.stop()
        engine.dispose()


def _admin_page(chromium: Any, url: str) -> Any:
    context = chromium.new_context(viewport={"width": 1440, "height": 900})
    context.grant_permissions(["clipboard-read", "clipboard-write"])
    page = context.new_page()
    page.goto(url)
    page.get_by_role("heading", name="Admin").wait_for(timeout=45_000)
    settle(page)
    return page


def test_two_files_named_model_outputs_json_both_load(served: Any, chromium: Any, tmp_path: Path) -> None:
    server, engine, link = served
    page = _admin_page(chromium, link)
    page.get_by_role("tab", name="Load a batch").click()
    uploaders = page.locator('[data-testid="stFileUploader"] input[type="file"]')
    uploaders.first.wait_for(state="attached")
    uploaders.nth(0).set_input_files(
        files=[
            {
                "name": "model_outputs.json",
                "mimeType": "application/json",
                "buffer": (ALPACA / m / "model_outputs.json").read_bytes(),
            }
            for m in ("claude-2", "vicuna-13b")
        ]
    )
    uploaders.nth(1).set_input_files(
        files=[
            {"name": "rubric.toml", "mimeType": "application/toml", "buffer": RATING_RUBRIC.format(overlap=1).encode()}
        ]
    )
    settle(page)
    widget = page.locator('[data-testid="stFileUploader"]').first
    assert widget.get_by_text("model_outputs.json", exact=True).count() == 2  # the widget holds both files
    page.get_by_label("Batch name").fill("alpaca")
    page.get_by_role("button", name="Check and load").click()
    page.get_by_text("Loaded batch 'alpaca'").wait_for(timeout=60_000)
    page.get_by_text("outputs per model", exact=False).wait_for()
    settle(page)
    body = page.inner_text("body")
    assert "18 outputs from 2 model(s)" in body
    assert "outputs per model: claude-2 9, vicuna-13b 9" in body
    assert "'model_outputs.json' was read as 'model_outputs (2).json'" in body
    assert next(r for r in batch_table(engine) if r.batch.name == "alpaca").per_model == {
        "claude-2": 9,
        "vicuna-13b": 9,
    }
    page.context.close()


def test_a_copied_sign_in_link_opens_the_app(served: Any, chromium: Any, tmp_path: Path) -> None:
    server, _engine, link = served
    page = _admin_page(chromium, link)
    page.get_by_role("tab", name="People").click()
    page.get_by_label("Name", exact=True).fill("new-expert")
    page.get_by_role("button", name="Add and show sign-in link").click()
    page.get_by_text("Added reviewer 'new-expert'").wait_for(timeout=45_000)
    settle(page)
    block = page.locator('[data-testid="stCode"]').first
    shown = block.inner_text().strip()
    assert "`" not in shown and "?token=" in shown
    block.hover()
    block.get_by_role("button", name="Copy to clipboard").click()
    copied = str(page.evaluate("() => navigator.clipboard.readText()"))
    page.screenshot(path=str(tmp_path / "people.png"))  # kept by pytest's tmp_path, for a look
    assert copied == shown and copied.startswith(server.url + "/?token=")
    page.context.close()

    # The copied text, pasted into a fresh browser's address bar, signs the new person in.
    visitor = chromium.new_context(viewport={"width": 1280, "height": 900}).new_page()
    visitor.goto(copied)
    visitor.get_by_role("heading", name="Review").wait_for(timeout=45_000)
    settle(visitor)
    body = visitor.inner_text("body")
    assert "new-expert" in body and "not valid" not in body
    visitor.context.close()
