"""What the web server enforces in front of Streamlit, for every HTTP request (``blind-review serve``).

Streamlit has no setting for response headers or for who may upload, so ``reviewer_app/ui/server.py`` serves
the app through Streamlit's own ``st.App`` with :class:`GuardMiddleware` in front. It does four things:

* **Content-Security-Policy** on every response: scripts, styles, fonts, images, frames and connections
  from the app's own origin only (plus ``data:``/``blob:`` images, which carry no address). Even if a
  remote image slipped past the renderer, the browser would refuse to fetch it: nobody outside learns who
  reviews when. ``Referrer-Policy: no-referrer`` keeps the app's addresses (with their sign-in) out of any
  site a reviewer follows a link to.
* **A browser cookie** (``blind_review_browser``, random, HttpOnly, SameSite=Lax): the one thing that tells
  one browser from another. Sign-in sessions are bound to it (a session address copied to another
  browser signs nobody in), and signing out refuses the link in that browser.
* **Uploads** (``PUT /_stcore/upload_file/<session>/<file>``) only from a Streamlit session whose script
  run has signed in an admin in this same browser: Streamlit itself takes files from any open page,
  signed in or not.
* **Downloads** (``/media/...`` answers marked as attachments: the lead's unblinded export) only to a
  browser signed in as a lead or admin; anyone else gets 404, whoever learnt the address.

The grants live in this process (:data:`GRANTS`): the app script records who is signed in in which
Streamlit session and browser on every run (``app.py``), and they lapse an hour after that session's
last run. Streamlit's sessions, uploads and media files are per process too, which is why a load balancer
needs sticky sessions (README).

This module imports no Streamlit: it is plain ASGI, and the grants are plain data.
"""

from __future__ import annotations

import hashlib
import re
import secrets
import threading
import time
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass
from http.cookies import SimpleCookie
from typing import Any

from reviewer_app.domain.enums import Role

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

BROWSER_COOKIE = "blind_review_browser"
COOKIE_MAX_AGE = 400 * 24 * 3600  # the longest a browser keeps a cookie (Chrome caps at 400 days)
GRANT_SECONDS = 3600

CONTENT_SECURITY_POLICY = "; ".join(
    [
        "default-src 'self'",
        # Streamlit's page has an inline bootstrap script, its components (our key handler) are inline
        # same-origin frames, and it compiles WebAssembly of its own; no script from another origin runs.
        "script-src 'self' 'unsafe-inline' 'wasm-unsafe-eval'",
        "style-src 'self' 'unsafe-inline'",
        "img-src 'self' data: blob:",
        "font-src 'self' data:",
        "media-src 'self' data: blob:",
        "connect-src 'self'",
        "frame-src 'self' data: blob:",
        "worker-src 'self' blob:",
        "object-src 'none'",
        "base-uri 'self'",
        "form-action 'self'",
        "frame-ancestors 'self'",
    ]
)

SECURITY_HEADERS: tuple[tuple[bytes, bytes], ...] = (
    (b"content-security-policy", CONTENT_SECURITY_POLICY.encode()),
    (b"referrer-policy", b"no-referrer"),
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"SAMEORIGIN"),
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"permissions-policy", b"camera=(), microphone=(), geolocation=(), payment=(), usb=()"),
)

_UPLOAD = re.compile(r"/_stcore/upload_file/(?P<session>[^/]+)/[^/]+/?$")
_MEDIA = re.compile(r"/media/[^/]+$")
_COOKIE_VALUE = re.compile(r"[A-Za-z0-9_-]{20,100}")


def browser_key(cookie_value: object) -> str | None:
    """What the server keeps of a browser cookie: its SHA-256, or None for a missing or malformed cookie."""
    if not isinstance(cookie_value, str) or not _COOKIE_VALUE.fullmatch(cookie_value):
        return None
    return hashlib.sha256(cookie_value.encode()).hexdigest()


@dataclass(frozen=True)
class _Grant:
    browser: str
    role: Role
    until: float


class Grants:
    """Who is signed in, as what, in which Streamlit session and browser (by the cookie's hash).

    Thread-safe: the script threads write, the server's event loop reads."""

    def __init__(self, seconds: float = GRANT_SECONDS) -> None:
        self._seconds = seconds
        self._by_session: dict[str, _Grant] = {}
        self._lock = threading.Lock()

    def grant(self, session_id: str, browser: str, role: Role) -> None:
        """Record a signed-in script run (renewed on every run; lapses ``seconds`` after the last)."""
        now = time.monotonic()
        with self._lock:
            self._by_session[session_id] = _Grant(browser, Role(role), now + self._seconds)
            for stale in [s for s, g in self._by_session.items() if g.until < now]:
                del self._by_session[stale]

    def drop(self, session_id: str) -> None:
        """Forget a session's grant (signed out, refused, or never signed in)."""
        with self._lock:
            self._by_session.pop(session_id, None)

    def session_role(self, session_id: str, browser: str | None) -> Role | None:
        """The role signed in in Streamlit session ``session_id``, if it runs in ``browser``."""
        with self._lock:
            found = self._by_session.get(session_id)
        if found is None or browser is None or found.browser != browser or found.until < time.monotonic():
            return None
        return found.role

    def browser_role(self, browser: str | None) -> Role | None:
        """The highest role signed in in any live session of ``browser``."""
        if browser is None:
            return None
        now = time.monotonic()
        with self._lock:
            roles = [g.role for g in self._by_session.values() if g.browser == browser and g.until >= now]
        return max(roles, key=lambda r: r.rank) if roles else None


GRANTS = Grants()


def _cookie(scope: Scope) -> str | None:
    for name, value in scope.get("headers", []):
        if name == b"cookie":
            jar: SimpleCookie = SimpleCookie()
            try:
                jar.load(value.decode("latin-1"))
            except Exception:  # noqa: BLE001 - a malformed Cookie header is the same as none
                return None
            morsel = jar.get(BROWSER_COOKIE)
            return morsel.value if morsel is not None else None
    return None


def _at_least(role: Role | None, needed: Role) -> bool:
    return role is not None and role.rank >= needed.rank


_COOKIES_ISSUED = threading.Event()


def issue_cookies() -> None:
    """Say that this process serves the app behind :class:`GuardMiddleware` (``reviewer_app/ui/server.py`` does,
    once): from then on :func:`cookies_issued` is true for every page of the process."""
    _COOKIES_ISSUED.set()


def cookies_issued() -> bool:
    """Whether this process serves the app behind :class:`GuardMiddleware`, which gives every browser its
    cookie: then a page without one is not a browser that can be told apart (a script on the websocket, or
    cookies refused), and the app signs nobody in there. False in AppTest and a bare ``streamlit run``."""
    return _COOKIES_ISSUED.is_set()


class GuardMiddleware:
    """The ASGI middleware described in the module docstring."""

    def __init__(self, app: ASGIApp, grants: Grants | None = None) -> None:
        self.app = app
        self.grants = grants or GRANTS

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path = str(scope.get("path", ""))
        method = str(scope.get("method", "GET")).upper()
        cookie = _cookie(scope)
        browser = browser_key(cookie)
        upload = _UPLOAD.search(path)
        if upload and method in ("PUT", "POST", "DELETE"):
            if not _at_least(self.grants.session_role(upload.group("session"), browser), Role.ADMIN):
                await _plain(send, 403, b"Uploads are for a signed-in admin's page only.")
                return
        guard_download = bool(_MEDIA.search(path)) and not _at_least(self.grants.browser_role(browser), Role.LEAD)
        new_cookie = None if browser is not None else secrets.token_urlsafe(32)
        secure = scope.get("scheme") == "https"
        refused = False

        async def send_guarded(message: Message) -> None:
            nonlocal refused
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                if guard_download and any(
                    k.lower() == b"content-disposition" and v.lower().startswith(b"attachment") for k, v in headers
                ):
                    refused = True
                    await _plain(send, 404, b"Not found", more=True)
                    return
                headers += SECURITY_HEADERS
                is_html = any(k.lower() == b"content-type" and v.startswith(b"text/html") for k, v in headers)
                if new_cookie is not None and is_html:
                    value = f"{BROWSER_COOKIE}={new_cookie}; Path=/; Max-Age={COOKIE_MAX_AGE}; HttpOnly; SameSite=Lax"
                    headers.append((b"set-cookie", (value + ("; Secure" if secure else "")).encode()))
                message = {**message, "headers": headers}
            elif refused:
                if message["type"] == "http.response.body" and not message.get("more_body", False):
                    await send({"type": "http.response.body", "body": b"", "more_body": False})
                return
            await send(message)

        await self.app(scope, receive, send_guarded)


async def _plain(send: Send, status: int, body: bytes, *, more: bool = False) -> None:
    """A short text answer with the security headers. ``more``: the body's end is sent later."""
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"text/plain; charset=utf-8"),
                (b"content-length", str(len(body)).encode()),
                *SECURITY_HEADERS,
            ],
        }
    )
    await send({"type": "http.response.body", "body": body, "more_body": more})
