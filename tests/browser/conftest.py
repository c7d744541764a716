"""Real headless Chromium (Debian's /usr/bin/chromium, never a downloaded browser) against `blind-review serve`."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.browser.chromium import CHROMIUM, CHROMIUM_ARGS, free_port


class Server:
    """A `blind-review serve` subprocess on a free port."""

    def __init__(self, db_url: str, data_dir: Path, log: Path) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        env = {
            **os.environ,
            "BLIND_REVIEW_DATABASE_URL": db_url,
            "BLIND_REVIEW_DATA_DIR": str(data_dir),
            "BLIND_REVIEW_PUBLIC_URL": self.url,
        }
        self._log = log.open("w")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "reviewer_app.cli", "serve", "--port", str(self.port)],
            env=env,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"serve exited: {log.read_text()}")
            try:
                if httpx.get(f"{self.url}/_stcore/health", timeout=1).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.3)
        raise RuntimeError(f"serve did not come up: {log.read_text()}")

    def link(self, link: str) -> str:
        """A printed sign-in link pointed at this server."""
        return f"{self.url}/?token={link.split('token=')[-1]}"

    def stop(self) -> None:
        """Stop the server and anything it started (its own process group)."""
        try:
            os.killpg(self.proc.pid, signal.SIGTERM)
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=10)
        except ProcessLookupError:
            pass
        self._log.close()


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
