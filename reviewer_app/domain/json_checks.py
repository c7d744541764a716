"""The ``json`` and ``json_schema`` check types: is an output JSON, and does it validate against a schema.

What each decides is in ``checks``' docstring (the reference an admin reads); here is how: the output parsed
whole or as its one fenced code block, and a schema checked once when the definition is read, with every
``$ref`` resolved then and nothing ever fetched.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from itertools import islice
from typing import Any

import orjson

from reviewer_app.domain.check_base import (
    PASSED,
    Built,
    CheckDefinitionError,
    CheckResult,
    CheckType,
    json_text,
    quote,
    said,
    short,
)

__all__ = ["JSON_TYPES"]

# A fenced code block: an opening line of three backticks (up to 3 spaces indented, then an info string such
# as "json"), the content, and three backticks ending a line (on a line of their own, or, as models sometimes
# write it, right after the content's last character).
_FENCE = re.compile(r"^[ \t]{0,3}```[^`\n]*\n(.*?)```[ \t]*$", re.MULTILINE | re.DOTALL)


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
                return None, short(f"the fenced code block is not JSON: {exc}")
    return None, short(f"not JSON: {whole}")


def _build_json(item: dict[str, Any], at: str) -> Built:
    def run(output: str) -> CheckResult:
        _, why = parse_json_output(output)
        return PASSED if why is None else CheckResult(False, why)

    return {}, run


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
        raise CheckDefinitionError(path, f"must be a JSON Schema object, not {json_text(schema)}")
    fallback = validators.Draft202012Validator
    if type(schema) is dict and "$schema" in schema:
        cls = validators.validator_for(schema, default=_UnknownDraft)
        if cls is _UnknownDraft:
            raise CheckDefinitionError(
                f"{path}.$schema",
                f"unknown JSON Schema draft {json_text(schema['$schema'])}; "
                'use "https://json-schema.org/draft/2020-12/schema" or leave "$schema" out',
            )
    else:
        cls = fallback
    try:
        cls.check_schema(schema)
    except schema_errors.SchemaError as exc:
        message = f"not a valid JSON Schema: {quote(exc.message, 200)}"
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
                f"cannot resolve {json_text(ref)}: schemas are never fetched; copy the referenced schema under "
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
            return CheckResult(False, short(f"the schema's $ref {said(str(exc.ref))} cannot be resolved"))
        if not errors:
            return PASSED
        first = schema_errors.best_match(errors)
        count = "100+" if len(errors) == 100 else str(len(errors))
        where = first.json_path
        return CheckResult(False, short(f"{count} schema violation(s); at {where}: {first.message}"))

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


JSON_TYPES: dict[str, CheckType] = {
    "json": CheckType((), _build_json),
    "json_schema": CheckType(("schema",), _build_json_schema),
}
