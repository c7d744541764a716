"""The pages through the real app script (AppTest): untrusted text rendered by our renderer, a raw-text
switch, no upload widget before an admin signs in, one clear message instead of a traceback, and sign-in
sessions that signing out really ends."""

from __future__ import annotations

import html
import logging
from pathlib import Path

import pytest
from sqlalchemy.engine import Engine

from reviewer_app.batches.loading import load_batch
from reviewer_app.people.people import ENDED_EVERYWHERE, SIGNED_OUT_HERE, add_reviewer
from reviewer_app.review.assignment import assign
from reviewer_app.ui.components.failure import MESSAGE
from reviewer_app.ui.components.safe_text import raw_html
from tests.helpers import RATING_RUBRIC, write_batch, write_rubric
from tests.support.app_server import free_port
from tests.support.apptest import app_for, sent_text

HOSTILE = (
    'Costs $5 vs $10 :red[red] :material/home: <script>alert("pwned")</script>\n\n'
    "![pixel](http://tracker.invalid/p.png)\n\n    <b>indented</b>\n"
)


@pytest.fixture
def reviewer_link(engine: Engine, tmp_path: Path) -> str:
    record = {"sample_id": "s0", "scenario": "qa", "prompt": "Q?", "model": "m-one", "output": HOSTILE}
    load_batch(
        engine,
        [write_batch(tmp_path, [record])],
        write_rubric(tmp_path, RATING_RUBRIC.format(overlap=1)),
        name="b",
        open_now=True,
    )
    link = add_reviewer(engine, "ann")[1]
    assign(engine, "b")
    return link


def _errors(at) -> list[str]:  # type: ignore[no-untyped-def]
    return [e.value for e in at.error]


def test_an_output_is_rendered_as_written_and_its_raw_text_on_demand(engine: Engine, reviewer_link: str) -> None:
    at = app_for(reviewer_link)
    at.run()
    assert not at.exception
    page = sent_text(at)
    # Our renderer's HTML, not Streamlit's Markdown: no LaTeX, no colour directive, no icon, no image.
    assert "$5 vs $10 :red[red] :material/home: &lt;script&gt;" in page
    assert "[image not loaded: pixel] (http://tracker.invalid/p.png)" in page
    assert "<pre><code>&lt;b&gt;indented&lt;/b&gt;" in page
    assert not any("$5" in m.value for m in at.markdown)
    bodies = [e.proto.body for e in at.get("html")]
    assert any("$5 vs $10" in b for b in bodies)
    assert not any("<img" in b or "<script" in b for b in bodies)
    assert not any(b.startswith('<pre class="br-raw">') for b in bodies)
    toggle = next(t for t in at.toggle if t.label == "Show raw text")
    toggle.set_value(True)
    at.run()
    raw = [e.proto.body for e in at.get("html") if e.proto.body.startswith('<pre class="br-raw">')]
    assert raw == [raw_html(HOSTILE)] and html.unescape(raw[0]).endswith("<b>indented</b>\n</pre>")
    assert not any("$5" in e.proto.body for e in at.get("html") if e.proto.body.startswith('<div class="br-md">'))


def test_no_upload_widget_unless_an_admin_is_signed_in(engine: Engine, reviewer_link: str) -> None:
    lead_link = add_reviewer(engine, "leo", "lead")[1]
    for link in (None, "not-a-token", reviewer_link, lead_link):
        at = app_for(link)
        at.run()
        assert not at.exception
        assert not at.get("file_uploader"), f"an upload widget for {link!r}"
    admin = app_for(add_reviewer(engine, "root", "admin")[1])
    admin.run()
    assert admin.get("file_uploader")


def test_an_unreachable_database_is_one_clear_message(
    engine: Engine, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    port = free_port()  # nobody listens there
    monkeypatch.setenv("BLIND_REVIEW_DATABASE_URL", f"postgresql://blind:s3cret@127.0.0.1:{port}/reviewdb")
    at = app_for("any-token")
    with caplog.at_level(logging.ERROR, logger="reviewer_app"):
        at.run()
    assert not at.exception  # Streamlit's exception box (with its traceback) is not drawn
    (shown,) = _errors(at)
    assert shown.startswith(MESSAGE.split("{")[0])
    page = sent_text(at)
    for secret in (str(port), "127.0.0.1", "reviewdb", "s3cret", "Traceback", "psycopg", "OperationalError"):
        assert secret not in page
    error_id = shown.split("error id ")[1].rstrip(").")
    assert any(error_id in r.getMessage() and r.exc_info for r in caplog.records)  # the details are logged


def test_a_bug_in_a_page_is_one_clear_message(
    engine: Engine, reviewer_link: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("internal detail /srv/secret/path")

    monkeypatch.setattr("reviewer_app.review.reviews.next_item", broken)
    at = app_for(reviewer_link)
    at.run()
    assert not at.exception
    assert _errors(at)[0].startswith("Something went wrong on our side; your saved answers are safe.")
    assert "/srv/secret/path" not in sent_text(at) and "RuntimeError" not in sent_text(at)


def test_the_link_leaves_the_address_bar_for_a_session(engine: Engine, reviewer_link: str) -> None:
    at = app_for(reviewer_link)
    at.run()
    assert "token" not in at.query_params and at.query_params.get("session")
    session = at.query_params["session"]
    at.run()  # a click: the session keeps the person signed in
    assert at.query_params["session"] == session and at.radio
    assert session not in reviewer_link and reviewer_link.split("token=")[-1] not in sent_text(at)


def test_going_back_after_signing_out_signs_nobody_in(engine: Engine, reviewer_link: str) -> None:
    at = app_for(reviewer_link)
    at.run()
    session = at.query_params["session"]
    next(b for b in at.sidebar.button if b.label == "Sign out").click()
    at.run()
    next(b for b in at.sidebar.button if b.label == "Yes, sign out").click()
    at.run()
    assert [s.value for s in at.success] == ["You are signed out of this browser."]
    assert not at.query_params and not at.radio
    # Back to the session's address, then Back to the link itself: refused both times.
    at.query_params["session"] = session
    at.run()
    assert _errors(at) == [SIGNED_OUT_HERE] and not at.radio
    at.query_params.clear()
    at.query_params["token"] = reviewer_link.split("token=")[-1]
    at.run()
    assert _errors(at) == [SIGNED_OUT_HERE] and not at.radio
    # Another device (another tab without this one's memory) still signs in with the same link.
    other = app_for(reviewer_link)
    other.run()
    assert other.radio and not _errors(other)


def test_signing_out_everywhere_ends_the_other_devices(engine: Engine, reviewer_link: str) -> None:
    laptop, phone = app_for(reviewer_link), app_for(reviewer_link)
    laptop.run()
    phone.run()
    assert laptop.radio and phone.radio
    next(b for b in phone.sidebar.button if b.label == "Sign out on every device").click()
    phone.run()
    next(b for b in phone.sidebar.button if b.label == "Yes, sign out everywhere").click()
    phone.run()
    assert [s.value for s in phone.success] == ["You are signed out on every device."]
    laptop.run()
    assert not laptop.radio and _errors(laptop) == [ENDED_EVERYWHERE]


def test_a_corrupt_database_file_is_one_clear_message(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    broken = tmp_path / "broken.db"
    broken.write_bytes(b"this is not an SQLite database at all" * 100)
    monkeypatch.setenv("BLIND_REVIEW_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("BLIND_REVIEW_DATABASE_URL", f"sqlite:///{broken}")
    at = app_for("any-token")
    at.run()
    assert not at.exception
    assert _errors(at)[0].startswith("Something went wrong on our side")
    assert str(tmp_path) not in sent_text(at) and "DatabaseError" not in sent_text(at)
