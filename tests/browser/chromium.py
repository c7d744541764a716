"""Kept for tests/aggregation/test_report.py; the settings live in :mod:`tests.support.chromium`."""

from __future__ import annotations

from tests.support.app_server import free_port
from tests.support.chromium import CHROMIUM, CHROMIUM_ARGS

__all__ = ["CHROMIUM", "CHROMIUM_ARGS", "free_port"]
