"""A webhook receiver on loopback for the tests: a real HTTP server in a thread that records every request
(headers as received, body bytes) and answers with the statuses it is given, in turn (then 200)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: bytes


@dataclass
class Receiver:
    url: str
    statuses: list[int] = field(default_factory=list)  # answered in turn; 200 once they run out
    received: list[Received] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def bodies(self) -> list[bytes]:
        with self.lock:
            return [r.body for r in self.received]


@contextmanager
def running_receiver(statuses: list[int] | None = None) -> Iterator[Receiver]:
    receiver = Receiver(url="", statuses=list(statuses or []))

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - the http.server name
            body = self.rfile.read(int(self.headers.get("content-length", "0")))
            with receiver.lock:
                receiver.received.append(Received(self.path, dict(self.headers.items()), body))
                status = receiver.statuses.pop(0) if receiver.statuses else 200
            self.send_response(status)
            self.send_header("content-length", "2")
            self.end_headers()
            self.wfile.write(b"ok")

        def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - quiet
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    receiver.url = f"http://127.0.0.1:{server.server_address[1]}/hook"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield receiver
    finally:
        server.shutdown()
        server.server_close()
