"""What every automatic check type shares: its result, the definition error, and how messages quote values.

The check types (``json_checks``, ``text_checks``) build on these, and ``checks`` reads definitions with
them; apart so that the types and the reader of definitions import these without importing each other.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = [
    "Built",
    "CheckDefinitionError",
    "CheckResult",
    "CheckType",
    "PASSED",
    "flag_param",
    "json_text",
    "quote",
    "said",
    "short",
    "text_param",
]

QUOTE_MAX = 60  # characters of a text quoted in a detail
DETAIL_MAX = 300


@dataclass(frozen=True)
class CheckResult:
    """The outcome of one check on one output; ``detail`` says why it failed (None when it passed)."""

    passed: bool
    detail: str | None = None


PASSED = CheckResult(True)


class CheckDefinitionError(ValueError):
    """A check definition that cannot be used. ``field`` locates it (``"checks[1].pattern"``); ``message``
    says what is wrong and what to write instead, for the admin fixing the file."""

    def __init__(self, field: str, message: str) -> None:
        self.field = field
        self.message = message
        super().__init__(f"{field}: {message}")


Built = tuple[dict[str, Any], Callable[[str], CheckResult]]


@dataclass(frozen=True)
class CheckType:
    params: tuple[str, ...]
    build: Callable[[dict[str, Any], str], Built]


def text_param(item: dict[str, Any], key: str, at: str, example: str) -> str:
    value = item.get(key)
    if value is None:
        raise CheckDefinitionError(f"{at}.{key}", f'missing; write e.g. "{key}": {example}')
    if type(value) is not str:
        raise CheckDefinitionError(f"{at}.{key}", f"must be text, like {example}, not {json_text(value)}")
    return value


def flag_param(item: dict[str, Any], key: str, at: str) -> bool:
    value = item.get(key, False)
    if type(value) is not bool:
        raise CheckDefinitionError(f"{at}.{key}", f"must be true or false, not {json_text(value)}")
    return value


def json_text(value: Any) -> str:
    try:
        return quote(json.dumps(value, ensure_ascii=False))
    except (TypeError, ValueError):
        return quote(repr(value))


def quote(text: str, limit: int = QUOTE_MAX) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def said(text: str) -> str:
    """``text`` quoted for a detail, shortened."""
    return json.dumps(quote(text), ensure_ascii=False)


def short(detail: str) -> str:
    return quote(detail, DETAIL_MAX)
