"""A real, controllable OpenAI-compatible chat completions server on 127.0.0.1, for tests and benchmarks.

It speaks just enough HTTP/1.1 (keep-alive, chunked transfer) to stream server-sent events the way vLLM,
llama.cpp and hosted APIs do, so the client under test runs its real network path. Behaviour is driven by
:class:`Behaviour` (delays, token count) and a list of :class:`Rule` (answer 429/500, drop the connection
mid-stream), set from Python or with ``POST /_control``. Every request is recorded (headers and body) so a
test can check what the client sent.

Run it by hand to try ``blind-review generate`` without a GPU::

    python -m tests.support.fake_openai --port 8011 --first-token-delay-ms 50
    blind-review generate samples.jsonl --model fake=http://127.0.0.1:8011/v1 --out batch.jsonl
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import ssl
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from typing import Any

import orjson

_REASONS = {
    200: "OK",
    400: "Bad Request",
    401: "Unauthorized",
    404: "Not Found",
    429: "Too Many Requests",
    500: "Internal Server Error",
    503: "Service Unavailable",
}


@dataclass
class Rule:
    """One fault to inject. ``match`` is a substring of the request's message text (None: every request);
    ``times`` how many matching requests it applies to (None: all of them)."""

    status: int | None = None  # answer with this HTTP status and an OpenAI-style error body
    drop_after_tokens: int | None = None  # or: stream this many tokens, then close the socket mid-stream
    match: str | None = None
    times: int | None = None
    retry_after: float | None = None  # Retry-After header on an error answer
    message: str = "injected fault"


@dataclass
class Behaviour:
    """How a healthy answer is produced: delays in milliseconds, answer length in tokens."""

    first_token_delay_ms: float = 0.0
    token_delay_ms: float = 0.0
    tokens: int = 8
    # Some older servers reject stream_options; set this to answer 400 when it is present.
    reject_stream_options: bool = False
    # Servers without structured outputs refuse response_format; set this to answer 400 when it is present.
    reject_response_format: bool = False
    # Close the connection after each answer without saying so (no "connection: close"), as a server does
    # when its keep-alive time runs out just as the client reuses the connection.
    close_after_answer: bool = False
    rules: list[Rule] = field(default_factory=list)
    # The answer's text from the request (a judge that reads the prompt: tests/support/fake_judge.py), streamed
    # in pieces of a few characters; None: the deterministic filler of ``tokens`` tokens.
    reply: Callable[[dict[str, Any]], str] | None = field(default=None, repr=False)


@dataclass
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]
    body: dict[str, Any] | None
    received_at: float
    connection: int = 0  # the client's port: equal for requests that came over one kept-alive connection


def _message_text(body: dict[str, Any]) -> str:
    parts: list[str] = []
    for message in body.get("messages") or []:
        content = message.get("content")
        if isinstance(content, str):
            parts.append(content)
        elif isinstance(content, list):
            parts += [p.get("text", "") for p in content if isinstance(p, dict) and p.get("type") == "text"]
    return "\n".join(parts)


def _answer_tokens(body: dict[str, Any], count: int, behaviour: Behaviour | None = None) -> list[str]:
    """A deterministic answer that depends on the prompt and the model, so outputs can be told apart (or the
    behaviour's ``reply``, cut in pieces of 6 characters: then ``count`` does not apply)."""
    if behaviour is not None and behaviour.reply is not None:
        text = behaviour.reply(body)
        return [text[i : i + 6] for i in range(0, len(text), 6)] or [""]
    words = _message_text(body).split()[:4] or ["nothing"]
    seed = f"{body.get('model', '')}:{'-'.join(words)}"
    return [f"{seed} " if i == 0 else f"tok{i} " for i in range(count)]


class FakeOpenAIServer:
    """The server; use :func:`running_server` for a context-managed instance on a free port."""

    def __init__(self, behaviour: Behaviour | None = None, *, record: bool = True) -> None:
        self.behaviour = behaviour or Behaviour()
        self.record = record  # keep every request in ``requests`` (tests read them; a long run would grow)
        self.requests: list[RecordedRequest] = []
        self._lock = threading.Lock()
        self._server: asyncio.base_events.Server | None = None
        self.port = 0
        self.scheme = "http"

    # -- control -----------------------------------------------------------------------------------------
    def set_behaviour(self, behaviour: Behaviour) -> None:
        with self._lock:
            self.behaviour = behaviour

    def completions(self) -> list[RecordedRequest]:
        """Requests to the chat completions endpoint, in arrival order."""
        with self._lock:
            return [r for r in self.requests if r.path.endswith("/chat/completions")]

    def _pick_rule(self, body: dict[str, Any]) -> Rule | None:
        text = _message_text(body)
        with self._lock:
            for rule in self.behaviour.rules:
                if rule.match is not None and rule.match not in text:
                    continue
                if rule.times is not None:
                    if rule.times <= 0:
                        continue
                    rule.times -= 1
                return rule
        return None

    # -- serving -----------------------------------------------------------------------------------------
    async def start(self, host: str = "127.0.0.1", port: int = 0, ssl_context: ssl.SSLContext | None = None) -> None:
        """Listen on ``host:port`` (0: a free port), over TLS with ``ssl_context`` if given."""
        self._server = await asyncio.start_server(self._handle, host, port, backlog=1024, ssl=ssl_context)
        self.port = self._server.sockets[0].getsockname()[1]
        self.scheme = "http" if ssl_context is None else "https"

    @property
    def base_url(self) -> str:
        """The OpenAI-style base URL to give a client, e.g. ``http://127.0.0.1:8011/v1``."""
        return f"{self.scheme}://127.0.0.1:{self.port}/v1"

    async def serve_forever(self) -> None:
        assert self._server is not None
        async with self._server:
            await self._server.serve_forever()

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        peer = writer.get_extra_info("peername")
        connection = peer[1] if isinstance(peer, tuple) and len(peer) > 1 else 0
        try:
            while True:
                try:
                    head = await reader.readuntil(b"\r\n\r\n")
                except asyncio.IncompleteReadError:
                    return
                request_line, *lines = head[:-4].decode("latin-1").split("\r\n")
                method, path, _ = request_line.split(" ", 2)
                headers: dict[str, str] = {}
                for line in lines:
                    name, _, value = line.partition(":")
                    headers[name.strip().lower()] = value.strip()
                raw = await reader.readexactly(int(headers.get("content-length", "0") or 0))
                body = orjson.loads(raw) if raw else None
                if self.record:
                    with self._lock:
                        self.requests.append(
                            RecordedRequest(method, path, headers, body, time.perf_counter(), connection)
                        )
                keep_open = await self._route(method, path, body, writer)
                if not keep_open:
                    return
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError):
            return
        finally:
            writer.close()

    async def _send(
        self, writer: asyncio.StreamWriter, status: int, payload: Any, extra: dict[str, str] | None = None
    ) -> None:
        data = json.dumps(payload).encode()
        head = [
            f"HTTP/1.1 {status} {_REASONS.get(status, 'Error')}",
            "content-type: application/json",
            f"content-length: {len(data)}",
        ] + [f"{k}: {v}" for k, v in (extra or {}).items()]
        writer.write(("\r\n".join(head) + "\r\n\r\n").encode() + data)
        await writer.drain()

    async def _route(self, method: str, path: str, body: dict[str, Any] | None, writer: asyncio.StreamWriter) -> bool:
        if path == "/_control" and method == "POST" and body is not None:
            rules = [Rule(**r) for r in body.pop("rules", [])]
            self.set_behaviour(Behaviour(**body, rules=rules))
            await self._send(writer, 200, {"ok": True})
            return True
        if path.endswith("/models") and method == "GET":
            await self._send(writer, 200, {"object": "list", "data": [{"id": "fake", "object": "model"}]})
            return True
        if not path.endswith("/chat/completions") or method != "POST" or body is None:
            await self._send(writer, 404, {"error": {"message": f"no route {method} {path}"}})
            return True
        behaviour = self.behaviour
        if behaviour.reject_stream_options and "stream_options" in body:
            await self._send(
                writer,
                400,
                {
                    "error": {
                        "message": "Unrecognized request argument: stream_options",
                        "type": "invalid_request_error",
                    }
                },
            )
            return True
        if behaviour.reject_response_format and "response_format" in body:
            message = {"message": "Unrecognized request argument: response_format", "type": "invalid_request_error"}
            await self._send(writer, 400, {"error": message})
            return True
        rule = self._pick_rule(body)
        if rule is not None and rule.status is not None:
            extra = {} if rule.retry_after is None else {"retry-after": str(rule.retry_after)}
            await self._send(writer, rule.status, {"error": {"message": rule.message, "code": rule.status}}, extra)
            return True
        drop_after = rule.drop_after_tokens if rule is not None else None
        if not body.get("stream"):
            await asyncio.sleep(behaviour.first_token_delay_ms / 1000)
            await self._send(writer, 200, self._full_answer(body, behaviour))
            return not behaviour.close_after_answer
        return await self._stream(body, behaviour, drop_after, writer) and not behaviour.close_after_answer

    def _full_answer(self, body: dict[str, Any], behaviour: Behaviour) -> dict[str, Any]:
        tokens = _answer_tokens(body, min(behaviour.tokens, int(body.get("max_tokens") or behaviour.tokens)), behaviour)
        return {
            "id": "chatcmpl-fake",
            "object": "chat.completion",
            "model": body.get("model"),
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": "".join(tokens)},
                    "finish_reason": "stop",
                }
            ],
            "usage": {
                "prompt_tokens": 10,
                "completion_tokens": len(tokens),
                "total_tokens": 10 + len(tokens),
            },
        }

    async def _stream(
        self, body: dict[str, Any], behaviour: Behaviour, drop_after: int | None, writer: asyncio.StreamWriter
    ) -> bool:
        # Cheap on purpose: benchmarks run this server beside the client on the same CPUs, so every event
        # is one orjson call and events due at the same moment go out in one write.
        created = int(time.time())
        model = body.get("model")

        def event(payload: Any) -> bytes:
            data = b"data: " + (payload if isinstance(payload, bytes) else orjson.dumps(payload)) + b"\n\n"
            return b"%x\r\n%s\r\n" % (len(data), data)

        def chunk(delta: dict[str, Any], finish: str | None) -> bytes:
            return event(
                {
                    "id": "chatcmpl-fake",
                    "object": "chat.completion.chunk",
                    "created": created,
                    "model": model,
                    "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
                }
            )

        async def send(data: bytes) -> None:
            writer.write(data)
            if writer.transport.get_write_buffer_size():
                await writer.drain()

        limit = int(body.get("max_tokens") or behaviour.tokens)
        tokens = _answer_tokens(body, behaviour.tokens, behaviour)
        finish = "length" if limit < len(tokens) else "stop"
        tokens = tokens[:limit]
        # Like OpenAI: headers and an empty role chunk at once, the first real token after the "prefill".
        await send(
            b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\n"
            b"transfer-encoding: chunked\r\n\r\n" + chunk({"role": "assistant", "content": ""}, None)
        )
        await asyncio.sleep(behaviour.first_token_delay_ms / 1000)
        pending: list[bytes] = []
        for i, token in enumerate(tokens):
            if drop_after is not None and i >= drop_after:
                await send(b"".join(pending))
                writer.transport.abort()  # a crashed worker: no final chunk, no terminating zero-length chunk
                return False
            if i > 0 and behaviour.token_delay_ms:
                await send(b"".join(pending))
                pending.clear()
                await asyncio.sleep(behaviour.token_delay_ms / 1000)
            pending.append(chunk({"content": token}, None))
        pending.append(chunk({}, finish))
        if (body.get("stream_options") or {}).get("include_usage"):
            pending.append(
                event(
                    {
                        "id": "chatcmpl-fake",
                        "object": "chat.completion.chunk",
                        "model": model,
                        "choices": [],
                        "usage": {
                            "prompt_tokens": 10,
                            "completion_tokens": len(tokens),
                            "total_tokens": 10 + len(tokens),
                        },
                    }
                )
            )
        pending.append(event(b"[DONE]"))
        pending.append(b"0\r\n\r\n")
        await send(b"".join(pending))
        return True


@contextmanager
def running_server(
    behaviour: Behaviour | None = None, *, ssl_context: ssl.SSLContext | None = None
) -> Iterator[FakeOpenAIServer]:
    """Start a server on a free port of 127.0.0.1 in a background thread (over TLS with ``ssl_context``);
    stop it on exit."""
    server = FakeOpenAIServer(behaviour)
    loop = asyncio.new_event_loop()
    started = threading.Event()

    def run() -> None:
        asyncio.set_event_loop(loop)
        loop.run_until_complete(server.start(ssl_context=ssl_context))
        started.set()
        loop.run_forever()
        loop.run_until_complete(server.stop())
        # Connections still open (a stream the client gave up on) have handlers asleep in this loop; end
        # them here, or they are finalised after the loop closed and complain from the garbage collector.
        handlers = asyncio.all_tasks(loop)
        for task in handlers:
            task.cancel()
        loop.run_until_complete(asyncio.gather(*handlers, return_exceptions=True))
        loop.close()

    thread = threading.Thread(target=run, name="fake-openai", daemon=True)
    thread.start()
    if not started.wait(10):
        raise RuntimeError("the fake OpenAI server did not start within 10 s")
    try:
        yield server
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)


def main(argv: list[str] | None = None) -> None:
    """Serve until interrupted; prints ``listening on PORT`` once ready (scripts wait for that line)."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port (default)")
    parser.add_argument("--first-token-delay-ms", type=float, default=0.0)
    parser.add_argument("--token-delay-ms", type=float, default=0.0)
    parser.add_argument("--tokens", type=int, default=8)
    args = parser.parse_args(argv)
    behaviour = Behaviour(args.first_token_delay_ms, args.token_delay_ms, args.tokens)

    async def serve() -> None:
        # Nobody can read the recorded requests of a server in its own process, and an ever-growing heap
        # means ever-longer collector pauses, which would delay the streams of a benchmark.
        server = FakeOpenAIServer(behaviour, record=False)
        await server.start(port=args.port)
        gc.freeze()
        print(f"listening on {server.port}", flush=True)
        await server.serve_forever()

    try:
        asyncio.run(serve())
    except KeyboardInterrupt:
        pass


def behaviour_as_json(behaviour: Behaviour) -> dict[str, Any]:
    """The ``POST /_control`` body that sets ``behaviour`` on a server in another process."""
    data = asdict(behaviour)
    data.pop("reply")  # a function: set it in the server's own process
    return data


if __name__ == "__main__":
    main()
