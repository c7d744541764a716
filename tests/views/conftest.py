"""The page tests run the real app script through AppTest (helpers in :mod:`tests.support.apptest`).

The database fixtures come from ``tests/conftest.py``: a test that asks for ``demo`` gets a copy of the demo
database, seeded once per session, as its ``engine``.
"""

from __future__ import annotations

from tests.support.apptest import APP, app_for, sent_text, state_text

__all__ = ["APP", "app_for", "sent_text", "state_text"]
