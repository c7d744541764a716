"""The check types on an output's text: ``regex``, word and character counts, ``contains``, ``language``, ``one_of``.

What each decides is in ``checks``' docstring (the reference an admin reads); here is how each is read from
its definition (refused with the field to fix) and run.
"""

from __future__ import annotations

import json
import re
import unicodedata
from functools import lru_cache
from typing import Any

from reviewer_app.domain.check_base import (
    PASSED,
    Built,
    CheckDefinitionError,
    CheckResult,
    CheckType,
    flag_param,
    json_text,
    quote,
    said,
    short,
    text_param,
)
from reviewer_app.domain.words import count_words

__all__ = ["TEXT_TYPES"]

REGEX_MAX_CHARS = 100_000  # characters of an output a regex check searches
LANGUAGE_MIN_LETTERS = 20  # fewer letters than this and a language check fails as "too short to tell"
LANGUAGE_MAX_CHARS = 2_000  # characters the detector reads: ~1 ms per output; plenty to tell a language

_FLAGS = {"i": re.IGNORECASE, "m": re.MULTILINE, "s": re.DOTALL}


def _build_regex(item: dict[str, Any], at: str) -> Built:
    pattern = text_param(item, "pattern", at, '"^Answer:"')
    must = item.get("must", "match")
    if must not in ("match", "not_match"):
        raise CheckDefinitionError(f"{at}.must", f'must be "match" or "not_match", not {json_text(must)}')
    flags_text = item.get("flags", "")
    if type(flags_text) is not str or any(c not in _FLAGS for c in flags_text):
        raise CheckDefinitionError(
            f"{at}.flags",
            f'must be text made of i (ignore case), m (multi-line), s (dot matches newline), like "im", '
            f"not {json_text(flags_text)}",
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
    shown = said(pattern)

    def run(output: str) -> CheckResult:
        found = compiled.search(output, 0, REGEX_MAX_CHARS)
        if (found is not None) == wanted:
            return PASSED
        if wanted:
            return CheckResult(False, f"no match for {shown}")
        return CheckResult(False, short(f"matches {shown}: {said(found.group(0)) if found else ''}"))

    params = {"pattern": pattern, "must": must, "flags": "".join(sorted(set(flags_text)))}
    return params, run


def _count_value(item: dict[str, Any], at: str) -> int:
    value = item.get("value")
    if type(value) is not int or value < 0:
        shown = "missing" if value is None else f"not {json_text(value)}"
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


def _folded(text: str, case: bool) -> str:
    text = unicodedata.normalize("NFC", text)
    return text if case else text.casefold()


def _build_contains(item: dict[str, Any], at: str, *, wanted: bool) -> Built:
    text = text_param(item, "text", at, '"Sources:"')
    if not text:
        raise CheckDefinitionError(f"{at}.text", "is empty; every output contains the empty text")
    case = flag_param(item, "case", at)
    needle = _folded(text, case)
    shown = said(text)

    def run(output: str) -> CheckResult:
        if (needle in _folded(output, case)) == wanted:
            return PASSED
        return CheckResult(False, f"does not contain {shown}" if wanted else f"contains {shown}")

    return {"text": text, "case": case}, run


def _build_contains_yes(item: dict[str, Any], at: str) -> Built:
    return _build_contains(item, at, wanted=True)


def _build_contains_no(item: dict[str, Any], at: str) -> Built:
    return _build_contains(item, at, wanted=False)


@lru_cache(maxsize=1)
def _language_identifier() -> Any:
    """py3langid's model, loaded once (about a second) with probabilities normalised, so a detail can say
    how sure the detector was. Our own instance: the module-level one is shared state others may restrict."""
    from py3langid.langid import MODEL_FILE, LanguageIdentifier  # type: ignore[import-untyped]

    return LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)


def _build_language(item: dict[str, Any], at: str) -> Built:
    code = text_param(item, "code", at, '"de"')
    try:
        identifier = _language_identifier()
    except ImportError:
        raise CheckDefinitionError(
            f"{at}.type", "language checks need the py3langid package: pip install py3langid"
        ) from None
    if code not in identifier.labels:
        raise CheckDefinitionError(
            f"{at}.code", f'{json_text(code)} is not a language code the detector knows; use ISO 639-1, like "de"'
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


def _answer(text: str, case: bool) -> str:
    text = _folded(text.strip(), case)
    return text[:-1].rstrip() if text.endswith(".") else text


def _build_one_of(item: dict[str, Any], at: str) -> Built:
    values = item.get("values")
    if type(values) is not list or not values or any(type(v) is not str for v in values):
        shown = "missing" if values is None else f"not {json_text(values)}"
        raise CheckDefinitionError(f"{at}.values", f'must be a non-empty list of texts, like ["yes", "no"] ({shown})')
    case = flag_param(item, "case", at)
    accepted = frozenset(_answer(v, case) for v in values)
    shown = quote(", ".join(json.dumps(v, ensure_ascii=False) for v in values), 120)

    def run(output: str) -> CheckResult:
        if _answer(output, case) in accepted:
            return PASSED
        return CheckResult(False, f"is {said(output.strip())}, not one of {shown}")

    return {"values": list(values), "case": case}, run


TEXT_TYPES: dict[str, CheckType] = {
    "regex": CheckType(("pattern", "must", "flags"), _build_regex),
    "max_words": CheckType(("value",), _build_max_words),
    "min_words": CheckType(("value",), _build_min_words),
    "max_chars": CheckType(("value",), _build_max_chars),
    "contains": CheckType(("text", "case"), _build_contains_yes),
    "not_contains": CheckType(("text", "case"), _build_contains_no),
    "language": CheckType(("code",), _build_language),
    "one_of": CheckType(("values", "case"), _build_one_of),
}
