"""What `blind-review serve` runs: Streamlit's server for ``app.py``, with our guard in front.

``streamlit run reviewer_app/ui/server.py`` finds the ``st.App`` below and serves ``app.py`` through it, so
every HTTP request passes :class:`reviewer_app.ui.http_guard.GuardMiddleware` (security headers, the browser
cookie, who may upload and download); the REST API (:mod:`reviewer_app.api`) is mounted at ``/api/v1`` in the
same app. Anything a page does not catch itself, in the script or in a
widget's callback, ends in :func:`show_unexpected_error`: one clear message, the details in the log.
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st
from starlette.middleware import Middleware

from reviewer_app.api import api_route
from reviewer_app.results.allocation import start_refresher
from reviewer_app.results.webhook_watch import start_webhooks
from reviewer_app.settings import database_url
from reviewer_app.ui.components.failure import show_unexpected_error
from reviewer_app.ui.http_guard import GuardMiddleware, issue_cookies
from storage.engine import get_engine

APP = Path(__file__).resolve().with_name("app.py")


def _on_script_error(exc: Exception) -> bool:
    show_unexpected_error(exc)
    return True  # shown: Streamlit's own exception box (with its traceback) is not drawn


issue_cookies()  # every browser gets its cookie here: a page without one is signed in nowhere
# Adaptive pools' scenario states, refreshed in the background while the server runs (a claim only reads them).
# Here, not in app.py: the page tests run app.py alone and must not leave threads behind on their databases.
engine = get_engine(database_url())
start_refresher(engine)
start_webhooks(engine)  # the outbox's deliveries and the events a look finds (batch complete, verdict moved)
# The REST API beside the pages: one port, one deployment, behind the same guard (security headers); it
# signs callers in by their bearer token, never by the browser cookie.
app = st.App(
    APP,
    routes=[api_route(engine)],
    middleware=[Middleware(GuardMiddleware)],
    on_script_error=_on_script_error,
)
