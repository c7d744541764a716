"""The client's HTTP below the chat protocol, against real sockets on 127.0.0.1: connection reuse and its
bound, a server that closes kept-alive connections, proxies from the environment, and TLS (the fake server
over HTTPS with a certificate from a throwaway CA made by trustme)."""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import Iterator
from pathlib import Path

import aiohttp
import httpx
import pytest
import trustme

from reviewer_app.errors import GenerationError
from reviewer_app.generation.client import ChatClient, Completion, RequestFailed, _transport_reason
from reviewer_app.generation.runner import generate_batch
from reviewer_app.generation.specs import RetryPolicy, SamplingParams, parse_model_spec
from tests.support.fake_openai import Behaviour, FakeOpenAIServer, running_server

FAST = RetryPolicy(retries=2, backoff_s=0.01, backoff_max_s=0.02, timeout_s=5)
PROXY_VARIABLES = ("http_proxy", "https_proxy", "all_proxy", "no_proxy")


def ask(
    base_url: str,
    prompts: list[str],
    *,
    concurrency: int = 8,
    pause_s: float = 0.0,
    verify: ssl.SSLContext | None = None,
) -> list[Completion]:
    """Complete the prompts one after another (``pause_s`` apart), or all at once if ``concurrency`` > 1."""

    async def go() -> list[Completion]:
        spec = parse_model_spec(f"m={base_url}")
        async with ChatClient(
            spec, SamplingParams(), FAST, api_key=None, concurrency=concurrency, verify=verify
        ) as client:
            if concurrency > 1:
                return await asyncio.gather(*(client.complete([{"role": "user", "content": p}]) for p in prompts))
            done = []
            for prompt in prompts:
                done.append(await client.complete([{"role": "user", "content": prompt}]))
                await asyncio.sleep(pause_s)
            return done

    return asyncio.run(go())


@pytest.fixture
def no_proxies(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.upper(), raising=False)


def test_kept_alive_connection_is_reused(server: FakeOpenAIServer) -> None:
    done = ask(server.base_url, ["one", "two", "three"], concurrency=1)
    assert [d.output.split()[0] for d in done] == ["m:one", "m:two", "m:three"]
    assert len({r.connection for r in server.completions()}) == 1


def test_connections_are_bounded_by_concurrency(server: FakeOpenAIServer) -> None:
    server.set_behaviour(Behaviour(first_token_delay_ms=50, tokens=2))
    done = ask(server.base_url, [f"q {i}" for i in range(6)], concurrency=2)
    assert len(done) == 6 and all(d.finish_reason == "stop" for d in done)
    assert len({r.connection for r in server.completions()}) == 2


def test_server_closing_kept_alive_connections_costs_at_most_a_retry(server: FakeOpenAIServer) -> None:
    # Reused at once (the close may be found only when the answer does not come) and after a pause (the
    # close is seen before reuse): every request is answered.
    server.set_behaviour(Behaviour(close_after_answer=True))

    async def go() -> list[Completion]:
        spec = parse_model_spec(f"m={server.base_url}")
        async with ChatClient(spec, SamplingParams(), FAST, api_key=None, concurrency=1) as client:
            done = []
            for i, pause in enumerate((0, 0, 0.05, 0)):
                done.append(await client.complete([{"role": "user", "content": f"q {i}"}]))
                await asyncio.sleep(pause)
            return done

    done = asyncio.run(go())
    assert [d.output.split()[0] for d in done] == [f"m:q-{i}" for i in range(4)]
    assert all(d.attempts <= 2 for d in done)
    assert len({r.connection for r in server.completions()}) >= 4


def test_proxy_from_the_environment_is_used(
    server: FakeOpenAIServer, no_proxies: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The fake server answers a proxy's absolute-form request like any other, so it can stand in for an
    # HTTP proxy: a host that does not resolve is reached only through it.
    monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{server.port}")
    (done,) = ask("http://model.invalid:8000/v1", ["hello"], concurrency=1)
    assert done.output.startswith("m:hello")
    assert server.completions()[0].path == "http://model.invalid:8000/v1/chat/completions"


def test_no_proxy_hosts_are_reached_directly(
    server: FakeOpenAIServer, no_proxies: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")  # nothing listens there
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    (done,) = ask(server.base_url, ["hello"], concurrency=1)
    assert done.output.startswith("m:hello")
    assert server.completions()[0].path == "/v1/chat/completions"


def test_refused_connection_is_reported_as_such(server: FakeOpenAIServer) -> None:
    with pytest.raises(RequestFailed) as failed:
        ask("http://127.0.0.1:9/v1", ["hello"], concurrency=1)
    assert failed.value.reason.startswith("connection failed or dropped")
    assert "gave up after 3 attempts" in failed.value.reason


def test_a_closed_connection_is_not_called_a_timeout() -> None:
    # httpx-aiohttp maps aiohttp's ServerDisconnectedError onto httpx.ConnectTimeout.
    try:
        try:
            raise aiohttp.ServerDisconnectedError()
        except aiohttp.ServerDisconnectedError as cause:
            raise httpx.ConnectTimeout(str(cause)) from cause
    except httpx.ConnectTimeout as exc:
        mapped = exc
    assert _transport_reason(mapped) == "connection failed or dropped (ServerDisconnectedError: Server disconnected)"
    assert _transport_reason(httpx.ReadTimeout("slow")) == "timed out (ReadTimeout)"


# -- TLS -----------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def ca() -> trustme.CA:
    return trustme.CA()


@pytest.fixture
def tls_server(ca: trustme.CA) -> Iterator[FakeOpenAIServer]:
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert("127.0.0.1", "localhost").configure_cert(context)
    with running_server(Behaviour(tokens=4), ssl_context=context) as srv:
        yield srv


def test_streams_over_tls_with_a_trusted_ca(tls_server: FakeOpenAIServer, ca: trustme.CA) -> None:
    trusting = ssl.create_default_context()
    ca.configure_trust(trusting)
    done = ask(tls_server.base_url, ["over tls", "again"], concurrency=1, verify=trusting)
    assert tls_server.base_url.startswith("https://")
    assert [d.output.split()[0] for d in done] == ["m:over-tls", "m:again"]
    assert all(d.output_tokens == 4 and d.attempts == 1 for d in done)
    assert len({r.connection for r in tls_server.completions()}) == 1  # kept alive over TLS too


def test_generate_trusts_the_ca_named_by_ssl_cert_file(
    tls_server: FakeOpenAIServer, ca: trustme.CA, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ca_file = tmp_path / "ca.pem"
    ca.cert_pem.write_to_path(str(ca_file))
    monkeypatch.setenv("SSL_CERT_FILE", str(ca_file))
    samples = tmp_path / "samples.jsonl"
    samples.write_text('{"sample_id": "s1", "scenario": "qa", "prompt": "hello"}\n', encoding="utf-8")
    out = tmp_path / "batch.jsonl"
    spec = parse_model_spec(f"a={tls_server.base_url}")
    report = generate_batch(samples, out, [spec], params=SamplingParams(), policy=FAST, progress=False)
    assert report.failed == 0 and out.read_text(encoding="utf-8").count("\n") == 1


def test_untrusted_certificate_stops_the_run_with_a_clear_error(
    tls_server: FakeOpenAIServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    samples = tmp_path / "samples.jsonl"
    samples.write_text(
        "".join(f'{{"sample_id": "s{i}", "scenario": "qa", "prompt": "q {i}"}}\n' for i in range(3)),
        encoding="utf-8",
    )
    out = tmp_path / "batch.jsonl"
    spec = parse_model_spec(f"a={tls_server.base_url}")
    with pytest.raises(GenerationError) as error:
        generate_batch(samples, out, [spec], params=SamplingParams(), policy=FAST, progress=False)
    message = str(error.value)
    assert message.startswith("--model a: the TLS certificate of 127.0.0.1 cannot be verified (")
    assert "SSL_CERT_FILE" in message
    assert not tls_server.completions()  # no request was sent over the unverified connection
    assert not out.exists() or out.read_text(encoding="utf-8") == ""
