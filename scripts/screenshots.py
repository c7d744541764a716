"""Retake the README screenshots from the demo, in headless Chromium.

    .venv/bin/python scripts/screenshots.py        # writes the PNGs below into docs/img/

* ``reviewer.png``: the reviewer page on a laptop (1440x900), on the demo's long answer (several screens):
  the judgement stays beside the answer while it scrolls, so the shot is taken scrolled half-way down.
* ``reviewer-phone.png``: the same page on a phone (390x844), stacked.
* ``lead.png``: the lead's results, top of the page (headline, progress, first scenario's charts).
* ``lead-comments.png``: the results page's Comments tab (what reviewers wrote and why they could not judge).
* ``lead-checks.png``: the "code" scenario's automatic checks (who passes less often, pass-rate charts).
* ``lead-production.png``: the Production tab (panel against production, then the monitor).

Starts `blind-review demo` on a free port with a throw-away data directory, signs in through the printed
links, and photographs the pages (Debian's /usr/bin/chromium through Playwright; nothing is downloaded). The
demo reviewer answers items with the keyboard until the long answer comes up (it is in the demo reviewer's
share of the demo batch).
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.support.app_server import free_port  # noqa: E402
from tests.support.chromium import CHROMIUM, CHROMIUM_ARGS  # noqa: E402
from tests.support.review_page import answer_with_keys, groups, next_label, wait_item  # noqa: E402

IMG = ROOT / "docs" / "img"
SHOTS = (
    "reviewer.png",
    "reviewer-phone.png",
    "lead.png",
    "lead-comments.png",
    "lead-checks.png",
    "lead-production.png",
)
LONG_ANSWER = "The short version"  # a heading only the demo's long answer has (reviewer_app/demo/make_files.py)
_TO_TOP = """() => { const m = document.querySelector('[data-testid="stMain"]');
  [m, document.scrollingElement].forEach(el => { if (el) el.scrollTop = 0; }); }"""


def _start_demo(data: str) -> tuple[subprocess.Popen[str], dict[str, str], int]:
    port = free_port()
    env = dict(os.environ, BLIND_REVIEW_DATA_DIR=data, BLIND_REVIEW_DATABASE_URL="")
    proc = subprocess.Popen(
        [sys.executable, "-m", "reviewer_app.cli", "demo", "--port", str(port)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    assert proc.stdout is not None
    links: dict[str, str] = {}
    deadline = time.time() + 120
    while time.time() < deadline and "demo-admin" not in links:
        line = proc.stdout.readline()
        m = re.search(r"(demo-\w+)\s+(http\S+)", line)
        if m:
            links[m.group(1)] = m.group(2)
    time.sleep(3)
    return proc, links, port


def _to_long_answer(page: Any, limit: int = 120) -> None:
    """Answer items with the keyboard until the long answer is on the page."""
    label = wait_item(page)
    for _ in range(limit):
        if LONG_ANSWER in page.inner_text("body"):
            return
        groups(page).first.wait_for()  # the questions can be drawn a moment after the heading
        answer_with_keys(page, [0] * groups(page).count())
        label = next_label(page, label)
        if not label:
            break
    raise SystemExit("the demo reviewer's share has no long answer: regenerate the demo or raise the limit")


def main() -> None:
    with tempfile.TemporaryDirectory() as data:
        proc, links, _port = _start_demo(data)
        try:
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
                laptop = browser.new_context(viewport={"width": 1440, "height": 900})
                page = laptop.new_page()
                page.goto(links["demo-reviewer"])
                _to_long_answer(page)
                page.wait_for_timeout(800)
                page.mouse.move(600, 600)  # over the answers, not the sidebar
                page.mouse.wheel(0, 2200)  # half-way down the answer: the judgement is still beside it
                page.wait_for_timeout(800)
                page.screenshot(path=str(IMG / "reviewer.png"))
                # The same signed-in tab on a phone-sized window (a sign-in belongs to its browser).
                page.set_viewport_size({"width": 390, "height": 844})
                page.wait_for_timeout(1500)
                page.evaluate(_TO_TOP)
                page.wait_for_timeout(500)
                page.screenshot(path=str(IMG / "reviewer-phone.png"))

                lead = browser.new_context(viewport={"width": 1300, "height": 1500}).new_page()
                lead.goto(links["demo-lead"])
                lead.get_by_text("Progress & results").first.click()
                lead.get_by_text("Weight sensitivity").first.wait_for(timeout=120_000)
                lead.wait_for_timeout(3000)
                lead.screenshot(path=str(IMG / "lead.png"))
                lead.get_by_role("tab", name=re.compile(r"^Comments")).click()
                lead.wait_for_timeout(1500)
                for n in range(2):  # open the first two groups: what reviewers wrote, not only how much
                    lead.locator('[data-testid="stExpander"] summary').filter(has_text=" answers: ").nth(n).click()
                    lead.wait_for_timeout(500)
                lead.get_by_role("tab", name=re.compile(r"^Comments")).scroll_into_view_if_needed()
                lead.wait_for_timeout(500)
                lead.screenshot(path=str(IMG / "lead-comments.png"))
                lead.get_by_role("tab", name="code", exact=True).click()
                checks = lead.get_by_text("Automatic checks", exact=False).first
                checks.wait_for(timeout=60_000)
                checks.scroll_into_view_if_needed()
                lead.wait_for_timeout(1500)
                lead.screenshot(path=str(IMG / "lead-checks.png"))
                lead.get_by_role("tab", name="Production", exact=True).click()
                lead.get_by_text("they disagree", exact=False).or_(lead.get_by_text("also rank")).first.wait_for(
                    timeout=120_000
                )
                lead.get_by_role("tab", name="Production", exact=True).scroll_into_view_if_needed()
                lead.wait_for_timeout(3000)
                lead.screenshot(path=str(IMG / "lead-production.png"))
                browser.close()
        finally:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=20)
    print("wrote " + ", ".join(f"docs/img/{n}" for n in (*SHOTS,)))


if __name__ == "__main__":
    main()
