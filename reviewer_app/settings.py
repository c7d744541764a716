"""Configuration from environment variables, each with a documented default (see README, "Configuration").

Read at call time rather than import time so tests and the CLI can point one process at another database.
"""

from __future__ import annotations

import os
from pathlib import Path

from reviewer_app.errors import ConfigError


def data_dir() -> Path:
    """``BLIND_REVIEW_DATA_DIR`` (default ``./data``): SQLite file and content-addressed images live here."""
    return Path(os.environ.get("BLIND_REVIEW_DATA_DIR", "data")).resolve()


def database_url() -> str:
    """``BLIND_REVIEW_DATABASE_URL`` (default: SQLite file ``blind_review.db`` in the data directory)."""
    url = os.environ.get("BLIND_REVIEW_DATABASE_URL", "").strip()
    if url:
        if url.startswith("postgres://"):
            url = "postgresql+psycopg://" + url[len("postgres://") :]
        elif url.startswith("postgresql://"):
            url = "postgresql+psycopg://" + url[len("postgresql://") :]
        return url
    return f"sqlite:///{data_dir() / 'blind_review.db'}"


def public_base_url() -> str:
    """``BLIND_REVIEW_PUBLIC_URL`` (default ``http://localhost:8501``): the start of printed sign-in links."""
    return os.environ.get("BLIND_REVIEW_PUBLIC_URL", "http://localhost:8501").rstrip("/")


def reservation_seconds() -> int:
    """``BLIND_REVIEW_RESERVATION_SECONDS`` (default 1800): how long a claimed item is held for a reviewer
    who has not submitted it before another reviewer may take the slot."""
    raw = os.environ.get("BLIND_REVIEW_RESERVATION_SECONDS", "1800")
    try:
        value = int(raw)
    except ValueError as exc:
        raise ConfigError(f"BLIND_REVIEW_RESERVATION_SECONDS must be a whole number of seconds, not {raw!r}") from exc
    if value <= 0:
        raise ConfigError("BLIND_REVIEW_RESERVATION_SECONDS must be positive")
    return value


def max_image_bytes() -> int:
    """``BLIND_REVIEW_MAX_IMAGE_MB`` (default 10): larger images are refused at load."""
    return int(float(os.environ.get("BLIND_REVIEW_MAX_IMAGE_MB", "10")) * 1024 * 1024)


def max_output_bytes() -> int:
    """``BLIND_REVIEW_MAX_OUTPUT_MB`` (default 5): a longer output text is refused at load, since no reviewer
    can judge it in a browser and it is almost always a generation bug."""
    return int(float(os.environ.get("BLIND_REVIEW_MAX_OUTPUT_MB", "5")) * 1024 * 1024)
