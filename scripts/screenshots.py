"""Retake the README screenshots from the demo: the reviewer page and the lead page, in headless Chromium.

    .venv/bin/python scripts/screenshots.py        # writes docs/img/reviewer.png and docs/img/lead.png

Starts `blind-review demo` on a free port with a throw-away data directory, signs in through the printed
links, and photographs the pages (Debian's /usr/bin/chromium through Playwright; nothing is downloaded).
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

from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.support.app_server import free_port  # noqa: E402
from tests.support.chromium import CHROMIUM, CHROMIUM_ARGS  # noqa: E402


def main() -> None:
    port = free_port()
    with tempfile.TemporaryDirectory() as data:
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
        try:
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
                page = browser.new_page(viewport={"width": 1300, "height": 1900})
                page.goto(links["demo-reviewer"])
                page.get_by_text("Submit and next").wait_for(timeout=60_000)
                page.wait_for_timeout(1500)
                page.screenshot(path=str(ROOT / "docs" / "img" / "reviewer.png"))
                page = browser.new_page(viewport={"width": 1300, "height": 2600})
                page.goto(links["demo-lead"])
                page.get_by_text("Progress & results").first.click()
                page.get_by_text("Weight sensitivity").first.wait_for(timeout=120_000)
                page.wait_for_timeout(3000)
                page.screenshot(path=str(ROOT / "docs" / "img" / "lead.png"))
                browser.close()
        finally:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=20)
    print("wrote docs/img/reviewer.png and docs/img/lead.png")


if __name__ == "__main__":
    main()
