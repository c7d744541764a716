"""The judge's structured answer: the schema a request asks for (strict OpenAI structured outputs, built from
the rubric) and the check of a reply, whose errors say what was wrong."""

from __future__ import annotations

import json
from typing import Any

import pytest
from jsonschema import validators

from reviewer_app.domain.enums import Mode, Scale
from reviewer_app.domain.rubric import PAIRWISE_DIMENSION, Dimension, Rubric
from reviewer_app.judge.schema import InvalidAnswer, answer_schema, parse_answer

LIKERT = Dimension("correctness", "Is every fact right?", Scale.LIKERT, "ordinal", 1, 5, {"1": "wrong"})
BINARY = Dimension("follows_format", "", Scale.BINARY, "nominal")
TONE = Dimension("tone", "Which tone?", Scale.CATEGORICAL, "nominal", choices=("formal", "friendly", "curt"))
MQM = Dimension("mqm", "MQM errors", Scale.CONTINUOUS, "interval", 0.0, 200.0, higher_is_better=False)
RUBRIC = Rubric(mode=Mode.RATING, overlap=3, dimensions=(LIKERT, BINARY, TONE, MQM))
HELPFUL = Dimension(
    "helpfulness", "Which helps more?", Scale.CATEGORICAL, "nominal", choices=PAIRWISE_DIMENSION.choices
)


def _objects(schema: Any) -> list[dict[str, Any]]:
    if not isinstance(schema, dict):
        return []
    found = [schema] if schema.get("type") == "object" else []
    for value in schema.get("properties", {}).values():
        found += _objects(value)
    return found


def test_the_schema_is_strict_and_gives_each_question_its_values() -> None:
    schema = answer_schema(RUBRIC, Mode.RATING)
    assert schema["type"] == "json_schema" and schema["json_schema"]["strict"] is True
    inner = schema["json_schema"]["schema"]
    validators.Draft202012Validator.check_schema(inner)
    # OpenAI's strict mode: every object closed, every property required (an optional one is nullable).
    for obj in _objects(inner):
        assert obj["additionalProperties"] is False and obj["required"] == list(obj["properties"])
    assert list(inner["properties"]) == ["reason", "answers"]  # the reason is written before the scores
    assert inner["properties"]["reason"]["type"] == ["string", "null"]
    answers = inner["properties"]["answers"]["properties"]
    assert answers["correctness"] == {"type": "integer", "enum": [1, 2, 3, 4, 5], "description": "Is every fact right?"}
    assert answers["follows_format"]["enum"] == [1, 0] and answers["follows_format"]["description"] == "Follows format"
    assert answers["tone"] == {"type": "string", "enum": ["formal", "friendly", "curt"], "description": "Which tone?"}
    assert answers["mqm"] == {"type": "number", "minimum": 0.0, "maximum": 200.0, "description": "MQM errors"}
    # A view's questions (a scenario may narrow them) make a narrower schema.
    narrow = answer_schema([LIKERT], "rating")["json_schema"]["schema"]["properties"]["answers"]
    assert narrow["required"] == ["correctness"]


def test_a_pairwise_schema_asks_for_a_verdict_between_a_and_b() -> None:
    schema = answer_schema(Rubric(mode=Mode.PAIRWISE, overlap=1, dimensions=(PAIRWISE_DIMENSION, HELPFUL)), "pairwise")
    answers = schema["json_schema"]["schema"]["properties"]["answers"]["properties"]
    assert answers["overall"]["enum"] == answers["helpfulness"]["enum"] == ["A", "B", "tie", "both_bad"]
    reply = '{"reason": "B cites its source.", "answers": {"overall": "B", "helpfulness": "A"}}'
    parsed = parse_answer(reply, schema)
    assert parsed.values == {"overall": "right", "helpfulness": "left"} and parsed.reason == "B cites its source."
    with pytest.raises(ValueError, match="do not belong to a rating batch"):
        answer_schema([PAIRWISE_DIMENSION], Mode.RATING)
    with pytest.raises(ValueError, match="do not belong to a pairwise batch"):
        answer_schema([LIKERT], Mode.PAIRWISE)


def test_a_valid_reply_gives_the_answers_as_stored() -> None:
    schema = answer_schema(RUBRIC, Mode.RATING)
    reply = {"reason": None, "answers": {"correctness": 4, "follows_format": 0, "tone": "curt", "mqm": 12.5}}
    parsed = parse_answer(json.dumps(reply), schema)
    assert parsed.values == {"correctness": "4", "follows_format": "0", "tone": "curt", "mqm": "12.5"}
    assert parsed.reason is None
    assert all(dim.accepts(parsed.values[dim.name]) for dim in RUBRIC.dimensions)
    # 4.0 is an integer in JSON; a whole continuous score stays whole; a fenced reply is read inside its fence.
    reply["answers"] = {"correctness": 4.0, "follows_format": 1, "tone": "formal", "mqm": 3}
    fenced = "```json\n" + json.dumps(reply) + "\n```"
    assert parse_answer(fenced, schema).values == {
        "correctness": "4",
        "follows_format": "1",
        "tone": "formal",
        "mqm": "3",
    }


@pytest.mark.parametrize(
    ("reply", "problems"),
    [
        ("", ["the reply is empty"]),
        ("The answer is 4.", ["the reply is not JSON (Expecting value at line 1, column 1): 'The answer is 4.'"]),
        ('{"reason": null, "answers": {"correctness": 7, "follows_format": 1, "tone": "curt", "mqm": 1}}',
         ["answers.correctness: 7 is not one of [1, 2, 3, 4, 5]"]),
        ('{"reason": null, "answers": {"correctness": 2, "tone": "curt", "mqm": 1}}',
         ["answers: 'follows_format' is a required property"]),
        ('{"reason": null, "answers": {"correctness": 2, "follows_format": true, "tone": "rude", "mqm": 201}}',
         ["answers.follows_format: True is not of type 'integer'", "answers.follows_format: True is not one of [1, 0]",
          "answers.mqm: 201 is greater than the maximum of 200.0",
          "answers.tone: 'rude' is not one of ['formal', 'friendly', 'curt']"]),
        ('{"reason": null, "answers": {"correctness": 2, "follows_format": 1, "tone": "curt", "mqm": NaN}}',
         ["the reply is not JSON (NaN is not a JSON number)"]),
        ('{"answers": {"correctness": 2, "follows_format": 1, "tone": "curt", "mqm": 1, "model": "x"}}',
         ["answers: Additional properties are not allowed ('model' was unexpected)",
          "the reply: 'reason' is a required property"]),
        ('[4, 1]', ["the reply: [4, 1] is not of type 'object'"]),
    ],
)  # fmt: skip
def test_an_invalid_reply_says_what_was_wrong(reply: str, problems: list[str]) -> None:
    with pytest.raises(InvalidAnswer) as caught:
        parse_answer(reply, answer_schema(RUBRIC, Mode.RATING))
    found = caught.value.problems
    assert len(found) == len(problems)
    for got, want in zip(sorted(found), sorted(problems), strict=True):
        assert got.startswith(want), (got, want)
    assert caught.value.reason.startswith("the judge's reply is not a valid answer: ")
    assert caught.value.reprompt.startswith("Your reply could not be used: " + found[0])
