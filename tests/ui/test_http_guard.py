"""The guard in front of Streamlit, as plain ASGI: headers on every answer, a browser cookie, uploads only
from an admin's session in its own browser, attachments only to a lead's or admin's browser."""

from __future__ import annotations

import asyncio
from typing import Any

from reviewer_app.domain.enums import Role
from reviewer_app.ui.http_guard import BROWSER_COOKIE, CONTENT_SECURITY_POLICY, Grants, GuardMiddleware, browser_key

COOKIE = "c" * 43
BROWSER = browser_key(COOKIE)


def _downstream(content_type: bytes = b"text/html", attachment: bool = False) -> Any:
    async def app(scope: Any, receive: Any, send: Any) -> None:
        headers = [(b"content-type", content_type)]
        if attachment:
            headers.append((b"content-disposition", b'attachment; filename="ratings.csv"'))
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": b"secret,data\n", "more_body": False})

    return app


def _call(app: Any, path: str, method: str = "GET", cookie: str | None = None) -> tuple[int, dict[bytes, bytes], bytes]:
    headers = [(b"cookie", f"{BROWSER_COOKIE}={cookie}".encode())] if cookie else []
    scope = {"type": "http", "path": path, "method": method, "headers": headers, "scheme": "http"}
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    asyncio.run(app(scope, receive, send))
    start = sent[0]
    body = b"".join(m.get("body", b"") for m in sent[1:])
    return start["status"], dict(start["headers"]), body


def test_every_answer_carries_the_policy_and_a_new_browser_gets_a_cookie() -> None:
    guard = GuardMiddleware(_downstream(), Grants())
    status, headers, _ = _call(guard, "/")
    assert status == 200 and headers[b"content-security-policy"] == CONTENT_SECURITY_POLICY.encode()
    assert headers[b"referrer-policy"] == b"no-referrer" and headers[b"x-content-type-options"] == b"nosniff"
    cookie = headers[b"set-cookie"].decode()
    assert cookie.startswith(f"{BROWSER_COOKIE}=") and "HttpOnly" in cookie and "SameSite=Lax" in cookie
    _, headers, _ = _call(guard, "/", cookie=COOKIE)
    assert b"set-cookie" not in headers  # a browser keeps its cookie
    _, headers, _ = _call(GuardMiddleware(_downstream(b"application/javascript"), Grants()), "/static/x.js")
    assert b"set-cookie" not in headers and b"content-security-policy" in headers


def test_uploads_only_from_an_admins_session_in_its_own_browser() -> None:
    grants = Grants()
    guard = GuardMiddleware(_downstream(b"text/plain"), grants)
    path = "/_stcore/upload_file/session-1/file-1"
    assert _call(guard, path, "PUT")[0] == 403  # nobody signed in
    assert BROWSER is not None
    grants.grant("session-1", BROWSER, Role.LEAD)
    assert _call(guard, path, "PUT", COOKIE)[0] == 403  # a lead is not an admin
    grants.grant("session-1", BROWSER, Role.ADMIN)
    assert _call(guard, path, "PUT", COOKIE)[0] == 200
    assert _call(guard, path, "PUT", "d" * 43)[0] == 403  # the session id from another browser
    assert _call(guard, path, "PUT")[0] == 403  # no cookie
    assert _call(guard, "/_stcore/upload_file/session-2/file-1", "PUT", COOKIE)[0] == 403  # another session
    grants.drop("session-1")
    assert _call(guard, path, "PUT", COOKIE)[0] == 403  # signed out
    assert _call(guard, path, "OPTIONS")[0] == 200  # a preflight is not an upload


def test_attachments_only_to_a_lead_or_admin_browser() -> None:
    grants = Grants()
    guard = GuardMiddleware(_downstream(b"text/csv", attachment=True), grants)
    assert _call(guard, "/media/abc.csv", cookie=COOKIE)[:3:2] == (404, b"Not found")
    assert BROWSER is not None
    grants.grant("s-reviewer", BROWSER, Role.REVIEWER)
    assert _call(guard, "/media/abc.csv", cookie=COOKIE)[0] == 404
    grants.grant("s-lead", BROWSER, Role.LEAD)
    assert _call(guard, "/media/abc.csv", cookie=COOKIE)[:3:2] == (200, b"secret,data\n")
    assert _call(guard, "/media/abc.csv", cookie="d" * 43)[0] == 404
    images = GuardMiddleware(_downstream(b"image/png"), Grants())
    assert _call(images, "/media/chart.png")[0] == 200  # the batch's images are no attachments


def test_grants_lapse() -> None:
    grants = Grants(seconds=-1)
    grants.grant("s", "b", Role.ADMIN)
    assert grants.session_role("s", "b") is None and grants.browser_role("b") is None
    assert browser_key("short") is None and browser_key(None) is None and browser_key(COOKIE) == BROWSER
