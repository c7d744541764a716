"""A streaming client for OpenAI-compatible chat completions (vLLM, llama.cpp server, Ollama, hosted APIs).

It measures what a user of the model feels: time to the first generated token and total latency, on the
real streaming path: server-sent events over httpx, sent by aiohttp through httpx-aiohttp, which costs
about 40 % less CPU per streamed answer than httpx's own transport (at dozens of streams that CPU shows up
as TTFT; see scripts/bench_generate.py). Proxies from the environment (``HTTP(S)_PROXY``, ``ALL_PROXY``,
minus ``NO_PROXY``) and ``SSL_CERT_FILE`` / ``SSL_CERT_DIR`` are honoured as httpx reads them. Transient
failures (429, 5xx, dropped or timed-out connections) are retried with exponential backoff and jitter,
honouring ``Retry-After``; a request that still fails raises :class:`RequestFailed` with a reason written
for people, so the caller can record it and move on. API keys come from environment variables only and
are scrubbed from every reason. What a run asks for (the ``--model`` spec and its key, the sampling parameters,
the retry policy) is ``specs``'s.

    RequestFailed          (not a user error: a failed request is recorded, the run goes on)
    GenerationError        a --model spec, key or server certificate that cannot be used at all
                           (see reviewer_app.errors)
"""

from __future__ import annotations

import asyncio
import json
import logging
import ssl
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httpx
import orjson
from httpx_aiohttp import HttpxAiohttpClient

from reviewer_app.errors import GenerationError
from reviewer_app.generation.specs import ModelSpec, RetryPolicy, SamplingParams

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Completion:
    """A finished generation with its timings in milliseconds from sending the request."""

    output: str
    finish_reason: str | None
    ttft_ms: float
    latency_ms: float
    output_tokens: int
    output_tokens_source: str  # "usage" (reported by the server) or "chunks" (counted content chunks)
    attempts: int


class RequestFailed(Exception):
    """A request that failed for good (or on a non-retryable answer); ``reason`` is safe to write down."""

    def __init__(self, reason: str, attempts: int) -> None:
        super().__init__(reason)
        self.reason = reason
        self.attempts = attempts


class _Retryable(Exception):
    def __init__(self, reason: str, retry_after: float | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.retry_after = retry_after


class _Final(Exception):
    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def _retry_after(response: httpx.Response) -> float | None:
    raw = response.headers.get("retry-after")
    try:
        return float(raw) if raw is not None else None
    except ValueError:
        return None  # an HTTP date: rare from model servers, fall back to our own backoff


def _transport_reason(exc: httpx.TransportError) -> str:
    """Why a request failed on the network, in words. httpx-aiohttp maps aiohttp's errors onto httpx's
    classes loosely (a server that closed the connection becomes ConnectTimeout), so the original error,
    kept as the cause, decides whether it was a timeout."""
    cause = exc.__cause__ or exc
    if isinstance(exc, httpx.TimeoutException) and (
        cause is exc or isinstance(cause, TimeoutError) or "Timeout" in type(cause).__name__
    ):
        return f"timed out ({type(exc).__name__})"
    text = str(cause) or type(cause).__name__
    return f"connection failed or dropped ({type(cause).__name__}: {text})"


def _error_text(body: bytes) -> str:
    try:
        payload = json.loads(body)
        error = payload.get("error", payload) if isinstance(payload, dict) else payload
        message = error.get("message", error) if isinstance(error, dict) else error
        text = message if isinstance(message, str) else json.dumps(message)
    except (ValueError, AttributeError):
        text = body.decode("utf-8", "replace")
    text = " ".join(text.split())
    return text[:300] + ("..." if len(text) > 300 else "")


class ChatClient:
    """Streams chat completions from one model with at most ``concurrency`` requests in flight.

    Use as ``async with ChatClient(...) as client: await client.complete(messages)``. ``on_retry`` is
    called with a reason before each retry (the progress bar counts them). ``verify`` is the SSL context
    for https (default: httpx's, i.e. certifi's CA bundle or ``SSL_CERT_FILE`` / ``SSL_CERT_DIR``).
    ``transport`` lets tests inject an httpx transport.
    """

    def __init__(
        self,
        spec: ModelSpec,
        params: SamplingParams,
        policy: RetryPolicy,
        *,
        api_key: str | None,
        concurrency: int = 8,
        on_retry: Callable[[str], None] | None = None,
        verify: ssl.SSLContext | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.spec, self.params, self.policy = spec, params, policy
        self._secrets = [api_key] if api_key else []
        self._on_retry = on_retry
        self._include_usage = True
        self._structured = True  # send response_format when asked; off after a server refused it
        headers = {
            "accept": "text/event-stream",
            "accept-encoding": "identity",
            "content-type": "application/json",
        }
        if api_key:
            headers["authorization"] = f"Bearer {api_key}"
        self._url = httpx.URL(spec.endpoint)  # parsed once: httpx's URL parser is pure Python
        # One SSL context for everything, since building one loads the CA bundle (certifi, or
        # SSL_CERT_FILE / SSL_CERT_DIR as httpx reads them).
        if verify is None:
            verify = httpx.create_ssl_context()
        timeout = httpx.Timeout(policy.timeout_s, connect=min(policy.timeout_s, 10.0))
        slots = max(1, concurrency)
        if transport is not None:
            self._clients = [httpx.AsyncClient(headers=headers, transport=transport, verify=verify, timeout=timeout)]
        else:
            self._clients = self._open_clients(slots, headers, verify, timeout)
        self._idle: asyncio.Queue[httpx.AsyncClient] = asyncio.Queue()
        for i in range(slots):
            # One shared client: the queue only bounds requests in flight; one client per slot: it also
            # hands each request its own client.
            self._idle.put_nowait(self._clients[i % len(self._clients)])

    def _open_clients(
        self, slots: int, headers: dict[str, str], verify: ssl.SSLContext, timeout: httpx.Timeout
    ) -> list[httpx.AsyncClient]:
        """The httpx clients requests are sent with: here one, whose pool holds a connection per slot.
        (scripts/bench_generate.py overrides this to compare transports.)"""
        limits = httpx.Limits(max_connections=slots, max_keepalive_connections=slots)
        # HttpxAiohttpClient, not AsyncClient(transport=AiohttpTransport()): given a transport, httpx
        # ignores proxies from the environment; this way they get an aiohttp transport of their own.
        return [HttpxAiohttpClient(headers=headers, verify=verify, timeout=timeout, limits=limits)]

    async def __aenter__(self) -> ChatClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await asyncio.gather(*(client.aclose() for client in self._clients))

    def redact(self, text: str) -> str:
        """Remove the API key from text that will be written or logged (some servers echo it back)."""
        for secret in self._secrets:
            text = text.replace(secret, "***")
        return text

    async def complete(
        self,
        messages: list[dict[str, Any]],
        params: SamplingParams | None = None,
        *,
        response_format: dict[str, Any] | None = None,
    ) -> Completion:
        """Generate one answer (``params`` overrides the client's, e.g. a per-repeat seed); retries
        transient failures. Raises RequestFailed when it gives up.

        ``response_format`` (a judge's structured answer) is sent as is; a server that refuses it (HTTP 400
        naming it, as older llama.cpp and Ollama builds do) is asked again without it, as for the usage
        option, and the caller checks the reply itself (it must anyway: not every server enforces it)."""
        params = params or self.params
        attempt = 0
        http = await self._idle.get()
        try:
            while True:
                attempt += 1
                try:
                    async with asyncio.timeout(self.policy.timeout_s):
                        return await self._attempt(http, messages, attempt, params, response_format)
                except TimeoutError:
                    error = _Retryable(f"timed out after {self.policy.timeout_s:g} s")
                except httpx.TransportError as exc:
                    self._raise_if_untrusted(exc)
                    error = _Retryable(_transport_reason(exc))
                except _Retryable as exc:
                    error = exc
                except _Final as exc:
                    raise RequestFailed(self.redact(exc.reason), attempt) from None
                reason = self.redact(error.reason)
                if attempt > self.policy.retries:
                    suffix = f" (gave up after {attempt} attempts)" if attempt > 1 else ""
                    raise RequestFailed(reason + suffix, attempt)
                wait = self.policy.delay(attempt, error.retry_after)
                log.info("%s: attempt %d failed: %s; retrying in %.2f s", self.spec.name, attempt, reason, wait)
                if self._on_retry is not None:
                    self._on_retry(reason)
                await asyncio.sleep(wait)
        finally:
            self._idle.put_nowait(http)

    def _raise_if_untrusted(self, exc: httpx.TransportError) -> None:
        """A server certificate that fails verification fails every request alike: stop the run with a
        GenerationError saying so, rather than retrying and recording every sample as failed."""
        found: ssl.SSLCertVerificationError | None = None
        cause: BaseException | None = exc
        for _ in range(20):  # the innermost: aiohttp wraps ssl's error in one of its own, without the detail
            if cause is None:
                break
            if isinstance(cause, ssl.SSLCertVerificationError):
                found = cause
            cause = cause.__cause__ or cause.__context__
        if found is None:
            return
        detail = getattr(found, "verify_message", None) or str(found)
        raise GenerationError(
            f"--model {self.spec.name}: the TLS certificate of {self._url.host} cannot be verified ({detail}); "
            "if the server uses a certificate of your own CA, point SSL_CERT_FILE at that CA's certificate"
        ) from None

    def _payload(
        self, messages: list[dict[str, Any]], params: SamplingParams, response_format: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        payload: dict[str, Any] = {
            "model": self.spec.api_model,
            "messages": messages,
            "stream": True,
            "temperature": params.temperature,
            "top_p": params.top_p,
            "max_tokens": params.max_tokens,
        }
        if params.seed is not None:
            payload["seed"] = params.seed
        if self._include_usage:
            payload["stream_options"] = {"include_usage": True}
        if response_format is not None and self._structured:
            payload["response_format"] = response_format
        return payload

    async def _attempt(
        self,
        http: httpx.AsyncClient,
        messages: list[dict[str, Any]],
        attempt: int,
        params: SamplingParams,
        response_format: dict[str, Any] | None = None,
    ) -> Completion:
        payload = self._payload(messages, params, response_format)
        try:
            content = orjson.dumps(payload)
        except TypeError:  # e.g. a seed beyond 64 bits
            content = json.dumps(payload, ensure_ascii=False).encode()
        started = time.perf_counter()
        request = http.build_request("POST", self._url, content=content)
        response = await http.send(request, stream=True)
        try:
            if response.status_code != 200:
                body = await response.aread()
                self._raise_for_status(response, body, "stream_options" in payload, "response_format" in payload)
            return await self._read_stream(response, started, attempt)
        finally:
            await response.aclose()

    def _raise_for_status(
        self, response: httpx.Response, body: bytes, sent_stream_options: bool, sent_format: bool = False
    ) -> None:
        status, text = response.status_code, _error_text(body)
        reason = f"HTTP {status} {response.reason_phrase}: {text}".rstrip(": ")
        if status == 400 and sent_stream_options and "stream_options" in text:
            # Older servers refuse the usage option; count tokens ourselves from then on.
            self._include_usage = False
            raise _Retryable(reason, retry_after=0.0)
        if status == 400 and sent_format and "response_format" in text:
            # A server without structured outputs: ask without it; the reply is checked either way.
            log.warning("%s refuses response_format (%s); asking without it", self.spec.name, text)
            self._structured = False
            raise _Retryable(reason, retry_after=0.0)
        if status in (408, 409, 425, 429) or status >= 500:
            raise _Retryable(reason, _retry_after(response))
        raise _Final(reason)

    async def _read_stream(self, response: httpx.Response, started: float, attempt: int) -> Completion:
        answer = _Answer()
        take = answer.take
        done = False
        waiting_for_first = True
        buffer = b""
        async for raw in response.aiter_bytes():
            # Split server-sent events by hand, one split per network read: httpx's text and line
            # decoders cost more CPU than the JSON, and with dozens of streams that CPU becomes latency.
            if b"\n" not in raw:
                buffer += raw
                continue
            lines = (buffer + raw).split(b"\n") if buffer else raw.split(b"\n")
            buffer = lines.pop()
            for line in lines:
                if not line.startswith(b"data:"):
                    continue  # blank separators, comments (": keep-alive"), event: lines
                data = line[5:].strip()
                if data == b"[DONE]":
                    done = True  # read on to the end of the body so the connection can be reused
                else:
                    take(data)
            if waiting_for_first and answer.first_token_at is not None:
                # Let other streams whose first token arrived in the same network poll take their
                # timestamp before this one finishes its answer and sends its next request: when many
                # first tokens land at once, bookkeeping must not queue in front of the measurement.
                waiting_for_first = False
                await asyncio.sleep(0)
        ended = time.perf_counter()
        if not done and answer.finish_reason is None:
            raise _Retryable(f"stream ended before the answer was complete ({len(answer.pieces)} chunks received)")
        output = "".join(answer.pieces)
        if not output.strip():
            raise _Final(f"empty answer (finish_reason={answer.finish_reason})")
        assert answer.first_token_at is not None
        usage_tokens = answer.usage_tokens
        return Completion(
            output=output,
            finish_reason=answer.finish_reason,
            ttft_ms=round((answer.first_token_at - started) * 1000, 2),
            latency_ms=round((ended - started) * 1000, 2),
            output_tokens=usage_tokens if usage_tokens is not None else len(answer.pieces),
            output_tokens_source="usage" if usage_tokens is not None else "chunks",
            attempts=attempt,
        )


class _Answer:
    """What the stream has said so far; ``take`` reads one ``data:`` payload."""

    __slots__ = ("pieces", "first_token_at", "finish_reason", "usage_tokens")

    def __init__(self) -> None:
        self.pieces: list[str] = []  # content chunks, so their count stands in for missing usage
        self.first_token_at: float | None = None
        self.finish_reason: str | None = None
        self.usage_tokens: int | None = None

    def take(self, data: bytes) -> None:
        try:
            event = orjson.loads(data)
        except orjson.JSONDecodeError:
            raise _Retryable(f"unreadable stream event {data[:80]!r}") from None
        if type(event) is not dict:
            raise _Retryable(f"unexpected stream event {data[:80]!r}")
        if "error" in event:
            raise _Retryable(f"error in stream: {_error_text(data)}")
        usage = event.get("usage")
        if usage and type(usage) is dict and type(usage.get("completion_tokens")) is int:
            self.usage_tokens = usage["completion_tokens"]
        for choice in event.get("choices") or ():
            delta = choice.get("delta") or {}
            text = delta.get("content")
            if self.first_token_at is None and (text or delta.get("reasoning_content")):
                self.first_token_at = time.perf_counter()
            if text:
                self.pieces.append(text)
            if choice.get("finish_reason"):
                self.finish_reason = choice["finish_reason"]
