"""`blind-review serve` in a subprocess on a free port, for the browser tests, benchmarks and screenshots."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx


def free_port() -> int:
    """A TCP port nobody listens on right now (the OS picks it)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Server:
    """A `blind-review serve` subprocess on a free port, serving the database at ``db_url``.

    Starts at construction and, unless ``wait=False``, returns once it is ready (see :meth:`wait_ready`), so
    several servers can start side by side; :meth:`stop` ends it and anything it started.
    """

    def __init__(self, db_url: str, data_dir: Path, log: Path, *, wait: bool = True) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        env = {
            **os.environ,
            "BLIND_REVIEW_DATABASE_URL": db_url,
            "BLIND_REVIEW_DATA_DIR": str(data_dir),
            "BLIND_REVIEW_PUBLIC_URL": self.url,
        }
        self._log_path = log
        self._log = log.open("w")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "reviewer_app.cli", "serve", "--port", str(self.port)],
            env=env,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        if wait:
            self.wait_ready()

    def wait_ready(self, timeout: float = 60) -> None:
        """Return once ``/_stcore/health`` answers; RuntimeError with the server's log if it exits first or
        is not up within ``timeout`` seconds (a liveness limit, not a speed check)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                self._log.close()
                raise RuntimeError(f"serve exited: {self._log_path.read_text()}")
            try:
                if httpx.get(f"{self.url}/_stcore/health", timeout=1).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        self.stop()
        raise RuntimeError(f"serve did not come up: {self._log_path.read_text()}")

    def link(self, link: str) -> str:
        """A printed sign-in link pointed at this server."""
        return f"{self.url}/?token={link.split('token=')[-1]}"

    def terminate(self) -> None:
        """Ask the server and anything it started (its own process group) to stop; :meth:`stop` waits."""
        try:
            os.killpg(self.proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass

    def stop(self) -> None:
        """Stop the server and anything it started, and wait for it (SIGKILL after 10 s)."""
        try:
            self.terminate()
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=10)
        except ProcessLookupError:
            pass
        self._log.close()
