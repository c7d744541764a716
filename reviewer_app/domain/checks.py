"""Automatic checks: cheap, deterministic tests every output of a sample is put through at load.

A sample (or a scenario of the rubric) may carry ``checks``, a list of check objects such as
``{"type": "max_words", "value": 300}``. :func:`parse_checks` turns such a list into validated
:class:`Check` objects (or raises :class:`CheckDefinitionError` naming the exact field to fix), and
:func:`run_checks` runs them on an output, giving one ``(name, passed, detail)`` per check: the rows of the
``output_check`` table. This module is pure: no I/O, no settings, no network.

The check types, and the decisions each one makes (an admin writing a batch file reads these):

``json``
    The output is JSON. If the whole output (surrounding whitespace ignored) does not parse, and it holds
    exactly one fenced code block (a line starting with three backticks, optionally followed by a language
    such as ``json``, up to three backticks that end a line), the block's content is parsed instead, whatever
    text surrounds the block ("Here you go: ```json ... ``` Hope it helps" passes). Two or more blocks
    fail: we cannot tell which one is the answer. Strict JSON (RFC 8259): ``NaN``, comments and trailing
    commas fail. Integers too large for 64 bits are read as floats.
``json_schema``
    The output is JSON as above and validates against ``schema`` (JSON Schema Draft 2020-12 unless the
    schema's ``$schema`` names another draft). The schema itself is checked when the definition is read.
    Nothing is ever fetched: a ``$ref`` must point inside the schema (``#/$defs/...``) or to a standard
    meta-schema. ``format`` is an annotation, as the 2020-12 specification says: it is not asserted.
``regex``
    ``re.search`` of ``pattern`` on the output must (``"must": "match"``, the default) or must not
    (``"not_match"``) find a match; ``flags`` may hold ``i`` (ignore case), ``m`` (multi-line), ``s``
    (dot matches newline). Python's ``re`` has no timeout, so a pattern with nested repetition such as
    ``(a+)+$`` can take exponential time on some outputs: write patterns without a repeated group that
    itself repeats. Only the first :data:`~text_checks.REGEX_MAX_CHARS` characters of an output are
    searched, which bounds the damage of a merely quadratic pattern.
``max_words`` / ``min_words`` / ``max_chars``
    Words are whitespace-separated pieces, the count ``storage.models.text_counts`` stores (an emoji
    between spaces is a word); characters are Python ``len`` (code points).
``contains`` / ``not_contains``
    Substring test after Unicode NFC normalisation of both sides; case-insensitive (``casefold``: "ß"
    matches "SS") unless ``"case": true``.
``language``
    The language py3langid detects must be ``code`` (ISO 639-1, e.g. ``de``). Outputs with fewer than
    :data:`~text_checks.LANGUAGE_MIN_LETTERS` letters fail as "too short to tell": a check the admin asked for
    should not pass on an empty answer. Only the first :data:`~text_checks.LANGUAGE_MAX_CHARS` characters are
    read.
``one_of``
    The output, stripped of surrounding whitespace and of one final period, equals one of ``values``
    (treated the same way), after NFC normalisation; case-insensitive unless ``"case": true``. "Yes." and
    " yes" both match ``["yes", "no"]``.

Every check has an optional ``name`` (default: its type); names must be unique in one list and may not be
``all`` (reports use it for "all checks together").

This module reads definitions and runs them; each type's own reading and running is in ``json_checks``
(``json``, ``json_schema``) and ``text_checks`` (the others), on what ``check_base`` gives them all.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import orjson

from reviewer_app.domain.check_base import CheckDefinitionError, CheckResult, CheckType
from reviewer_app.domain.json_checks import JSON_TYPES
from reviewer_app.domain.text_checks import TEXT_TYPES

__all__ = ["Check", "check_problem", "parse_checks", "run_checks"]

NAME_MAX_CHARS = 100
RESERVED_NAMES = frozenset({"all"})
_CACHE_SIZE = 1024  # distinct check lists kept parsed; a file usually repeats one or a few


@dataclass(frozen=True)
class Check:
    """A parsed, validated check definition, ready to run.

    ``params`` are the type's parameters with defaults filled in (what :meth:`to_json` writes back); what
    running needs (a compiled pattern, a schema validator) is built once, when the definition is parsed.
    """

    name: str
    type: str
    params: Mapping[str, Any] = field(hash=False)
    _run: Callable[[str], CheckResult] = field(repr=False, compare=False, hash=False)

    def run(self, output: str) -> CheckResult:
        """Run this check on ``output``. Never raises for any text."""
        return self._run(output)

    def to_json(self) -> dict[str, Any]:
        """The canonical definition: ``parse_checks([c.to_json() for c in checks])`` gives ``checks`` back."""
        return {"type": self.type, "name": self.name, **copy.deepcopy(dict(self.params))}


def parse_checks(raw: Any, *, where: str = "checks") -> tuple[Check, ...]:
    """The checks ``raw`` (a JSON list of check objects) defines.

    ``where`` names the list in error paths (``"checks"`` for a record's field; the rubric passes e.g.
    ``"scenarios.qa.checks"``). Parsed lists are cached by their canonical JSON, so a definition repeated
    on every record of a file is parsed once. Raises :class:`CheckDefinitionError` for the first problem.
    """
    key = _cache_key(raw)
    if key is None:
        return _parse_list(raw, where)
    return _parse_cached(key, where)


def check_problem(raw: Any) -> tuple[str, str] | None:
    """``(field path relative to the record, message)`` of the first problem with a record's ``checks``
    value, or None if it is usable. Cheap on repeats: it shares :func:`parse_checks`'s cache."""
    try:
        parse_checks(raw)
    except CheckDefinitionError as exc:
        return exc.field, exc.message
    return None


def run_checks(checks: Sequence[Check], output: str) -> list[tuple[str, bool, str | None]]:
    """One ``(name, passed, detail)`` per check of ``checks`` on ``output``, in order."""
    results = []
    for check in checks:
        result = check.run(output)
        results.append((check.name, result.passed, result.detail))
    return results


def _cache_key(raw: Any) -> str | None:
    try:
        return orjson.dumps(raw, option=orjson.OPT_SORT_KEYS).decode()
    except TypeError:  # not JSON-shaped (a set, a non-text key, a huge int): parse it uncached
        return None


@lru_cache(maxsize=_CACHE_SIZE)
def _parse_cached(key: str, where: str) -> tuple[Check, ...]:
    # Parsed from the key, not the caller's object, so the cached result is exactly the key's meaning.
    return _parse_list(orjson.loads(key), where)


def _parse_list(raw: Any, where: str) -> tuple[Check, ...]:
    if type(raw) is not list:
        raise CheckDefinitionError(where, 'must be a list of check objects, like [{"type": "json"}]')
    checks: list[Check] = []
    seen: set[str] = set()
    for i, item in enumerate(raw):
        at = f"{where}[{i}]"
        check = _parse_one(item, at)
        if check.name in seen:
            raise CheckDefinitionError(
                f"{at}.name", f'two checks are called {check.name!r}; give each a distinct "name"'
            )
        seen.add(check.name)
        checks.append(check)
    return tuple(checks)


def _parse_one(item: Any, at: str) -> Check:
    if type(item) is not dict:
        raise CheckDefinitionError(at, 'must be an object like {"type": "max_words", "value": 300}')
    kind = item.get("type")
    known = ", ".join(_TYPES)
    if kind is None:
        raise CheckDefinitionError(f"{at}.type", f"missing; write one of: {known}")
    if type(kind) is not str or kind not in _TYPES:
        raise CheckDefinitionError(f"{at}.type", f"unknown check type {kind!r}; write one of: {known}")
    spec = _TYPES[kind]
    allowed = ("type", "name", *spec.params)
    for key in item:
        if key not in allowed:
            raise CheckDefinitionError(
                f"{at}.{key}", f"unknown key for a {kind} check; leave it out (known: {', '.join(allowed)})"
            )
    name = _name(item.get("name", kind), f"{at}.name")
    params, run = spec.build(item, at)
    return Check(name, kind, params, run)


def _name(value: Any, at: str) -> str:
    if type(value) is not str or not value.strip():
        raise CheckDefinitionError(at, 'must be non-blank text, like "short enough"')
    if len(value) > NAME_MAX_CHARS:
        raise CheckDefinitionError(at, f"is {len(value)} characters; keep it to {NAME_MAX_CHARS}")
    if value.strip().casefold() in RESERVED_NAMES:
        raise CheckDefinitionError(at, f'{value!r} is reserved for "all checks together"; choose another name')
    return value


_TYPES: dict[str, CheckType] = {**JSON_TYPES, **TEXT_TYPES}  # in the order the docstring lists them
CHECK_TYPES: tuple[str, ...] = tuple(_TYPES)
