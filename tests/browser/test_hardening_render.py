"""Untrusted text in real Chromium: shown as its author wrote it, and never a request to another origin.

Every known way past the old escaping (an image in a code span, in a ``~~~`` fence, after an unterminated
fence; raw HTML; a reference-style image) sits in outputs, prompts, references, criteria, instructions,
scenario, batch and reviewer names. An "outside" web server on another loopback address (another origin)
counts the requests it gets: it must get none, the page must make no request to anywhere but its own origin
(fonts included), and the Content-Security-Policy must have had nothing to block, because the renderer
never asks. A last check shows that the policy would block such a request if one were ever made.
"""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from reviewer_app.batches.loading import load_batch
from reviewer_app.people.people import add_reviewer
from reviewer_app.review.assignment import assign
from reviewer_app.ui.components.safe_text import WORD_JOINER
from tests.helpers import write_batch, write_rubric
from tests.support.app_server import Server, free_port
from tests.support.databases import Templates
from tests.support.review_page import answer_with_mouse, next_label, settle, submit, wait_item

pytestmark = pytest.mark.browser

OUTSIDE_HOST = "127.0.0.2"  # another origin, on this machine


class _Outside:
    """A web server on another origin that counts every request it gets."""

    def __init__(self) -> None:
        hits: list[str] = []
        self.hits = hits

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - the standard library's name
                hits.append(self.path)
                self.send_response(200)
                self.send_header("Content-Type", "image/png")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.port = free_port()
        self.server = http.server.ThreadingHTTPServer((OUTSIDE_HOST, self.port), Handler)
        self.url = f"http://{OUTSIDE_HOST}:{self.port}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def bypasses(x: str, where: str) -> list[str]:
    """Texts that tried to load ``x/<where>-<n>.png`` past the old escaping, one per sample."""
    return [
        f"Code span: `![p]({x}/{where}-1.png)` and a plain one ![p]({x}/{where}-2.png)",
        f'~~~\n![p]({x}/{where}-3.png)\n~~~\n\nRaw HTML: <img src="{x}/{where}-4.png"> '
        f'<link rel="stylesheet" href="{x}/{where}-5.css"> <iframe src="{x}/{where}-6"></iframe>',
        f"[![p]({x}/{where}-7.png)]({x}/)\n\n![p][r]\n\n[r]: {x}/{where}-8.png\n\n"
        f'<video src="{x}/{where}-9.mp4" autoplay></video> <style>@import url({x}/{where}-10.css);</style>',
        f"Costs $5 vs $10, :red[red] :material/home: :smile:\n\n    <b>indented</b>\n\n"
        f'<a href="{x}/">an HTML link</a>\n\nUnterminated fence:\n```\n![p]({x}/{where}-11.png)',
    ]


SHOWN_AS_WRITTEN = ["$5 vs $10", ":red[red]", ":material/home:", ":smile:", "<b>indented</b>", '<a href="']


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory, templates: Templates) -> Iterator[tuple[Server, _Outside, str]]:
    from storage.engine import get_engine

    outside = _Outside()
    x = outside.url
    folder = tmp_path_factory.mktemp("hostile")
    copy = templates.copy("sqlite", "blank", folder)
    engine = get_engine(copy.url)
    with pytest.MonkeyPatch.context() as env:
        env.setenv("BLIND_REVIEW_DATA_DIR", str(copy.data_dir))
        outputs, prompts = bypasses(x, "output"), bypasses(x, "prompt")
        references, criteria = bypasses(x, "reference"), bypasses(x, "criteria")
        records = [
            {
                "sample_id": f"s{i}",
                "scenario": f"![s]({x}/scenario.png) $x$ :blue[s]",
                "prompt": prompts[i] if i % 2 else [{"role": "user", "content": prompts[i]}],
                "model": "m-one",
                "output": outputs[i],
                "reference": references[i],
                "criteria": criteria[i],
            }
            for i in range(len(outputs))
        ]
        rubric = (
            'mode = "rating"\noverlap = 1\nseed = 3\nshow_reference = true\nshow_criteria = true\n'
            f'instructions = """{bypasses(x, "instructions")[3]}"""\n'
            '[[dimensions]]\nname = "correctness"\ndescription = "Right?"\nscale = "binary"\nlevel = "nominal"\n'
        )
        second = [{**r, "sample_id": r["sample_id"] + "-2"} for r in records]
        for name, recs in ((f"batch ![b]({x}/batch.png) $1$", records), ("second batch", second)):
            load_batch(
                engine, [write_batch(folder / name[:6], recs)], write_rubric(folder, rubric), name=name, open_now=True
            )
        link = add_reviewer(engine, f"eve ![n]({x}/name.png) $y$ :red[eve] :material/home: :smile: *a*", "reviewer")[1]
        for name in (f"batch ![b]({x}/batch.png) $1$", "second batch"):
            assign(engine, name)
        server = Server(copy.url, copy.data_dir, folder / "serve.log")
        yield server, outside, server.link(link)
        server.stop()
        engine.dispose()
        outside.close()


_WATCH_CSP = """
window.__cspBlocked = [];
document.addEventListener('securitypolicyviolation', (e) => window.__cspBlocked.push(e.blockedURI));
"""


def test_no_request_leaves_the_app_origin_whatever_the_text(hostile: Any, chromium: Any) -> None:
    server, outside, link = hostile
    context = chromium.new_context(viewport={"width": 1280, "height": 900})
    context.add_init_script(_WATCH_CSP)
    requests: list[str] = []
    context.on("request", lambda r: requests.append(r.url))
    page = context.new_page()
    page.goto(link)
    label = wait_item(page)
    bodies = []
    while label and len(bodies) < 4:  # the first batch's four items (the second is left for the tests below)
        page.wait_for_timeout(300)  # give any image or stylesheet the time to be asked for
        bodies.append(page.inner_text("body"))
        answer_with_mouse(page, [0])
        submit(page)
        label = next_label(page, label)
    assert len(bodies) == 4
    shown = "\n".join(bodies)
    for text in SHOWN_AS_WRITTEN:
        assert text in shown, f"{text!r} is not shown as written"
    assert f"[image not loaded: p] ({outside.url}/output-2.png)" in shown  # a placeholder names the image
    assert f"`![p]({outside.url}/output-1.png)`" not in shown  # a code span shows its content, not backticks
    assert f"![p]({outside.url}/output-1.png)" in shown and f"![p]({outside.url}/output-11.png)" in shown
    sidebar = page.inner_text('[data-testid="stSidebar"]').replace(WORD_JOINER, "")
    assert f"eve ![n]({outside.url}/name.png) $y$ :red[eve] :material/home: :smile: *a*" in sidebar
    assert f"![s]({outside.url}/scenario.png) $x$ :blue[s] · new" in shown.replace(WORD_JOINER, "")  # the header
    foreign = [u for u in requests if not u.startswith((server.url + "/", "data:", "blob:", "about:"))]
    assert foreign == [], f"requests to other origins: {foreign}"
    assert outside.hits == []
    assert page.evaluate("() => window.__cspBlocked") == []  # nothing even tried
    assert any("/static/media/SourceSans" in u for u in requests)  # the fonts come from the app itself
    # The policy itself: a request to another origin made by a script is refused by the browser.
    page.evaluate(f"() => {{ const i = new Image(); i.src = '{outside.url}/forced.png'; document.body.append(i); }}")
    page.wait_for_function("() => window.__cspBlocked.length > 0", timeout=5000)
    assert outside.hits == []
    context.close()


def test_the_response_headers_forbid_other_origins(hostile: Any) -> None:
    import httpx

    server, _outside, _link = hostile
    answer = httpx.get(server.url + "/")
    policy = answer.headers["content-security-policy"]
    for directive in ("default-src 'self'", "img-src 'self' data: blob:", "connect-src 'self'", "font-src 'self'"):
        assert directive in policy
    assert "http" not in policy  # no other origin named anywhere
    assert answer.headers["referrer-policy"] == "no-referrer"


def test_raw_text_switch_shows_the_characters(hostile: Any, chromium: Any) -> None:
    server, outside, link = hostile
    page = chromium.new_context(viewport={"width": 1280, "height": 900}).new_page()
    page.goto(link)
    wait_item(page)
    assert page.locator("pre.br-raw").count() == 0
    page.get_by_text("Show raw text").click()
    settle(page)
    raw = page.locator("pre.br-raw").first
    raw.wait_for()
    text = raw.inner_text()
    # The answer's own characters: Markdown syntax and all, as in the batch file.
    assert f"![p]({outside.url}/output-" in text and any(s in text for s in ("`![p]", "~~~", "[![p]", "```"))
    page.get_by_text("Show raw text").click()
    raw.wait_for(state="detached")  # rendered again
    assert outside.hits == []
    page.context.close()


def test_rubric_labels_load_nothing(tmp_path: Path, templates: Templates, chromium: Any) -> None:
    from storage.engine import get_engine

    outside = _Outside()
    x = outside.url
    copy = templates.copy("sqlite", "blank", tmp_path)
    engine = get_engine(copy.url)
    with pytest.MonkeyPatch.context() as env:
        env.setenv("BLIND_REVIEW_DATA_DIR", str(copy.data_dir))
        rubric = (
            'mode = "rating"\noverlap = 1\n[[dimensions]]\nname = "correctness"\n'
            f'description = "![d]({x}/description.png) $a$"\nscale = "likert"\nmin = 1\nmax = 3\n'
            f'labels = {{ 1 = "![l]({x}/label.png)", 3 = ":red[best] $3$" }}\nlevel = "ordinal"\n'
        )
        record = {"sample_id": "s", "scenario": "qa", "prompt": "Q?", "model": "m", "output": "A."}
        load_batch(engine, [write_batch(tmp_path, [record])], write_rubric(tmp_path, rubric), name="b", open_now=True)
        link = add_reviewer(engine, "eve")[1]
        server = Server(copy.url, copy.data_dir, tmp_path / "serve.log")
        try:
            context = chromium.new_context()
            context.add_init_script(_WATCH_CSP)
            page = context.new_page()
            page.goto(server.link(link))
            wait_item(page)
            page.wait_for_timeout(500)
            form = page.inner_text(".st-key-judgement").replace(WORD_JOINER, "")
            blocked = page.evaluate("() => window.__cspBlocked")
            context.close()
        finally:
            server.stop()
            engine.dispose()
            outside.close()
    assert blocked == [] and outside.hits == []
    assert f"![d]({x}/description.png) $a$" in form and ":red[best] $3$" in form
