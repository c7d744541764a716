"""Configuration from environment variables, each with a documented default (see README, "Configuration").

Read at call time rather than import time so tests and the CLI can point one process at another database.
A value that cannot be used raises :class:`ConfigError` naming the variable, never a bare ``ValueError``.

Logging: ``BLIND_REVIEW_LOG_LEVEL`` (default ``WARNING``; ``DEBUG``, ``INFO``, ``WARNING``, ``ERROR`` or
``CRITICAL``) sets the level of the ``reviewer_app`` loggers, for the CLI and the web app alike; both call
:func:`configure_logging` once at start. The default is WARNING for the CLI too, because every command
already prints what it did, and INFO lines would repeat it on standard error. At WARNING the log holds
failed sign-ins (with the first 8 hex digits of the token's SHA-256, never the token); at INFO also batch
loads and rating imports (name and counts), revoked links and pool claims (reviewer and assignment ids).
No log line ever names a model together with a reviewer, and none carries a token or a sign-in link.
"""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path

from reviewer_app.errors import ConfigError

LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")


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
    return _whole_number("BLIND_REVIEW_RESERVATION_SECONDS", "1800", "seconds")


def allocation_seconds() -> int:
    """``BLIND_REVIEW_ALLOCATION_SECONDS`` (default 30): how often the served app refreshes the scenario states
    of its open adaptive batches (only those whose ratings changed; README, "Adaptive allocation")."""
    return _whole_number("BLIND_REVIEW_ALLOCATION_SECONDS", "30", "seconds")


def webhook_seconds() -> int:
    """``BLIND_REVIEW_WEBHOOK_SECONDS`` (default 10): how often the served app looks for webhook events (a batch
    complete, a verdict moved) and sends the outbox's due deliveries (README, "Webhooks")."""
    return _whole_number("BLIND_REVIEW_WEBHOOK_SECONDS", "10", "seconds")


def judge_key_vars() -> frozenset[str]:
    """``BLIND_REVIEW_JUDGE_KEY_VARS`` (default: none): the environment variables a judge run started through the
    API may read its model's key from (comma-separated, e.g. ``OPENAI_API_KEY``). The CLI reads any variable its
    user names; the API does not, or a token could have the server send any of its secrets to a URL of its
    choosing."""
    raw = os.environ.get("BLIND_REVIEW_JUDGE_KEY_VARS", "")
    return frozenset(name.strip() for name in raw.split(",") if name.strip())


def max_image_bytes() -> int:
    """``BLIND_REVIEW_MAX_IMAGE_MB`` (default 10): larger images are refused at load."""
    return _megabytes("BLIND_REVIEW_MAX_IMAGE_MB", "10")


def max_output_bytes() -> int:
    """``BLIND_REVIEW_MAX_OUTPUT_MB`` (default 5): a longer output text is refused at load, since no reviewer
    can judge it in a browser and it is almost always a generation bug."""
    return _megabytes("BLIND_REVIEW_MAX_OUTPUT_MB", "5")


def max_upload_mb() -> int:
    """``BLIND_REVIEW_MAX_UPLOAD_MB`` (default 200): the largest file the web server accepts in one upload
    (Streamlit's ``server.maxUploadSize``, a whole number of megabytes)."""
    return _whole_number("BLIND_REVIEW_MAX_UPLOAD_MB", "200", "megabytes")


def max_unpacked_bytes() -> int:
    """``BLIND_REVIEW_MAX_UNPACKED_MB`` (default 1024): an uploaded zip that unpacks to more is refused."""
    return _megabytes("BLIND_REVIEW_MAX_UNPACKED_MB", "1024")


def max_zip_members() -> int:
    """``BLIND_REVIEW_MAX_ZIP_FILES`` (default 20000): an uploaded zip with more entries is refused."""
    return _whole_number("BLIND_REVIEW_MAX_ZIP_FILES", "20000", "files")


def link_days() -> int | None:
    """``BLIND_REVIEW_LINK_DAYS`` (default: unset, links never expire): a sign-in link issued more than this
    many days ago is refused; the person asks their admin for a new one."""
    if not os.environ.get("BLIND_REVIEW_LINK_DAYS", "").strip():
        return None
    return _whole_number("BLIND_REVIEW_LINK_DAYS", "", "days")


def _whole_number(variable: str, default: str, unit: str) -> int:
    raw = os.environ.get(variable, "").strip() or default
    try:
        value = int(raw)
    except ValueError as exc:
        raise ConfigError(f"{variable} must be a whole number of {unit}, not {raw!r}") from exc
    if value <= 0:
        raise ConfigError(f"{variable} must be a positive number of {unit}, not {raw!r}")
    return value


def max_image_pixels() -> int:
    """``BLIND_REVIEW_MAX_IMAGE_PIXELS`` (default 50 megapixels, written as a number of megapixels such as
    50 or 0.5): an image with more pixels is refused at load, however few bytes it has (a 445 KB PNG can
    decode to 12000x12000)."""
    return int(_positive("BLIND_REVIEW_MAX_IMAGE_PIXELS", "50", "megapixels such as 50 or 0.5") * 1_000_000)


def max_comment_chars() -> int:
    """``BLIND_REVIEW_MAX_COMMENT_CHARS`` (default 5000): the longest comment (or "can't judge" reason) a
    reviewer may submit."""
    return _whole_number("BLIND_REVIEW_MAX_COMMENT_CHARS", "5000", "characters")


def _megabytes(variable: str, default: str) -> int:
    return int(_positive(variable, default, "megabytes such as 10 or 0.5") * 1024 * 1024)


def _positive(variable: str, default: str, unit: str) -> float:
    """A positive, finite number from ``variable`` (set but empty is an error, not the default); ``unit``
    words the message ("megabytes such as 10")."""
    raw = os.environ.get(variable, default)
    try:
        value = float(raw)
    except ValueError as exc:
        raise ConfigError(f"{variable} must be a number of {unit}, not {raw!r}") from exc
    if not value > 0 or value == float("inf"):  # also refuses nan
        raise ConfigError(f"{variable} must be a positive number of {unit.split(' such as ')[0]}, not {raw!r}")
    return value


def log_level() -> int:
    """``BLIND_REVIEW_LOG_LEVEL`` (default ``WARNING``): see the module docstring for what each level logs."""
    raw = os.environ.get("BLIND_REVIEW_LOG_LEVEL", "").strip() or "WARNING"
    name = raw.upper()
    if name not in LOG_LEVELS:
        raise ConfigError(f"BLIND_REVIEW_LOG_LEVEL must be one of {', '.join(LOG_LEVELS)}, not {raw!r}")
    return logging.getLevelNamesMapping()[name]


class _StderrHandler(logging.Handler):
    """Writes to whatever ``sys.stderr`` is at the moment of writing (a test's capture, a redirected CLI),
    rather than to the stream that was current when logging was configured."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            sys.stderr.write(self.format(record) + "\n")
        except Exception:  # noqa: BLE001 - logging must never break the command or the page
            self.handleError(record)


def configure_logging() -> None:
    """Set the ``reviewer_app`` loggers to ``BLIND_REVIEW_LOG_LEVEL`` and write them to standard error.

    Called once by the CLI's ``main`` and by the web app; calling it again only updates the level. The
    records still propagate to the root logger, so a host that configures logging itself (or pytest's
    ``caplog``) sees them too. Raises :class:`ConfigError` for an unknown level.
    """
    level = log_level()
    logger = logging.getLogger("reviewer_app")
    logger.setLevel(level)
    if not any(isinstance(h, _StderrHandler) for h in logger.handlers):
        handler = _StderrHandler()
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        logger.addHandler(handler)
