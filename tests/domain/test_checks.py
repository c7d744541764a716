"""The automatic-check engine: definitions read (and refused) by field, and every check type run on outputs
that pass and outputs that fail."""

from __future__ import annotations

import importlib.util
import unicodedata
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reviewer_app.domain import checks as checks_module
from reviewer_app.domain import json_checks, text_checks
from reviewer_app.domain.check_base import CheckDefinitionError, CheckResult
from reviewer_app.domain.checks import CHECK_TYPES, Check, check_problem, parse_checks, run_checks
from reviewer_app.domain.text_checks import LANGUAGE_MAX_CHARS, REGEX_MAX_CHARS

HAS_LANGID = importlib.util.find_spec("py3langid") is not None
needs_langid = pytest.mark.skipif(not HAS_LANGID, reason="py3langid is not installed")

GERMAN = (
    "Die Stadt liegt am Ufer eines breiten Flusses. Im Sommer sitzen die Leute abends draußen, trinken Wein "
    "und reden über das Wetter, die Arbeit und ihre Kinder, bis es dunkel wird."
)
ENGLISH = (
    "The town lies on the bank of a wide river. In summer people sit outside in the evening, drink wine and "
    "talk about the weather, their work and their children until it gets dark."
)


def one(definition: dict[str, Any]) -> Check:
    (check,) = parse_checks([definition])
    return check


def result(definition: dict[str, Any], output: str) -> CheckResult:
    return one(definition).run(output)


def problem(raw: Any) -> tuple[str, str]:
    found = check_problem(raw)
    assert found is not None, f"{raw!r} was accepted"
    return found


# -- json ------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "output",
    [
        '{"a": 1}',
        "  [1, 2, 3]\n",
        "42",
        '"text"',
        '```json\n{"a": 1}\n```',
        '```\n{"a": 1}\n```',
        '\n\n  ```JSON\n{"a": 1}\n```  \n',
        'Here is the answer:\n```json\n{"a": 1}\n```\nHope this helps.',
        '```json\n{"a": 1}```',
        '   ```json\n{"a": 1}\n   ```',
    ],
)
def test_json_passes_json_bare_or_in_one_fenced_block(output: str) -> None:
    assert result({"type": "json"}, output) == CheckResult(True, None)


def test_json_fails_malformed_json_with_the_parser_position() -> None:
    got = result({"type": "json"}, '{"a": 1 "b": 2}')
    assert not got.passed
    assert got.detail is not None and got.detail.startswith("not JSON: ")
    assert "line 1 column 9" in got.detail


@pytest.mark.parametrize("output", ["", "   ", "NaN", "{'a': 1}", '{"a": 1,}', "// c\n{}", "yes"])
def test_json_is_strict(output: str) -> None:
    assert not result({"type": "json"}, output).passed


def test_json_fails_a_fenced_block_that_is_not_json_and_says_so() -> None:
    got = result({"type": "json"}, "Sure:\n```json\n{a: 1}\n```")
    assert got.passed is False
    assert got.detail is not None and got.detail.startswith("the fenced code block is not JSON: ")


def test_json_refuses_two_fenced_blocks_even_if_both_parse() -> None:
    got = result({"type": "json"}, '```json\n{"a": 1}\n```\nor\n```json\n{"a": 2}\n```')
    assert got == CheckResult(False, "not JSON, and it has more than one fenced code block; return one JSON value")


def test_json_inline_backticks_are_not_a_fenced_block() -> None:
    assert not result({"type": "json"}, '```{"a": 1}```').passed


# -- json_schema -------------------------------------------------------------------------------------------------

SCHEMA = {
    "type": "object",
    "required": ["total", "items"],
    "properties": {
        "total": {"type": "number"},
        "items": {"type": "array", "items": {"$ref": "#/$defs/item"}},
    },
    "$defs": {"item": {"type": "object", "required": ["price"], "properties": {"price": {"type": "number"}}}},
}


def test_json_schema_passes_a_valid_document_also_in_a_fence() -> None:
    check = one({"type": "json_schema", "schema": SCHEMA})
    doc = '{"total": 3, "items": [{"price": 1}, {"price": 2}]}'
    assert check.run(doc).passed
    assert check.run(f"```json\n{doc}\n```").passed


def test_json_schema_failure_names_the_place_and_the_rule() -> None:
    got = result({"type": "json_schema", "schema": SCHEMA}, '{"total": 3, "items": [{"price": 1}, {"price": "x"}]}')
    assert got == CheckResult(False, "1 schema violation(s); at $.items[1].price: 'x' is not of type 'number'")


def test_json_schema_counts_violations() -> None:
    got = result({"type": "json_schema", "schema": SCHEMA}, '{"items": [{}]}')
    assert got.passed is False
    assert got.detail is not None and got.detail.startswith("2 schema violation(s); at ")


def test_json_schema_fails_output_that_is_not_json() -> None:
    got = result({"type": "json_schema", "schema": SCHEMA}, "total: 3")
    assert got.passed is False
    assert got.detail is not None and got.detail.startswith("not JSON: ")


def test_json_schema_follows_the_draft_its_schema_names() -> None:
    # Draft 4 reads a boolean exclusiveMaximum; under 2020-12 the same schema is invalid.
    draft4 = {"$schema": "http://json-schema.org/draft-04/schema#", "maximum": 5, "exclusiveMaximum": True}
    check = one({"type": "json_schema", "schema": draft4})
    assert check.run("4").passed
    assert not check.run("5").passed
    field, _ = problem([{"type": "json_schema", "schema": {k: v for k, v in draft4.items() if k != "$schema"}}])
    assert field == "checks[0].schema.exclusiveMaximum"


def test_json_schema_may_refer_to_a_bundled_meta_schema() -> None:
    check = one({"type": "json_schema", "schema": {"$ref": "https://json-schema.org/draft/2020-12/schema"}})
    assert check.run('{"type": "string"}').passed
    assert not check.run('{"type": 3}').passed


@pytest.mark.parametrize(
    ("schema", "field", "start"),
    [
        ({"type": "strin"}, "checks[0].schema.type", "not a valid JSON Schema: "),
        ({"properties": {"a": {"minimum": "3"}}}, "checks[0].schema.properties.a.minimum", "not a valid JSON Schema"),
        ({"$ref": "https://example.com/s.json"}, "checks[0].schema.$ref", 'cannot resolve "https://example.com/s'),
        ({"items": {"$ref": "other.json"}}, "checks[0].schema.items.$ref", 'cannot resolve "other.json"'),
        ({"$ref": "#/$defs/missing"}, "checks[0].schema.$ref", 'cannot resolve "#/$defs/missing"'),
        ({"$schema": "https://example.com/my-draft"}, "checks[0].schema.$schema", "unknown JSON Schema draft"),
        ([1], "checks[0].schema", "must be a JSON Schema object"),
        (None, "checks[0].schema", "missing"),
    ],
)
def test_json_schema_bad_schemas_are_refused_at_definition(schema: Any, field: str, start: str) -> None:
    definition = {"type": "json_schema"} if schema is None else {"type": "json_schema", "schema": schema}
    got_field, message = problem([definition])
    assert got_field == field
    assert message.startswith(start), message


def record_fetches(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """The URLs anything tries to open (jsonschema's default registry fetches with urllib); a failed fetch
    is wrapped by ``referencing`` as an unresolvable ref, so only this list tells that one was tried."""
    fetched: list[Any] = []

    def no_network(request: Any, *args: Any, **kwargs: Any) -> Any:
        fetched.append(getattr(request, "full_url", request))
        raise OSError("no network in tests")

    monkeypatch.setattr("urllib.request.urlopen", no_network)
    return fetched


def test_json_schema_never_fetches(monkeypatch: pytest.MonkeyPatch) -> None:
    fetched = record_fetches(monkeypatch)
    assert check_problem([{"type": "json_schema", "schema": {"$ref": "http://example.com/s.json"}}]) is not None
    assert fetched == []


def test_json_schema_validator_cannot_fetch_either(monkeypatch: pytest.MonkeyPatch) -> None:
    """The definition-time test of each $ref aside, the validator itself has no way to the network."""

    fetched = record_fetches(monkeypatch)
    monkeypatch.setattr(json_checks, "_refs", lambda schema, path: iter(()))
    check = one({"type": "json_schema", "schema": {"$ref": "http://example.com/never-fetched.json"}})
    assert check.run("{}") == CheckResult(
        False, 'the schema\'s $ref "http://example.com/never-fetched.json" cannot be resolved'
    )
    assert fetched == []


def test_json_schema_data_keywords_are_not_read_as_refs() -> None:
    schema = {"const": {"$ref": "https://example.com/not-a-ref"}}
    check = one({"type": "json_schema", "schema": schema})
    assert check.run('{"$ref": "https://example.com/not-a-ref"}').passed
    assert not check.run("{}").passed


# -- regex -------------------------------------------------------------------------------------------------------


def test_regex_must_match() -> None:
    check = one({"type": "regex", "pattern": r"^Answer: \d+$", "flags": "m"})
    assert check.run("Thinking...\nAnswer: 42").passed
    assert check.run("Answer: forty-two") == CheckResult(False, 'no match for "^Answer: \\\\d+$"')


def test_regex_must_not_match_names_what_matched() -> None:
    check = one({"type": "regex", "pattern": r"as an ai", "must": "not_match", "flags": "i"})
    assert check.run("Paris is the capital.").passed
    assert check.run("As an AI, I think...") == CheckResult(False, 'matches "as an ai": "As an AI"')


def test_regex_flags_change_the_search() -> None:
    assert not result({"type": "regex", "pattern": "a.b"}, "a\nb").passed
    assert result({"type": "regex", "pattern": "a.b", "flags": "s"}, "a\nb").passed
    assert not result({"type": "regex", "pattern": "abc"}, "ABC").passed
    assert result({"type": "regex", "pattern": "abc", "flags": "i"}, "ABC").passed


def test_regex_searches_only_the_first_part_of_a_huge_output() -> None:
    check = one({"type": "regex", "pattern": "needle"})
    assert check.run("x" * (REGEX_MAX_CHARS - 6) + "needle").passed
    assert not check.run("x" * REGEX_MAX_CHARS + "needle").passed


# -- counts ------------------------------------------------------------------------------------------------------


def test_max_words_counts_whitespace_separated_pieces() -> None:
    check = one({"type": "max_words", "value": 3})
    assert check.run("one two\tthree\n").passed
    assert check.run("one two three four") == CheckResult(False, "4 words, over 3")
    assert check.run("🙂 🙂 🙂").passed  # an emoji between spaces is a word
    assert check.run("🙂 🙂 🙂 🙂").detail == "4 words, over 3"
    assert check.run("🙂🙂🙂🙂").passed  # ...and emoji without spaces are one


def test_word_count_is_the_one_storage_stores() -> None:
    from storage.models import text_counts

    text = "a  b\u00a0c\u3000d 🙂\n"
    _, words = text_counts(text)
    assert one({"type": "max_words", "value": words}).run(text).passed
    assert not one({"type": "max_words", "value": words - 1}).run(text).passed


@given(st.text(alphabet=st.sampled_from("ab \n\u00a0🙂"), max_size=20), st.integers(0, 10))
def test_word_limits_agree_with_the_stored_count_on_any_text(text: str, limit: int) -> None:
    from storage.models import text_counts

    _, words = text_counts(text)
    assert one({"type": "max_words", "value": limit}).run(text).passed == (words <= limit)
    assert one({"type": "min_words", "value": limit}).run(text).passed == (words >= limit)


def test_min_words() -> None:
    check = one({"type": "min_words", "value": 2})
    assert check.run("two words").passed
    assert check.run("one") == CheckResult(False, "1 words, under 2")
    assert check.run("") == CheckResult(False, "0 words, under 2")


def test_max_chars_counts_code_points() -> None:
    check = one({"type": "max_chars", "value": 3})
    assert check.run("abc").passed
    assert check.run("abcd") == CheckResult(False, "4 characters, over 3")
    assert check.run("é🙂ß").passed
    assert not check.run(unicodedata.normalize("NFD", "éé")).passed  # four code points


def test_zero_limits_are_allowed() -> None:
    assert one({"type": "max_chars", "value": 0}).run("").passed
    assert one({"type": "min_words", "value": 0}).run("").passed


# -- contains ----------------------------------------------------------------------------------------------------


def test_contains_is_case_insensitive_by_default() -> None:
    check = one({"type": "contains", "text": "Sources:"})
    assert check.run("... SOURCES: [1]").passed
    assert check.run("no references") == CheckResult(False, 'does not contain "Sources:"')


def test_contains_case_sensitive() -> None:
    check = one({"type": "contains", "text": "Sources:", "case": True})
    assert check.run("Sources: [1]").passed
    assert not check.run("SOURCES: [1]").passed


def test_contains_casefolds_sharp_s() -> None:
    assert result({"type": "contains", "text": "STRASSE"}, "Die Hauptstraße ist lang").passed
    assert result({"type": "contains", "text": "straße"}, "HAUPTSTRASSE").passed
    assert not result({"type": "contains", "text": "straße", "case": True}, "HAUPTSTRASSE").passed


def test_contains_normalises_nfc_on_both_sides() -> None:
    nfc, nfd = "café", unicodedata.normalize("NFD", "café")
    assert nfc != nfd
    assert result({"type": "contains", "text": nfc}, f"un {nfd} noir").passed
    assert result({"type": "contains", "text": nfd, "case": True}, f"un {nfc} noir").passed
    assert not result({"type": "not_contains", "text": nfd}, f"un {nfc} noir").passed


def test_not_contains() -> None:
    check = one({"type": "not_contains", "text": "I cannot"})
    assert check.run("Here it is.").passed
    assert check.run("i CANNOT do that") == CheckResult(False, 'contains "I cannot"')


# -- language ----------------------------------------------------------------------------------------------------


@needs_langid
def test_language_detects_clear_german_and_english() -> None:
    german = one({"type": "language", "code": "de"})
    assert german.run(GERMAN).passed
    got = german.run(ENGLISH)
    assert got.passed is False
    assert got.detail is not None and got.detail.startswith("detected en (") and got.detail.endswith("), not de")
    assert one({"type": "language", "code": "en"}).run(ENGLISH).passed


@needs_langid
@pytest.mark.parametrize("output", ["", "   ", "Ja.", "OK 42 !!!", "🙂🙂🙂"])
def test_language_fails_outputs_too_short_to_tell(output: str) -> None:
    got = result({"type": "language", "code": "de"}, output)
    assert got.passed is False
    assert got.detail is not None and got.detail.startswith("too short to tell (")


@needs_langid
def test_language_reads_only_the_start_of_a_long_output() -> None:
    german_start = (GERMAN + " ") * (LANGUAGE_MAX_CHARS // len(GERMAN) + 1)
    check = one({"type": "language", "code": "de"})
    assert check.run(german_start[:LANGUAGE_MAX_CHARS] + ENGLISH * 50).passed
    assert not check.run(german_start[: LANGUAGE_MAX_CHARS // 4] + ENGLISH * 50).passed


@needs_langid
def test_language_unknown_code_is_a_definition_error() -> None:
    assert problem([{"type": "language", "code": "xx"}])[0] == "checks[0].code"
    assert problem([{"type": "language", "code": "German"}])[0] == "checks[0].code"
    assert problem([{"type": "language"}])[0] == "checks[0].code"


def test_language_without_py3langid_is_a_clear_definition_error(monkeypatch: pytest.MonkeyPatch) -> None:
    def missing() -> Any:
        raise ImportError("No module named 'py3langid'")

    monkeypatch.setattr(text_checks, "_language_identifier", missing)
    with pytest.raises(CheckDefinitionError) as caught:
        checks_module._parse_list([{"type": "language", "code": "de"}], "checks")
    assert (caught.value.field, caught.value.message) == (
        "checks[0].type",
        "language checks need the py3langid package: pip install py3langid",
    )


# -- one_of ------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("output", ["yes", "Yes", " YES \n", "Yes.", "no", "No. "])
def test_one_of_accepts_the_values_loosely(output: str) -> None:
    assert result({"type": "one_of", "values": ["yes", "no"]}, output).passed


@pytest.mark.parametrize("output", ["yes!", "Yes, it is.", "maybe", "", "yes.."])
def test_one_of_refuses_anything_else(output: str) -> None:
    assert not result({"type": "one_of", "values": ["yes", "no"]}, output).passed


def test_one_of_detail_and_case() -> None:
    check = one({"type": "one_of", "values": ["A", "B"], "case": True})
    assert check.run("A.").passed
    assert check.run("a") == CheckResult(False, 'is "a", not one of "A", "B"')


def test_one_of_normalises_unicode() -> None:
    assert result({"type": "one_of", "values": ["Ja", "Ärger"]}, unicodedata.normalize("NFD", "ärger")).passed
    assert result({"type": "one_of", "values": ["STRASSE"]}, "straße").passed


# -- definitions -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "field", "message"),
    [
        ({"type": "json"}, "checks", 'must be a list of check objects, like [{"type": "json"}]'),
        ("json", "checks", 'must be a list of check objects, like [{"type": "json"}]'),
        (["json"], "checks[0]", 'must be an object like {"type": "max_words", "value": 300}'),
        ([{}], "checks[0].type", "missing; write one of: " + ", ".join(CHECK_TYPES)),
        ([{"type": "jsn"}], "checks[0].type", "unknown check type 'jsn'; write one of: " + ", ".join(CHECK_TYPES)),
        ([{"type": 3}], "checks[0].type", "unknown check type 3; write one of: " + ", ".join(CHECK_TYPES)),
        (
            [{"type": "json"}, {"type": "regex", "patern": "x"}],
            "checks[1].patern",
            "unknown key for a regex check; leave it out (known: type, name, pattern, must, flags)",
        ),
        ([{"type": "regex"}], "checks[0].pattern", 'missing; write e.g. "pattern": "^Answer:"'),
        ([{"type": "regex", "pattern": 1}], "checks[0].pattern", 'must be text, like "^Answer:", not 1'),
        ([{"type": "regex", "pattern": "x", "must": "matches"}], "checks[0].must", None),
        ([{"type": "regex", "pattern": "x", "flags": "g"}], "checks[0].flags", None),
        ([{"type": "regex", "pattern": "x", "flags": ["i"]}], "checks[0].flags", None),
        ([{"type": "max_words"}], "checks[0].value", 'must be a whole number >= 0, like "value": 300 (missing)'),
        (
            [{"type": "max_words", "value": -1}],
            "checks[0].value",
            'must be a whole number >= 0, like "value": 300 (not -1)',
        ),
        ([{"type": "min_words", "value": 2.5}], "checks[0].value", None),
        ([{"type": "max_chars", "value": True}], "checks[0].value", None),
        ([{"type": "max_chars", "value": "300"}], "checks[0].value", None),
        ([{"type": "contains"}], "checks[0].text", None),
        ([{"type": "contains", "text": ""}], "checks[0].text", "is empty; every output contains the empty text"),
        ([{"type": "not_contains", "text": "x", "case": "yes"}], "checks[0].case", 'must be true or false, not "yes"'),
        ([{"type": "one_of"}], "checks[0].values", None),
        ([{"type": "one_of", "values": []}], "checks[0].values", None),
        ([{"type": "one_of", "values": ["a", 1]}], "checks[0].values", None),
        ([{"type": "one_of", "values": "a"}], "checks[0].values", None),
        ([{"type": "json", "name": ""}], "checks[0].name", 'must be non-blank text, like "short enough"'),
        ([{"type": "json", "name": "  "}], "checks[0].name", None),
        ([{"type": "json", "name": 7}], "checks[0].name", None),
        ([{"type": "json", "name": "x" * 101}], "checks[0].name", "is 101 characters; keep it to 100"),
        ([{"type": "json", "name": "all"}], "checks[0].name", None),
        ([{"type": "json", "name": " ALL "}], "checks[0].name", None),
        ([{"type": "regex", "pattern": "(a"}], "checks[0].pattern", None),
    ],
)
def test_bad_definitions_are_refused_at_their_field(raw: Any, field: str, message: str | None) -> None:
    got_field, got_message = problem(raw)
    assert got_field == field
    if message is not None:
        assert got_message == message


def test_the_pattern_error_says_why_it_does_not_compile() -> None:
    _, message = problem([{"type": "regex", "pattern": "(a"}])
    assert message.startswith("does not compile: missing ), unterminated subpattern")


def test_reserved_name_message() -> None:
    assert (
        problem([{"type": "json", "name": "all"}])[1]
        == "'all' is reserved for \"all checks together\"; choose another name"
    )


def test_duplicate_names_are_refused_even_when_defaulted() -> None:
    assert problem([{"type": "regex", "pattern": "a"}, {"type": "regex", "pattern": "b"}]) == (
        "checks[1].name",
        "two checks are called 'regex'; give each a distinct \"name\"",
    )
    assert problem([{"type": "json", "name": "regex"}, {"type": "regex", "pattern": "b"}])[0] == "checks[1].name"
    named = [{"type": "regex", "pattern": "a", "name": "starts"}, {"type": "regex", "pattern": "b", "name": "ends"}]
    assert [c.name for c in parse_checks(named)] == ["starts", "ends"]


def test_where_prefixes_every_path() -> None:
    with pytest.raises(CheckDefinitionError) as caught:
        parse_checks([{"type": "max_words", "value": -3}], where="scenarios.qa.checks")
    assert caught.value.field == "scenarios.qa.checks[0].value"
    assert str(caught.value).startswith("scenarios.qa.checks[0].value: must be a whole number")


def test_good_checks_have_no_problem_and_an_empty_list_is_fine() -> None:
    assert check_problem([]) is None
    assert parse_checks([]) == ()
    assert check_problem([{"type": "json"}, {"type": "max_words", "value": 300, "name": "short"}]) is None


ALL_KINDS: list[dict[str, Any]] = [
    {"type": "json"},
    {"type": "json_schema", "schema": SCHEMA, "name": "shape"},
    {"type": "regex", "pattern": "^A", "flags": "mi"},
    {"type": "regex", "pattern": "B", "must": "not_match", "name": "no B"},
    {"type": "max_words", "value": 300},
    {"type": "min_words", "value": 1},
    {"type": "max_chars", "value": 2000},
    {"type": "contains", "text": "x"},
    {"type": "not_contains", "text": "y", "case": True},
    {"type": "one_of", "values": ["a", "b"]},
]
if HAS_LANGID:
    ALL_KINDS.append({"type": "language", "code": "de"})


def test_to_json_is_canonical_and_round_trips() -> None:
    parsed = parse_checks(ALL_KINDS)
    canonical = [c.to_json() for c in parsed]
    assert parse_checks(canonical) == parsed
    assert [c.to_json() for c in parse_checks(canonical)] == canonical
    assert canonical[0] == {"type": "json", "name": "json"}
    assert canonical[2] == {"type": "regex", "name": "regex", "pattern": "^A", "must": "match", "flags": "im"}
    assert canonical[7] == {"type": "contains", "name": "contains", "text": "x", "case": False}


def test_to_json_hands_out_copies() -> None:
    check = one({"type": "json_schema", "schema": {"type": "object"}})
    check.to_json()["schema"]["type"] = "string"
    assert check.to_json()["schema"] == {"type": "object"}


def test_parsing_is_cached_by_content() -> None:
    first = parse_checks([{"type": "max_words", "value": 5}, {"type": "json"}])
    again = parse_checks([{"value": 5, "type": "max_words"}, {"type": "json"}])  # same definition, keys reordered
    assert first is again
    assert parse_checks([{"type": "max_words", "value": 6}, {"type": "json"}]) is not first


def test_run_checks_gives_one_row_per_check_in_order() -> None:
    parsed = parse_checks([{"type": "json"}, {"type": "max_chars", "value": 3, "name": "tiny"}])
    assert run_checks(parsed, "[1, 2]") == [("json", True, None), ("tiny", False, "6 characters, over 3")]
    assert run_checks((), "anything") == []
