"""Settings: a bad environment variable is a ConfigError naming it; logging is configured once, by level."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator

import pytest

from reviewer_app import settings
from reviewer_app.errors import ConfigError


@pytest.fixture
def app_logger() -> Iterator[logging.Logger]:
    """The ``reviewer_app`` logger, put back as it was (configure_logging changes a process-wide logger)."""
    logger = logging.getLogger("reviewer_app")
    level, handlers = logger.level, list(logger.handlers)
    yield logger
    logger.setLevel(level)
    logger.handlers[:] = handlers


@pytest.mark.parametrize(
    "variable,read",
    [
        ("BLIND_REVIEW_MAX_IMAGE_MB", settings.max_image_bytes),
        ("BLIND_REVIEW_MAX_OUTPUT_MB", settings.max_output_bytes),
    ],
)
@pytest.mark.parametrize("value", ["ten", "", "-1", "0", "nan", "inf"])
def test_a_bad_size_names_its_variable(
    monkeypatch: pytest.MonkeyPatch, variable: str, read: Callable[[], int], value: str
) -> None:
    monkeypatch.setenv(variable, value)
    with pytest.raises(ConfigError, match=f"^{variable} must be a"):
        read()


def test_sizes_read_fractions_of_a_megabyte(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BLIND_REVIEW_MAX_IMAGE_MB", "0.5")
    assert settings.max_image_bytes() == 512 * 1024
    monkeypatch.delenv("BLIND_REVIEW_MAX_OUTPUT_MB", raising=False)
    assert settings.max_output_bytes() == 5 * 1024 * 1024


def test_log_level_defaults_to_warning_and_refuses_unknown_names(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("BLIND_REVIEW_LOG_LEVEL", raising=False)
    assert settings.log_level() == logging.WARNING
    monkeypatch.setenv("BLIND_REVIEW_LOG_LEVEL", "debug")
    assert settings.log_level() == logging.DEBUG
    monkeypatch.setenv("BLIND_REVIEW_LOG_LEVEL", "loud")
    with pytest.raises(ConfigError, match="BLIND_REVIEW_LOG_LEVEL must be one of DEBUG, INFO, WARNING, ERROR"):
        settings.log_level()


def test_configure_logging_writes_to_the_current_stderr_once(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], app_logger: logging.Logger
) -> None:
    monkeypatch.setenv("BLIND_REVIEW_LOG_LEVEL", "INFO")
    settings.configure_logging()
    settings.configure_logging()
    logging.getLogger("reviewer_app.services.example").info("hello from a service")
    logging.getLogger("reviewer_app.services.example").debug("not at INFO")
    err = capsys.readouterr().err
    assert err.count("hello from a service") == 1 and "not at INFO" not in err
    assert "INFO reviewer_app.services.example: hello from a service" in err
