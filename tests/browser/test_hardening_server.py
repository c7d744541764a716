"""The server fails safe, in real Chromium: no traceback when the database is down, uploads only from a
signed-in admin's page (and capped), the lead's export only to the lead's browser, and signing out holds
against the Back button.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy.engine import Engine

from reviewer_app.batches.loading import load_batch
from reviewer_app.people.people import SIGNED_OUT_HERE, add_reviewer
from reviewer_app.review.assignment import assign
from tests.helpers import RATING_RUBRIC, make_records, write_batch, write_rubric
from tests.support.app_server import Server, free_port
from tests.support.chromium import CHROMIUM, CHROMIUM_ARGS
from tests.support.databases import Templates
from tests.support.review_page import settle, wait_item

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def served(
    tmp_path_factory: pytest.TempPathFactory, templates: Templates
) -> Iterator[tuple[Server, Engine, dict[str, str]]]:
    from storage.engine import get_engine

    folder = tmp_path_factory.mktemp("server")
    copy = templates.copy("sqlite", "blank", folder)
    engine = get_engine(copy.url)
    with pytest.MonkeyPatch.context() as env:
        env.setenv("BLIND_REVIEW_DATA_DIR", str(copy.data_dir))
        env.setenv("BLIND_REVIEW_MAX_UPLOAD_MB", "1")  # the server's cap, checked below
        load_batch(
            engine,
            [write_batch(folder, make_records(3, ["m-one", "m-two"]))],
            write_rubric(folder, RATING_RUBRIC.format(overlap=1)),
            name="b",
            open_now=True,
        )
        links = {name: add_reviewer(engine, name, role)[1] for name, role in (("ann", "reviewer"), ("leo", "lead"))}
        links["root"] = add_reviewer(engine, "root", "admin")[1]
        assign(engine, "b", ["ann"])
        server = Server(copy.url, copy.data_dir, folder / "serve.log")
        yield server, engine, links
        server.stop()
        engine.dispose()


def _context(chromium: Any) -> Any:
    return chromium.new_context(viewport={"width": 1280, "height": 900}, accept_downloads=True)


def _open(chromium: Any, url: str) -> tuple[Any, list[str]]:
    """A page in a fresh browser (its own cookies) at ``url``; the Streamlit session ids it is given."""
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    sessions: list[str] = []

    def frames(ws: Any) -> None:
        def received(payload: Any) -> None:
            if isinstance(payload, bytes):
                msg = ForwardMsg()
                msg.ParseFromString(payload)
                if msg.HasField("new_session") and msg.new_session.initialize.session_id:
                    sessions.append(msg.new_session.initialize.session_id)

        ws.on("framereceived", received)

    page = _context(chromium).new_page()
    page.on("websocket", frames)
    page.goto(url)
    settle(page)
    page.wait_for_function("() => document.body.innerText.length > 20")
    settle(page)
    return page, sessions


def _drawn(page: Any) -> str:
    """The page's text once a navigation has been drawn: the sign-in screen or an item, settled."""
    page.wait_for_timeout(500)  # the rerun that a history navigation asks for starts after the URL changes
    page.wait_for_function(
        "() => document.body.innerText.includes('Sign in by opening the personal link')"
        " || Array.from(document.querySelectorAll('h3')).some(h => /^Item \\w+$/.test(h.innerText.trim()))",
        timeout=30_000,
    )
    settle(page)
    page.wait_for_timeout(500)
    settle(page)
    return str(page.inner_text("body"))


_PUT = """async ([session, size]) => {
  const xsrf = (document.cookie.match(/(?:^|; )_streamlit_xsrf=([^;]*)/) || [])[1] || "";
  const form = new FormData();
  form.append("file", new Blob([new Uint8Array(size)]), "batch.jsonl");
  const r = await fetch(`/_stcore/upload_file/${session}/${crypto.randomUUID()}`,
                        {method: "PUT", body: form, headers: {"X-Xsrftoken": decodeURIComponent(xsrf)}});
  return r.status;
}"""


def test_the_upload_endpoint_takes_files_only_from_a_signed_in_admin(served: Any, chromium: Any) -> None:
    server, _engine, links = served
    visitor, visitor_sessions = _open(chromium, server.url + "/")
    assert "Sign in by opening the personal link" in visitor.inner_text("body")
    assert visitor.locator('[data-testid="stFileUploader"]').count() == 0
    # A visitor who never signed in has a live Streamlit session, which Streamlit alone would take files for.
    assert visitor.evaluate(_PUT, [visitor_sessions[-1], 1000]) == 403
    reviewer, reviewer_sessions = _open(chromium, server.link(links["ann"]))
    wait_item(reviewer)
    assert reviewer.evaluate(_PUT, [reviewer_sessions[-1], 1000]) == 403
    admin, admin_sessions = _open(chromium, server.link(links["root"]))
    admin.get_by_role("tab", name="Load a batch").click()
    admin.locator('[data-testid="stFileUploader"]').first.wait_for()
    assert admin.locator('[data-testid="stFileUploader"]').count() > 0
    assert admin.evaluate(_PUT, [admin_sessions[-1], 1000]) == 204
    assert admin.evaluate(_PUT, [admin_sessions[-1], 2 * 1024 * 1024]) == 413  # BLIND_REVIEW_MAX_UPLOAD_MB=1
    # The admin's session id is no key on its own: another browser using it is refused.
    assert visitor.evaluate(_PUT, [admin_sessions[-1], 1000]) == 403
    # No cookies at all (a script, not a browser): refused as well.
    assert httpx.put(f"{server.url}/_stcore/upload_file/{admin_sessions[-1]}/x", files={"f": b"x"}).status_code in (
        403,
        400,
    )
    # The admin's own upload through the widget goes through.
    admin.locator('[data-testid="stFileUploader"] input[type="file"]').first.set_input_files(
        files=[{"name": "batch.jsonl", "mimeType": "application/octet-stream", "buffer": b"{}\n"}]
    )
    admin.get_by_text("batch.jsonl").first.wait_for()
    settle(admin)
    assert "error" not in admin.locator('[data-testid="stFileUploader"]').first.inner_text().lower()
    for page in (visitor, reviewer, admin):
        page.context.close()


def test_the_leads_export_is_served_only_to_the_leads_browser(served: Any, chromium: Any) -> None:
    server, _engine, links = served
    lead, _ = _open(chromium, server.link(links["leo"]))
    lead.get_by_text("Progress by scenario and by reviewer, and the raw ratings").click()  # the section below
    lead.get_by_role("button", name="Prepare export").click()
    button = lead.get_by_role("button", name=re.compile(r"Download CSV \(\d+ rows\)"))
    button.wait_for()
    with lead.expect_download() as got:
        button.click()
    download = got.value
    assert download.failure() is None
    url = download.url
    assert "/media/" in url and "model-one" not in url
    assert Path(download.path()).read_text().startswith("reviewer,sample_id,model,")  # the lead got the file
    assert httpx.get(url).status_code == 404  # no browser cookie
    other, _ = _open(chromium, server.url + "/")
    assert other.evaluate("async (u) => (await fetch(u)).status", url) == 404  # another browser
    reviewer, _ = _open(chromium, server.link(links["ann"]))
    wait_item(reviewer)
    assert reviewer.evaluate("async (u) => (await fetch(u)).status", url) == 404  # a reviewer's browser
    assert lead.evaluate("async (u) => (await fetch(u)).status", url) == 200
    lead.get_by_role("button", name="Sign out", exact=True).click()
    lead.get_by_role("button", name="Yes, sign out", exact=True).click()
    lead.get_by_text("You are signed out of this browser.").wait_for()
    assert lead.evaluate("async (u) => (await fetch(u)).status", url) == 404  # signed out: no more
    for page in (lead, other, reviewer):
        page.context.close()


def test_going_back_after_signing_out_signs_nobody_in(served: Any, chromium: Any) -> None:
    server, _engine, links = served
    link = server.link(links["ann"])
    page, _ = _open(chromium, link)
    wait_item(page)
    assert "token=" not in page.url and "session=" in page.url  # the link left the address bar
    page.get_by_role("button", name="Sign out", exact=True).click()
    page.get_by_role("button", name="Yes, sign out", exact=True).click()
    page.get_by_text("You are signed out of this browser.").wait_for()
    for _ in range(2):  # Back to the session's address, then Back to the link itself
        page.go_back()
        body = _drawn(page)
        assert "Sign in by opening the personal link" in body and "Item " not in body, page.url
    page.goto(link)  # the link from the history, opened again in this browser
    page.get_by_text(SIGNED_OUT_HERE).wait_for()
    assert "Item " not in page.inner_text("body")
    # The same link on another device still works...
    phone, _ = _open(chromium, link)
    wait_item(phone)
    # ... and that device's address (its session), copied into yet another browser, signs nobody in.
    elsewhere, _ = _open(chromium, phone.url)
    elsewhere.get_by_text("belongs to a sign-in made in another browser").wait_for()
    assert "Item " not in elsewhere.inner_text("body")
    for p in (page, elsewhere, phone):
        p.context.close()


def test_a_browser_without_its_cookie_is_signed_in_nowhere(served: Any, chromium: Any) -> None:
    """Issue 33: a client without the ``blind_review_browser`` cookie (a script on the websocket, cookies
    refused) was signed in with a session bound to no browser, whose address then signed in anywhere."""
    server, _engine, links = served
    # Responses fulfilled by a route have no address Chromium can place, and its Local Network Access checks
    # then refuse the page's websocket to loopback: this browser alone runs without those checks.
    browser = chromium.browser_type.launch(
        executable_path=CHROMIUM, args=[*CHROMIUM_ARGS, "--disable-features=LocalNetworkAccessChecks"]
    )
    context = _context(browser)

    def no_cookie(route: Any) -> None:  # fetched here, so every response reaches the page without Set-Cookie
        request = route.request
        response = httpx.request(request.method, request.url, content=request.post_data_buffer)
        skip = {"set-cookie", "content-encoding", "content-length", "transfer-encoding"}
        headers = {k: v for k, v in response.headers.items() if k.lower() not in skip}
        route.fulfill(status=response.status_code, headers=headers, body=response.content)

    context.route("**/*", no_cookie)
    page = context.new_page()
    page.goto(server.link(links["ann"]))
    page.get_by_text("did not send the cookie that ties a sign-in to it").wait_for()
    settle(page)
    assert context.cookies() == [] and "session=" not in page.url
    assert "Item " not in page.inner_text("body")
    browser.close()


def test_an_unreachable_database_shows_one_clear_message(tmp_path: Path, chromium: Any) -> None:
    port = free_port()  # nobody listens: the database is down
    url = f"postgresql+psycopg://blind:s3cret@127.0.0.1:{port}/reviewdb"
    server = Server(url, tmp_path / "data", tmp_path / "serve.log")
    try:
        page = _context(chromium).new_page()
        page.goto(f"{server.url}/?token=some-link")
        page.get_by_text("Something went wrong on our side").wait_for(timeout=30_000)
        settle(page)
        html = page.content()
        for secret in (str(port), "127.0.0.1:" + str(port), "reviewdb", "s3cret", "Traceback", "psycopg", "Error:"):
            assert secret not in html, secret
        error_id = re.search(r"error id ([0-9a-f]+)", page.inner_text("body"))
        assert error_id is not None
        page.context.close()
    finally:
        server.stop()
    assert f"unexpected error {error_id.group(1)}" in (tmp_path / "serve.log").read_text()  # the details
