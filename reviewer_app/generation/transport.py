"""A lean HTTP/1.1 transport for httpx over asyncio streams, for many concurrent streamed completions.

httpx's default transport (httpcore + h11) spends about a millisecond of CPU on an 8-token streamed answer,
mostly in per-event bookkeeping; at 64 streams that saturates a core and first tokens queue behind other
streams, which shows up as fake TTFT. This transport does the same job with a few Python operations per
network read: it writes the request in one call, parses the response head, and yields the body (chunked,
Content-Length or read-to-close) as it arrives, one piece per read, with keep-alive connections reused per
origin in a bounded pool.

It hands a request to httpx's own transport (``AsyncHTTPTransport``, same SSL context) instead when it
cannot handle it: a scheme other than http/https, a request body that is not plain bytes (streamed
uploads), or an origin whose answers it could not parse before (an unreadable status line or headers, an
upgrade, a transfer coding other than chunked). Such a failure is raised once as
``httpx.RemoteProtocolError`` (a transport error, so callers retry) and that origin then goes to httpx for
the rest of the transport's life. Proxies from the environment are decided by the caller: see
:func:`env_proxy_applies`. HTTP/2 is spoken by neither (TLS offers only ``http/1.1`` by ALPN, as httpx does
without the ``h2`` extra). A kept-alive connection the server closed just as it was reused (nothing
answered) is replaced and the request sent once more. Errors are httpx's: ConnectError/ConnectTimeout,
ReadError/ReadTimeout, WriteError/WriteTimeout, PoolTimeout, RemoteProtocolError (e.g. the server closed
mid-stream).
"""

from __future__ import annotations

import asyncio
import ssl
import time
import urllib.request
from collections import deque
from collections.abc import AsyncIterator
from typing import Any

import httpx

Origin = tuple[str, str, int]  # (scheme, host, port)

_READ_SIZE = 65536
_MAX_HEAD_LINES = 200
_NO_BODY_STATUS = (204, 304)


def env_proxy_applies(url: httpx.URL) -> bool:
    """True when HTTP(S)_PROXY / ALL_PROXY (as urllib reads them, minus NO_PROXY) would send ``url``
    through a proxy; the lean transport connects directly, so callers then leave the request to httpx."""
    proxies = urllib.request.getproxies_environment()
    if not (proxies.get(url.scheme) or proxies.get("all")):
        return False
    return not urllib.request.proxy_bypass_environment(url.host, proxies)


class _Connection:
    __slots__ = ("origin", "reader", "writer", "idle_since", "reused")

    def __init__(self, origin: Origin, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.origin, self.reader, self.writer = origin, reader, writer
        self.idle_since = 0.0
        self.reused = False

    def usable(self, now: float, expiry: float) -> bool:
        # A server that closed an idle connection has left EOF (or a parting 408) in the reader's buffer;
        # StreamReader has no public way to see either without reading.
        reader = self.reader
        return (
            now - self.idle_since < expiry
            and not self.writer.transport.is_closing()
            and not reader._eof
            and not reader._buffer
        )

    def close(self) -> None:
        self.writer.transport.abort()


class _ProtocolProblem(Exception):
    """The answer is not HTTP/1.1 this transport understands; the origin is handed to httpx."""


class LeanTransport(httpx.AsyncBaseTransport):
    """HTTP/1.1 over asyncio streams with a pool of at most ``max_connections`` connections (idle ones are
    kept ``keepalive_expiry`` seconds). ``ssl_context`` defaults to ``ssl.create_default_context()``.
    Honours httpx's per-request timeouts (connect, read per network read, write, pool)."""

    def __init__(
        self,
        *,
        ssl_context: ssl.SSLContext | None = None,
        max_connections: int = 100,
        keepalive_expiry: float = 5.0,
    ) -> None:
        self._ssl = ssl_context if ssl_context is not None else ssl.create_default_context()
        self._ssl.set_alpn_protocols(["http/1.1"])
        self._max = max(1, max_connections)
        self._expiry = keepalive_expiry
        self._idle: dict[Origin, list[_Connection]] = {}
        self._open = 0
        self._waiters: deque[asyncio.Future[None]] = deque()
        self._fallback: httpx.AsyncHTTPTransport | None = None
        self._fallback_origins: set[Origin] = set()
        self._closed = False

    # -- httpx API ---------------------------------------------------------------------------------------
    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        url = request.url
        scheme = url.scheme
        origin: Origin = (scheme, url.host, url.port or (443 if scheme == "https" else 80))
        if (
            scheme not in ("http", "https")
            or origin in self._fallback_origins
            or not isinstance(request.stream, httpx.ByteStream)
            or "transfer-encoding" in request.headers
        ):
            return await self._fallback_transport().handle_async_request(request)
        timeouts: dict[str, float | None] = request.extensions.get("timeout") or {}
        try:
            conn, status, reason, headers, version = await self._exchange(origin, request, timeouts)
            try:
                body = self._body_for(conn, request, status, headers, version, timeouts.get("read"))
            except _ProtocolProblem:
                self._discard(conn)
                raise
        except _ProtocolProblem as exc:
            self._fallback_origins.add(origin)
            raise httpx.RemoteProtocolError(
                f"unsupported HTTP answer from {url.host} ({exc}); using httpx's transport from now on",
                request=request,
            ) from None
        return httpx.Response(
            status,
            headers=headers,
            stream=body,
            extensions={"http_version": version, "reason_phrase": reason},
        )

    async def _exchange(
        self, origin: Origin, request: httpx.Request, timeouts: dict[str, float | None]
    ) -> tuple[_Connection, int, bytes, list[tuple[bytes, bytes]], bytes]:
        head = self._encode_head(request)
        for _ in range(2):
            conn = await self._acquire(origin, request, timeouts)
            try:
                await self._write(conn, head, timeouts.get("write"), request)
                return (conn, *await self._read_head(conn, timeouts.get("read"), request))
            except _StaleConnection:
                # The server closed a kept-alive connection as we reused it and answered nothing: send
                # the request once more on a new connection (what browsers and Go's net/http do).
                self._discard(conn)
            except BaseException:
                self._discard(conn)
                raise
        raise httpx.RemoteProtocolError("server disconnected without sending a response", request=request)

    async def aclose(self) -> None:
        self._closed = True
        for conns in self._idle.values():
            for conn in conns:
                conn.close()
        self._idle.clear()
        if self._fallback is not None:
            await self._fallback.aclose()

    # -- pool --------------------------------------------------------------------------------------------
    def _fallback_transport(self) -> httpx.AsyncHTTPTransport:
        if self._fallback is None:
            self._fallback = httpx.AsyncHTTPTransport(verify=self._ssl, limits=httpx.Limits(max_connections=self._max))
        return self._fallback

    async def _acquire(self, origin: Origin, request: httpx.Request, timeouts: dict[str, float | None]) -> _Connection:
        while True:
            idle = self._idle.get(origin)
            if idle:
                now = time.monotonic()
                while idle:
                    conn = idle.pop()
                    if conn.usable(now, self._expiry):
                        conn.reused = True
                        return conn
                    self._discard(conn, wake=False)
            if self._open >= self._max:
                self._close_one_idle()
            if self._open < self._max:
                self._open += 1
                try:
                    return await self._connect(origin, request.url, timeouts.get("connect"), request)
                except BaseException:
                    self._open -= 1
                    self._wake()
                    raise
            waiter = asyncio.get_running_loop().create_future()
            self._waiters.append(waiter)
            try:
                async with asyncio.timeout(timeouts.get("pool")):
                    await waiter
            except BaseException as exc:
                if waiter.done() and not waiter.cancelled():
                    self._wake()  # woken and cancelled at once: pass the free slot on
                else:
                    waiter.cancel()
                if isinstance(exc, TimeoutError):
                    raise httpx.PoolTimeout("no free connection in time", request=request) from None
                raise

    def _close_one_idle(self) -> None:
        for conns in self._idle.values():
            if conns:
                self._discard(conns.pop(0), wake=False)
                return

    async def _connect(
        self, origin: Origin, url: httpx.URL, timeout: float | None, request: httpx.Request
    ) -> _Connection:
        scheme, _, port = origin
        host = url.raw_host.decode("ascii")
        tls: dict[str, Any] = {"ssl": self._ssl, "server_hostname": host} if scheme == "https" else {}
        try:
            async with asyncio.timeout(timeout):
                reader, writer = await asyncio.open_connection(host, port, **tls)
        except TimeoutError:
            raise httpx.ConnectTimeout(f"connecting to {host}:{port} timed out", request=request) from None
        except (OSError, ssl.SSLError) as exc:
            raise httpx.ConnectError(f"cannot connect to {host}:{port}: {exc}", request=request) from None
        return _Connection(origin, reader, writer)

    def release(self, conn: _Connection, reusable: bool) -> None:
        """Put a connection whose response is finished back in the pool, or close it."""
        if not reusable or self._closed or conn.writer.transport.is_closing():
            self._discard(conn)
            return
        conn.idle_since = time.monotonic()
        self._idle.setdefault(conn.origin, []).append(conn)
        self._wake()

    def _discard(self, conn: _Connection, wake: bool = True) -> None:
        conn.close()
        self._open -= 1
        if wake:
            self._wake()

    def _wake(self) -> None:
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)
                return

    # -- the exchange ------------------------------------------------------------------------------------
    @staticmethod
    def _encode_head(request: httpx.Request) -> bytes:
        url = request.url
        parts = [request.method.encode("ascii"), b" ", url.raw_path, b" HTTP/1.1\r\n"]
        for name, value in request.headers.raw:
            parts += (name, b": ", value, b"\r\n")
        parts += (b"\r\n", request.content)
        return b"".join(parts)

    @staticmethod
    async def _write(conn: _Connection, data: bytes, timeout: float | None, request: httpx.Request) -> None:
        writer = conn.writer
        try:
            writer.write(data)
            if writer.transport.get_write_buffer_size():
                async with asyncio.timeout(timeout):
                    await writer.drain()
        except TimeoutError:
            raise httpx.WriteTimeout("sending the request timed out", request=request) from None
        except OSError as exc:
            if conn.reused:
                raise _StaleConnection from None
            raise httpx.WriteError(f"sending the request failed: {exc}", request=request) from None

    async def _read_head(
        self, conn: _Connection, timeout: float | None, request: httpx.Request
    ) -> tuple[int, bytes, list[tuple[bytes, bytes]], bytes]:
        reader = conn.reader
        first = True
        try:
            async with asyncio.timeout(timeout):
                while True:  # skip interim 1xx answers (100 Continue, 103 Early Hints)
                    try:
                        line = await reader.readuntil(b"\n")
                    except asyncio.IncompleteReadError as exc:
                        if first and not exc.partial and conn.reused:
                            raise _StaleConnection from None
                        raise httpx.RemoteProtocolError(
                            "server disconnected without sending a response", request=request
                        ) from None
                    first = False
                    version, _, rest = line.rstrip().partition(b" ")
                    code, _, reason = rest.partition(b" ")
                    if version not in (b"HTTP/1.1", b"HTTP/1.0") or len(code) != 3 or not code.isdigit():
                        raise _ProtocolProblem(f"status line {line[:40]!r}")
                    headers: list[tuple[bytes, bytes]] = []
                    while True:
                        line = await reader.readuntil(b"\n")
                        if line in (b"\r\n", b"\n"):
                            break
                        name, colon, value = line.partition(b":")
                        if not colon or not name or name[0] in b" \t" or len(headers) > _MAX_HEAD_LINES:
                            raise _ProtocolProblem(f"header line {line[:40]!r}")
                        headers.append((name.rstrip(), value.strip()))
                    status = int(code)
                    if status >= 200:
                        return status, reason, headers, version
                    if status == 101:
                        raise _ProtocolProblem("101 Switching Protocols")
        except TimeoutError:
            raise httpx.ReadTimeout("waiting for the response timed out", request=request) from None
        except asyncio.IncompleteReadError:
            raise httpx.RemoteProtocolError(
                "server disconnected in the middle of the response head", request=request
            ) from None
        except asyncio.LimitOverrunError:
            raise _ProtocolProblem("a header line longer than 64 KiB") from None
        except ConnectionError as exc:
            if first and conn.reused:
                raise _StaleConnection from None
            raise httpx.ReadError(f"reading the response failed: {exc}", request=request) from None

    def _body_for(
        self,
        conn: _Connection,
        request: httpx.Request,
        status: int,
        headers: list[tuple[bytes, bytes]],
        version: bytes,
        timeout: float | None,
    ) -> _Body:
        length: int | None = None
        chunked = False
        keep_alive = version == b"HTTP/1.1"
        for name, value in headers:
            lower = name.lower()
            if lower == b"content-length":
                if not value.isdigit() or (length is not None and int(value) != length):
                    raise _ProtocolProblem(f"Content-Length {value[:20]!r}")
                length = int(value)
            elif lower == b"transfer-encoding":
                if value.lower() != b"chunked":
                    raise _ProtocolProblem(f"Transfer-Encoding {value[:30]!r}")
                chunked = True
            elif lower == b"connection":
                tokens = value.lower()
                if b"close" in tokens:
                    keep_alive = False
                elif b"keep-alive" in tokens:
                    keep_alive = True
        if request.method == "HEAD" or status in _NO_BODY_STATUS:
            length, chunked = 0, False
        elif chunked:
            length = None
        elif length is None:
            keep_alive = False  # the body ends when the server closes the connection
        return _Body(self, conn, request, length, chunked, keep_alive, timeout)


class _StaleConnection(Exception):
    pass


class _Body(httpx.AsyncByteStream):
    """A response body, yielded one piece per network read; returns the connection to the pool when the
    body was read to its end and closes it otherwise."""

    def __init__(
        self,
        pool: LeanTransport,
        conn: _Connection,
        request: httpx.Request,
        length: int | None,
        chunked: bool,
        keep_alive: bool,
        timeout: float | None,
    ) -> None:
        self._pool, self._conn, self._request = pool, conn, request
        self._length, self._chunked, self._keep_alive = length, chunked, keep_alive
        self._timeout = timeout
        self._complete = False
        self._released = False

    async def _read(self) -> bytes:
        reader = self._conn.reader
        try:
            if reader._buffer:  # no wait, so no timer to arm
                return await reader.read(_READ_SIZE)
            async with asyncio.timeout(self._timeout):
                return await reader.read(_READ_SIZE)
        except TimeoutError:
            raise httpx.ReadTimeout("the response stalled (read timeout)", request=self._request) from None
        except (OSError, ssl.SSLError) as exc:
            raise httpx.ReadError(f"reading the response failed: {exc}", request=self._request) from None

    def _incomplete(self) -> httpx.RemoteProtocolError:
        return httpx.RemoteProtocolError(
            "peer closed connection without sending complete message body", request=self._request
        )

    async def __aiter__(self) -> AsyncIterator[bytes]:
        if self._chunked:
            async for piece in self._iter_chunked():
                yield piece
        elif self._length is None:
            while data := await self._read():
                yield data
        else:
            left = self._length
            while left > 0:
                data = await self._read()
                if not data:
                    raise self._incomplete()
                if len(data) > left:
                    raise httpx.RemoteProtocolError("more body than Content-Length", request=self._request)
                left -= len(data)
                yield data
        self._complete = True
        await self.aclose()

    async def _iter_chunked(self) -> AsyncIterator[bytes]:
        # Parse every complete chunk of one read and yield their payloads joined: an SSE answer arrives as
        # many small chunks, and each yield costs more than the parsing.
        buf = b""
        pos = 0
        left = 0  # payload bytes of the current chunk still to come
        need_crlf = False
        while True:
            data = await self._read()
            if not data:
                raise self._incomplete()
            buf = buf[pos:] + data if pos < len(buf) else data
            pos = 0
            out: list[bytes] = []
            end = len(buf)
            while True:
                if left:
                    take = min(left, end - pos)
                    if take:
                        out.append(buf[pos : pos + take])
                        pos += take
                        left -= take
                    if left:
                        break
                    need_crlf = True
                if need_crlf:
                    if end - pos < 2:
                        break
                    if buf[pos : pos + 2] == b"\r\n":
                        pos += 2
                    elif buf[pos : pos + 1] == b"\n":
                        pos += 1
                    else:
                        raise httpx.RemoteProtocolError("malformed chunked body", request=self._request)
                    need_crlf = False
                newline = buf.find(b"\n", pos)
                if newline < 0:
                    if end - pos > 1024:
                        raise httpx.RemoteProtocolError("malformed chunk size", request=self._request)
                    break
                size_text = buf[pos:newline].split(b";", 1)[0].strip()
                try:
                    size = int(size_text, 16)
                except ValueError:
                    raise httpx.RemoteProtocolError("malformed chunk size", request=self._request) from None
                if size == 0:
                    if out:
                        yield out[0] if len(out) == 1 else b"".join(out)
                    await self._read_trailers(buf, newline + 1)
                    return
                pos = newline + 1
                left = size
            if out:
                yield out[0] if len(out) == 1 else b"".join(out)

    async def _read_trailers(self, buf: bytes, pos: int) -> None:
        while True:
            newline = buf.find(b"\n", pos)
            if newline < 0:
                data = await self._read()
                if not data:
                    raise self._incomplete()
                buf, pos = buf[pos:] + data, 0
                continue
            line = buf[pos:newline]
            pos = newline + 1
            if line in (b"", b"\r"):
                if pos < len(buf):
                    self._keep_alive = False  # bytes after the end of the answer: do not trust the connection
                return

    async def aclose(self) -> None:
        if not self._released:
            self._released = True
            self._pool.release(self._conn, self._complete and self._keep_alive)
