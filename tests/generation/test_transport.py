"""The lean HTTP/1.1 transport against real sockets on 127.0.0.1: the fake OpenAI server for the normal
exchanges, a few raw asyncio servers for the answers the fake server never gives.

TLS is not tested here: a throwaway certificate needs the ``cryptography`` package, which this project does
not install (the https path is ``asyncio.open_connection(ssl=...)`` with the client's SSL context)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import httpx
import pytest

from reviewer_app.generation.client import ChatClient, RetryPolicy, SamplingParams, parse_model_spec
from reviewer_app.generation.transport import LeanTransport, env_proxy_applies
from tests.support.fake_openai import Behaviour, FakeOpenAIServer, Rule

CHAT = {"model": "m", "messages": [{"role": "user", "content": "hi there"}], "stream": True}


def client_for(transport: LeanTransport, timeout: float = 5.0) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=transport, timeout=timeout)


async def stream_chat(http: httpx.AsyncClient, port: int, body: dict[str, Any] = CHAT) -> bytes:
    async with http.stream("POST", f"http://127.0.0.1:{port}/v1/chat/completions", json=body) as response:
        assert response.status_code == 200
        assert response.headers["transfer-encoding"] == "chunked"
        return b"".join([piece async for piece in response.aiter_bytes()])


def test_chunked_stream_is_decoded_whole(server: FakeOpenAIServer) -> None:
    server.set_behaviour(Behaviour(tokens=5, token_delay_ms=2))

    async def go() -> bytes:
        async with client_for(LeanTransport()) as http:
            return await stream_chat(http, server.port)

    body = asyncio.run(go())
    events = [e for e in body.split(b"\n\n") if e]
    assert all(e.startswith(b"data: ") for e in events)
    assert events[-1] == b"data: [DONE]" and len(events) == 1 + 5 + 1 + 1  # role, tokens, finish, done
    assert b"\r\n" not in body  # no chunk framing left in the payload


def test_content_length_body_and_keep_alive_reuse(server: FakeOpenAIServer) -> None:
    async def go() -> list[Any]:
        async with client_for(LeanTransport()) as http:
            models = await http.get(f"http://127.0.0.1:{server.port}/v1/models")
            await stream_chat(http, server.port)
            again = await http.get(f"http://127.0.0.1:{server.port}/v1/models")
            return [models, again]

    models, again = asyncio.run(go())
    assert models.status_code == 200 and models.json()["data"][0]["id"] == "fake"
    assert models.http_version == "HTTP/1.1" and models.reason_phrase == "OK"
    assert again.json() == models.json()
    assert len({r.connection for r in server.requests}) == 1  # three requests, one connection


def test_pool_is_bounded_and_waits_for_a_free_connection(server: FakeOpenAIServer) -> None:
    server.set_behaviour(Behaviour(first_token_delay_ms=50, tokens=2))

    async def go() -> list[bytes]:
        async with client_for(LeanTransport(max_connections=2)) as http:
            return await asyncio.gather(*(stream_chat(http, server.port) for _ in range(6)))

    bodies = asyncio.run(go())
    assert all(b.endswith(b"data: [DONE]\n\n") for b in bodies)
    assert len({r.connection for r in server.requests}) == 2


def test_pool_timeout_when_no_connection_frees_up(server: FakeOpenAIServer) -> None:
    server.set_behaviour(Behaviour(first_token_delay_ms=1000))

    async def go() -> None:
        timeout = httpx.Timeout(5.0, pool=0.1)
        async with httpx.AsyncClient(transport=LeanTransport(max_connections=1), timeout=timeout) as http:
            url = f"http://127.0.0.1:{server.port}/v1/chat/completions"
            async with http.stream("POST", url, json=CHAT):
                await http.get(f"http://127.0.0.1:{server.port}/v1/models")

    with pytest.raises(httpx.PoolTimeout):
        asyncio.run(go())


def test_connection_dropped_mid_stream_is_a_transport_error(server: FakeOpenAIServer) -> None:
    server.set_behaviour(Behaviour(tokens=6, rules=[Rule(drop_after_tokens=2, times=1)]))

    async def go() -> tuple[BaseException, bytes]:
        async with client_for(LeanTransport()) as http:
            try:
                await stream_chat(http, server.port)
            except httpx.HTTPError as exc:
                error: BaseException = exc
            else:
                raise AssertionError("the dropped stream was read as complete")
            return error, await stream_chat(http, server.port)  # the pool recovers

    error, body = asyncio.run(go())
    assert isinstance(error, httpx.RemoteProtocolError)  # a TransportError: ChatClient retries it
    assert "peer closed connection" in str(error)
    assert body.endswith(b"data: [DONE]\n\n")


def test_read_timeout_while_the_stream_stalls(server: FakeOpenAIServer) -> None:
    server.set_behaviour(Behaviour(first_token_delay_ms=2000))

    async def go() -> None:
        async with client_for(LeanTransport(), timeout=0.2) as http:
            await stream_chat(http, server.port)

    with pytest.raises(httpx.ReadTimeout):
        asyncio.run(go())


def test_chat_client_retries_a_drop_and_times_out_on_the_lean_transport(server: FakeOpenAIServer) -> None:
    spec = parse_model_spec(f"m=http://127.0.0.1:{server.port}/v1")
    policy = RetryPolicy(retries=2, backoff_s=0.01, backoff_max_s=0.02, timeout_s=0.5)

    async def go() -> tuple[int, str]:
        async with ChatClient(spec, SamplingParams(), policy, api_key=None) as client:
            assert all(isinstance(c._transport, LeanTransport) for c in client._clients)
            server.set_behaviour(Behaviour(rules=[Rule(drop_after_tokens=1, times=1)]))
            done = await client.complete([{"role": "user", "content": "hi"}])
            server.set_behaviour(Behaviour(first_token_delay_ms=3000))
            try:
                await client.complete([{"role": "user", "content": "hi"}])
            except Exception as exc:  # RequestFailed
                return done.attempts, str(exc)
            raise AssertionError("a stalled stream did not time out")

    attempts, reason = asyncio.run(go())
    assert attempts == 2
    assert "timed out" in reason and "gave up after 3 attempts" in reason


Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


async def _read_request(reader: asyncio.StreamReader) -> bytes:
    head = await reader.readuntil(b"\r\n\r\n")
    for line in head.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            await reader.readexactly(int(line.split(b":")[1]))
    return head


async def with_raw_server(handler: Handler, use: Callable[[int], Awaitable[Any]]) -> Any:
    server = await asyncio.start_server(handler, "127.0.0.1", 0)
    try:
        return await use(server.sockets[0].getsockname()[1])
    finally:
        server.close()


def test_stale_kept_alive_connection_is_replaced() -> None:
    connections = 0

    async def one_answer_then_close(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal connections
        connections += 1
        await _read_request(reader)
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok")
        await writer.drain()
        writer.close()  # without "connection: close", as servers do when their keep-alive time runs out

    async def use(port: int) -> list[str]:
        async with client_for(LeanTransport()) as http:
            texts = []
            # Reused at once (the close is found when the answer does not come: sent again), and after
            # a pause (the close is seen before reuse).
            for pause in (0, 0, 0.05, 0):
                texts.append((await http.get(f"http://127.0.0.1:{port}/")).text)
                await asyncio.sleep(pause)
            return texts

    assert asyncio.run(with_raw_server(one_answer_then_close, use)) == ["ok"] * 4
    assert connections >= 4


def test_body_read_to_close_and_interim_answers() -> None:
    async def http10(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await _read_request(reader)
        writer.write(b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.0 200 OK\r\ncontent-type: text/plain\r\n\r\n")
        writer.write(b"no length, ")
        await writer.drain()
        writer.write(b"ends at close")
        writer.close()

    async def use(port: int) -> httpx.Response:
        async with client_for(LeanTransport()) as http:
            return await http.get(f"http://127.0.0.1:{port}/")

    response = asyncio.run(with_raw_server(http10, use))
    assert response.status_code == 200 and response.text == "no length, ends at close"


def test_unusual_answer_hands_the_origin_to_httpx() -> None:
    async def folded_header(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while True:
            try:
                await _read_request(reader)
            except asyncio.IncompleteReadError:
                return
            # An obsolete folded header line: legal for h11 to read, refused by the lean parser.
            writer.write(b"HTTP/1.1 200 OK\r\nx-note: one\r\n two\r\ncontent-length: 2\r\n\r\nok")
            await writer.drain()

    async def use(port: int) -> tuple[BaseException | None, str]:
        async with client_for(LeanTransport()) as http:
            error = None
            try:
                await http.get(f"http://127.0.0.1:{port}/")
            except httpx.RemoteProtocolError as exc:
                error = exc
            return error, (await http.get(f"http://127.0.0.1:{port}/")).text

    error, text = asyncio.run(with_raw_server(folded_header, use))
    assert error is not None and "using httpx's transport from now on" in str(error)
    assert text == "ok"


def test_env_proxy_decides_who_sends(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("http_proxy", "https_proxy", "all_proxy", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.upper(), raising=False)
    url = httpx.URL("http://gpu1:8000/v1/chat/completions")
    assert not env_proxy_applies(url)
    monkeypatch.setenv("HTTP_PROXY", "http://proxy:3128")
    assert env_proxy_applies(url)
    assert not env_proxy_applies(httpx.URL("https://api.example.com/v1"))
    monkeypatch.setenv("NO_PROXY", "gpu1,localhost")
    assert not env_proxy_applies(url)
