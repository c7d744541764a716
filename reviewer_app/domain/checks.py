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
    itself repeats. Only the first :data:`REGEX_MAX_CHARS` characters of an output are searched, which
    bounds the damage of a merely quadratic pattern.
``max_words`` / ``min_words`` / ``max_chars``
    Words are whitespace-separated pieces, the count ``storage.models.text_counts`` stores (an emoji
    between spaces is a word); characters are Python ``len`` (code points).
``contains`` / ``not_contains``
    Substring test after Unicode NFC normalisation of both sides; case-insensitive (``casefold``: "ß"
    matches "SS") unless ``"case": true``.
``language``
    The language py3langid detects must be ``code`` (ISO 639-1, e.g. ``de``). Outputs with fewer than
    :data:`LANGUAGE_MIN_LETTERS` letters fail as "too short to tell": a check the admin asked for should not
    pass on an empty answer. Only the first :data:`LANGUAGE_MAX_CHARS` characters are read.
``one_of``
    The output, stripped of surrounding whitespace and of one final period, equals one of ``values``
    (treated the same way), after NFC normalisation; case-insensitive unless ``"case": true``. "Yes." and
    " yes" both match ``["yes", "no"]``.

Every check has an optional ``name`` (default: its type); names must be unique in one list and may not be
``all`` (reports use it for "all checks together").
"""

from __future__ import annotations

import copy
import json
import re
import unicodedata
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import islice
from typing import Any

import orjson

from reviewer_app.domain.words import count_words

REGEX_MAX_CHARS = 100_000  # characters of an output a regex check searches
LANGUAGE_MIN_LETTERS = 20  # fewer letters than this and a language check fails as "too short to tell"
LANGUAGE_MAX_CHARS = 2_000  # characters the detector reads: ~1 ms per output; plenty to tell a language
NAME_MAX_CHARS = 100
RESERVED_NAMES = frozenset({"all"})
_CACHE_SIZE = 1024  # distinct check lists kept parsed; a file usually repeats one or a few
_QUOTE_MAX = 60  # characters of a text quoted in a detail
_DETAIL_MAX = 300


@dataclass(frozen=True)
class CheckResult:
    """The outcome of one check on one output; ``detail`` says why it failed (None when it passed)."""

    passed: bool
    detail: str | None = None


PASSED = CheckResult(True)


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


class CheckDefinitionError(ValueError):
    """A check definition that cannot be used. ``field`` locates it (``"checks[1].pattern"``); ``message``
    says what is wrong and what to write instead, for the admin fixing the file."""

    def __init__(self, field: str, message: str) -> None:
        self.field = field
        self.message = message
        super().__init__(f"{field}: {message}")


# -- reading definitions ---------------------------------------------------------------------------------------


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


def _text(item: dict[str, Any], key: str, at: str, example: str) -> str:
    value = item.get(key)
    if value is None:
        raise CheckDefinitionError(f"{at}.{key}", f'missing; write e.g. "{key}": {example}')
    if type(value) is not str:
        raise CheckDefinitionError(f"{at}.{key}", f"must be text, like {example}, not {_json(value)}")
    return value


def _flag(item: dict[str, Any], key: str, at: str) -> bool:
    value = item.get(key, False)
    if type(value) is not bool:
        raise CheckDefinitionError(f"{at}.{key}", f"must be true or false, not {_json(value)}")
    return value


def _json(value: Any) -> str:
    try:
        return _quote(json.dumps(value, ensure_ascii=False))
    except (TypeError, ValueError):
        return _quote(repr(value))


def _quote(text: str, limit: int = _QUOTE_MAX) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _said(text: str) -> str:
    """``text`` quoted for a detail, shortened."""
    return json.dumps(_quote(text), ensure_ascii=False)


def _short(detail: str) -> str:
    return _quote(detail, _DETAIL_MAX)


# -- the check types ---------------------------------------------------------------------------------------------

Built = tuple[dict[str, Any], Callable[[str], CheckResult]]


@dataclass(frozen=True)
class _Type:
    params: tuple[str, ...]
    build: Callable[[dict[str, Any], str], Built]


# json ------------------------------------------------------------------------------------------------------------

# A fenced code block: an opening line of three backticks (up to 3 spaces indented, then an info string such
# as "json"), the content, and three backticks ending a line (on a line of their own, or, as models sometimes
# write it, right after the content's last character).
_FENCE = re.compile(r"^[ \t]{0,3}```[^`\n]*\n(.*?)```[ \t]*$", re.MULTILINE | re.DOTALL)
_NOT_PARSED = object()


def parse_json_output(output: str) -> tuple[Any, str | None]:
    """``(value, None)`` if ``output`` is JSON as the ``json`` check reads it (whole, or the one fenced block
    it holds), else ``(None, why not)``."""
    try:
        return orjson.loads(output), None
    except orjson.JSONDecodeError as exc:
        whole = exc
    if "```" in output:
        blocks = list(islice(_FENCE.finditer(output), 2))
        if len(blocks) > 1:
            return None, "not JSON, and it has more than one fenced code block; return one JSON value"
        if blocks:
            try:
                return orjson.loads(blocks[0].group(1)), None
            except orjson.JSONDecodeError as exc:
                return None, _short(f"the fenced code block is not JSON: {exc}")
    return None, _short(f"not JSON: {whole}")


def _build_json(item: dict[str, Any], at: str) -> Built:
    def run(output: str) -> CheckResult:
        _, why = parse_json_output(output)
        return PASSED if why is None else CheckResult(False, why)

    return {}, run


# json_schema -----------------------------------------------------------------------------------------------------

_SCHEMA_DATA_KEYWORDS = frozenset({"const", "enum", "default", "examples"})  # hold data, not subschemas


def _build_json_schema(item: dict[str, Any], at: str) -> Built:
    from jsonschema import exceptions as schema_errors  # type: ignore[import-untyped]
    from jsonschema import validators
    from jsonschema_specifications import REGISTRY as SPECIFICATIONS  # type: ignore[import-untyped]
    from referencing import Registry, Resource
    from referencing.exceptions import Unresolvable
    from referencing.jsonschema import DRAFT202012, SchemaRegistry

    path = f"{at}.schema"
    schema = item.get("schema")
    if schema is None:
        raise CheckDefinitionError(path, 'missing; write e.g. "schema": {"type": "object", "required": ["answer"]}')
    if type(schema) is not dict and type(schema) is not bool:
        raise CheckDefinitionError(path, f"must be a JSON Schema object, not {_json(schema)}")
    fallback = validators.Draft202012Validator
    if type(schema) is dict and "$schema" in schema:
        cls = validators.validator_for(schema, default=_UnknownDraft)
        if cls is _UnknownDraft:
            raise CheckDefinitionError(
                f"{path}.$schema",
                f"unknown JSON Schema draft {_json(schema['$schema'])}; "
                'use "https://json-schema.org/draft/2020-12/schema" or leave "$schema" out',
            )
    else:
        cls = fallback
    try:
        cls.check_schema(schema)
    except schema_errors.SchemaError as exc:
        message = f"not a valid JSON Schema: {_quote(exc.message, 200)}"
        raise CheckDefinitionError(_pointer(path, exc.path), message) from None
    # An empty registry: refs resolve inside the schema or to the bundled meta-schemas, never over the network
    # (jsonschema's default registry would fetch http(s) URLs).
    registry: SchemaRegistry = Registry()
    validator = cls(schema, registry=registry)
    # Each $ref is tried now, so an unresolvable one is the admin's error at load, not every output's failure.
    root = Resource.from_contents(schema, default_specification=DRAFT202012)
    resolver = SPECIFICATIONS.combine(registry).resolver_with_root(root)
    for ref_path, ref in _refs(schema, path):
        try:
            resolver.lookup(ref)
        except Unresolvable:
            raise CheckDefinitionError(
                ref_path,
                f"cannot resolve {_json(ref)}: schemas are never fetched; copy the referenced schema under "
                '"$defs" and refer to it as "#/$defs/<name>"',
            ) from None

    def run(output: str) -> CheckResult:
        value, why = parse_json_output(output)
        if why is not None:
            return CheckResult(False, why)
        try:
            errors = list(islice(validator.iter_errors(value), 100))
        except RecursionError:
            return CheckResult(False, "JSON nested too deeply to validate")
        except Unresolvable as exc:  # a ref the definition-time test missed (nested $id scopes): never fetched
            return CheckResult(False, _short(f"the schema's $ref {_said(str(exc.ref))} cannot be resolved"))
        if not errors:
            return PASSED
        first = schema_errors.best_match(errors)
        count = "100+" if len(errors) == 100 else str(len(errors))
        where = first.json_path
        return CheckResult(False, _short(f"{count} schema violation(s); at {where}: {first.message}"))

    return {"schema": schema}, run


class _UnknownDraft:
    """Marks a ``$schema`` that jsonschema does not know (its own default would warn and guess)."""


def _pointer(path: str, parts: Iterator[Any] | Any) -> str:
    for part in parts:
        path += f"[{part}]" if type(part) is int else f".{part}"
    return path


def _refs(node: Any, path: str) -> Iterator[tuple[str, str]]:
    """Every ``$ref``/``$dynamicRef`` of a schema with its field path (data keywords are not walked).

    Nested ``$id`` scopes are not tracked: a relative ref under a nested ``$id`` is tested against the root,
    which at worst refuses a schema that could have worked; it never lets a fetch through."""
    if type(node) is dict:
        for key, value in node.items():
            if key in ("$ref", "$dynamicRef") and type(value) is str:
                yield f"{path}.{key}", value
            elif key not in _SCHEMA_DATA_KEYWORDS:
                yield from _refs(value, f"{path}.{key}")
    elif type(node) is list:
        for i, value in enumerate(node):
            yield from _refs(value, f"{path}[{i}]")


# regex -----------------------------------------------------------------------------------------------------------

_FLAGS = {"i": re.IGNORECASE, "m": re.MULTILINE, "s": re.DOTALL}


def _build_regex(item: dict[str, Any], at: str) -> Built:
    pattern = _text(item, "pattern", at, '"^Answer:"')
    must = item.get("must", "match")
    if must not in ("match", "not_match"):
        raise CheckDefinitionError(f"{at}.must", f'must be "match" or "not_match", not {_json(must)}')
    flags_text = item.get("flags", "")
    if type(flags_text) is not str or any(c not in _FLAGS for c in flags_text):
        raise CheckDefinitionError(
            f"{at}.flags",
            f'must be text made of i (ignore case), m (multi-line), s (dot matches newline), like "im", '
            f"not {_json(flags_text)}",
        )
    flags = 0
    for c in flags_text:
        flags |= _FLAGS[c]
    try:
        compiled = re.compile(pattern, flags)
    except re.error as exc:
        message = f"does not compile: {exc}; check the escaping (a backslash is \\\\ in JSON)"
        raise CheckDefinitionError(f"{at}.pattern", message) from None
    wanted = must == "match"
    shown = _said(pattern)

    def run(output: str) -> CheckResult:
        found = compiled.search(output, 0, REGEX_MAX_CHARS)
        if (found is not None) == wanted:
            return PASSED
        if wanted:
            return CheckResult(False, f"no match for {shown}")
        return CheckResult(False, _short(f"matches {shown}: {_said(found.group(0)) if found else ''}"))

    params = {"pattern": pattern, "must": must, "flags": "".join(sorted(set(flags_text)))}
    return params, run


# counts ----------------------------------------------------------------------------------------------------------


def _count_value(item: dict[str, Any], at: str) -> int:
    value = item.get("value")
    if type(value) is not int or value < 0:
        shown = "missing" if value is None else f"not {_json(value)}"
        raise CheckDefinitionError(f"{at}.value", f'must be a whole number >= 0, like "value": 300 ({shown})')
    return value


def _build_max_words(item: dict[str, Any], at: str) -> Built:
    limit = _count_value(item, at)

    def run(output: str) -> CheckResult:
        if len(output) <= 2 * limit:  # n characters hold at most (n + 1) // 2 words: no need to split
            return PASSED
        n = count_words(output)
        return PASSED if n <= limit else CheckResult(False, f"{n} words, over {limit}")

    return {"value": limit}, run


def _build_min_words(item: dict[str, Any], at: str) -> Built:
    limit = _count_value(item, at)

    def run(output: str) -> CheckResult:
        n = count_words(output)
        return PASSED if n >= limit else CheckResult(False, f"{n} words, under {limit}")

    return {"value": limit}, run


def _build_max_chars(item: dict[str, Any], at: str) -> Built:
    limit = _count_value(item, at)

    def run(output: str) -> CheckResult:
        n = len(output)
        return PASSED if n <= limit else CheckResult(False, f"{n} characters, over {limit}")

    return {"value": limit}, run


# contains ----------------------------------------------------------------------------------------------------------


def _folded(text: str, case: bool) -> str:
    text = unicodedata.normalize("NFC", text)
    return text if case else text.casefold()


def _build_contains(item: dict[str, Any], at: str, *, wanted: bool) -> Built:
    text = _text(item, "text", at, '"Sources:"')
    if not text:
        raise CheckDefinitionError(f"{at}.text", "is empty; every output contains the empty text")
    case = _flag(item, "case", at)
    needle = _folded(text, case)
    shown = _said(text)

    def run(output: str) -> CheckResult:
        if (needle in _folded(output, case)) == wanted:
            return PASSED
        return CheckResult(False, f"does not contain {shown}" if wanted else f"contains {shown}")

    return {"text": text, "case": case}, run


def _build_contains_yes(item: dict[str, Any], at: str) -> Built:
    return _build_contains(item, at, wanted=True)


def _build_contains_no(item: dict[str, Any], at: str) -> Built:
    return _build_contains(item, at, wanted=False)


# language ----------------------------------------------------------------------------------------------------------


@lru_cache(maxsize=1)
def _language_identifier() -> Any:
    """py3langid's model, loaded once (about a second) with probabilities normalised, so a detail can say
    how sure the detector was. Our own instance: the module-level one is shared state others may restrict."""
    from py3langid.langid import MODEL_FILE, LanguageIdentifier  # type: ignore[import-untyped]

    return LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)


def _build_language(item: dict[str, Any], at: str) -> Built:
    code = _text(item, "code", at, '"de"')
    try:
        identifier = _language_identifier()
    except ImportError:
        raise CheckDefinitionError(
            f"{at}.type", "language checks need the py3langid package: pip install py3langid"
        ) from None
    if code not in identifier.labels:
        raise CheckDefinitionError(
            f"{at}.code", f'{_json(code)} is not a language code the detector knows; use ISO 639-1, like "de"'
        )

    def run(output: str) -> CheckResult:
        text = output[:LANGUAGE_MAX_CHARS]
        letters = sum(1 for c in text if c.isalpha())
        if letters < LANGUAGE_MIN_LETTERS:
            return CheckResult(
                False,
                f"too short to tell ({letters} letter{'' if letters == 1 else 's'}; needs {LANGUAGE_MIN_LETTERS})",
            )
        found, confidence = identifier.classify(text)
        if found == code:
            return PASSED
        return CheckResult(False, f"detected {found} ({confidence:.2f}), not {code}")

    return {"code": code}, run


# one_of ------------------------------------------------------------------------------------------------------------


def _answer(text: str, case: bool) -> str:
    text = _folded(text.strip(), case)
    return text[:-1].rstrip() if text.endswith(".") else text


def _build_one_of(item: dict[str, Any], at: str) -> Built:
    values = item.get("values")
    if type(values) is not list or not values or any(type(v) is not str for v in values):
        shown = "missing" if values is None else f"not {_json(values)}"
        raise CheckDefinitionError(f"{at}.values", f'must be a non-empty list of texts, like ["yes", "no"] ({shown})')
    case = _flag(item, "case", at)
    accepted = frozenset(_answer(v, case) for v in values)
    shown = _quote(", ".join(json.dumps(v, ensure_ascii=False) for v in values), 120)

    def run(output: str) -> CheckResult:
        if _answer(output, case) in accepted:
            return PASSED
        return CheckResult(False, f"is {_said(output.strip())}, not one of {shown}")

    return {"values": list(values), "case": case}, run


_TYPES: dict[str, _Type] = {
    "json": _Type((), _build_json),
    "json_schema": _Type(("schema",), _build_json_schema),
    "regex": _Type(("pattern", "must", "flags"), _build_regex),
    "max_words": _Type(("value",), _build_max_words),
    "min_words": _Type(("value",), _build_min_words),
    "max_chars": _Type(("value",), _build_max_chars),
    "contains": _Type(("text", "case"), _build_contains_yes),
    "not_contains": _Type(("text", "case"), _build_contains_no),
    "language": _Type(("code",), _build_language),
    "one_of": _Type(("values", "case"), _build_one_of),
}
CHECK_TYPES: tuple[str, ...] = tuple(_TYPES)
