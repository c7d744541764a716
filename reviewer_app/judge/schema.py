"""The judge's answer: the structured-output schema a request asks for, and the check of the reply.

:func:`answer_schema` builds the ``response_format`` of an OpenAI-compatible chat request (type
``json_schema``, ``strict``: OpenAI structured outputs, which vLLM, llama.cpp's server and Ollama accept too)
from the questions reviewers answer. The reply is one object::

    {"reason": "one or two sentences, or null", "answers": {"correctness": 4, "follows_format": 1}}

``reason`` comes first, so a model that writes in order gives its reason before its scores. Each question
allows what the reviewer's form allows: a Likert score or a binary 0/1 as a whole number from its list, a
continuous score as a number from min to max, a categorical answer as one of its choices, and a pairwise
verdict as ``"A"``, ``"B"``, ``"tie"`` or ``"both_bad"`` (the labels the answers are shown under, never the
stored ``left``/``right``, so that the judge answers about what it read).

:func:`parse_answer` checks a reply against the schema (also when the server ignored ``response_format``)
and gives the answers as the rating table stores them (``"4"``, ``"1"``, ``"left"``); a reply that cannot be
used raises :class:`InvalidAnswer`, whose reason says what was wrong, for one reprompt
(:attr:`InvalidAnswer.reprompt`) and then a recorded failure. Like the generation client's
``RequestFailed``, it is not a user error: the model, not a person, wrote the reply.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from reviewer_app.domain.enums import Mode, PairwiseChoice, Scale
from reviewer_app.domain.rubric import PAIRWISE_CHOICES, Dimension, Rubric
from reviewer_app.domain.scales import spec_of

__all__ = ["PAIRWISE_VALUES", "InvalidAnswer", "JudgeAnswer", "answer_schema", "judge_values", "parse_answer"]

SCHEMA_NAME = "judge_answer"
# What the judge writes for a pairwise verdict -> the value stored (A is the answer shown first, on the left).
PAIRWISE_VALUES: dict[str, str] = {
    "A": PairwiseChoice.LEFT.value,
    "B": PairwiseChoice.RIGHT.value,
    "tie": PairwiseChoice.TIE.value,
    "both_bad": PairwiseChoice.BOTH_BAD.value,
}
_STORED_TO_JUDGE = {stored: written for written, stored in PAIRWISE_VALUES.items()}
_FENCE = re.compile(r"^```[a-zA-Z]*\s*\n(.*)\n```$", re.DOTALL)


@dataclass(frozen=True)
class JudgeAnswer:
    """A reply that passed the schema: each question's answer as stored text, and the reason (None if null)."""

    values: dict[str, str]
    reason: str | None


class InvalidAnswer(Exception):
    """A reply that cannot be used; ``problems`` says what was wrong, one line each (safe to record)."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = list(problems)
        self.reason = "the judge's reply is not a valid answer: " + "; ".join(self.problems)
        super().__init__(self.reason)

    @property
    def reprompt(self) -> str:
        """What to tell the model when asking it once more."""
        return (
            "Your reply could not be used: " + "; ".join(self.problems) + ". Reply again with only the JSON "
            "object asked for, answering every question with one of the values it allows."
        )


def _pairwise(dim: Dimension) -> bool:
    return dim.choices == PAIRWISE_CHOICES


def judge_values(dim: Dimension) -> list[tuple[int | float | str, str]]:
    """Each value the judge may write for ``dim`` with the stored text it stands for, in the form's order
    (``[(1, "1"), (0, "0")]`` for a binary question, ``[("A", "left"), ...]`` for a verdict); empty for a
    continuous scale, whose answers are any number from min to max."""
    scale = Scale(dim.scale)
    if _pairwise(dim):
        return [(_STORED_TO_JUDGE[v], v) for v in PAIRWISE_CHOICES]
    spec = spec_of(scale)
    if spec.typed:
        return []
    return [(spec.json_value(v), v) for v in spec.form_order(dim)]  # a whole-number scale's values as ints


def _property(dim: Dimension) -> dict[str, Any]:
    description = dim.description.strip() or dim.name.replace("_", " ").capitalize()
    if spec_of(dim.scale).typed:
        assert dim.min is not None and dim.max is not None
        return {"type": "number", "minimum": dim.min, "maximum": dim.max, "description": description}
    written = [w for w, _ in judge_values(dim)]
    kind = "integer" if all(isinstance(w, int) for w in written) else "string"
    return {"type": kind, "enum": written, "description": description}


def answer_schema(rubric: Rubric | Sequence[Dimension], mode: Mode | str) -> dict[str, Any]:
    """The ``response_format`` asking for the answers to ``rubric``'s questions: all of a rubric's dimensions,
    or the ones a view asks (``view.dimensions``: a scenario may narrow them). ``mode`` is the batch's;
    a pairwise batch's questions are verdicts between A and B, a rating batch's never are."""
    dims = tuple(rubric.dimensions if isinstance(rubric, Rubric) else rubric)
    if not dims:
        raise ValueError("a judge's answer needs at least one question")
    pairwise = Mode(mode) is Mode.PAIRWISE
    wrong = [d.name for d in dims if _pairwise(d) != pairwise]
    if wrong:
        raise ValueError(f"questions {wrong} do not belong to a {Mode(mode).value} batch")
    answers = {
        "type": "object",
        "properties": {d.name: _property(d) for d in dims},
        "required": [d.name for d in dims],
        "additionalProperties": False,
    }
    reason = {"type": ["string", "null"], "description": "Why, in one or two sentences (or null)."}
    schema = {
        "type": "object",
        "properties": {"reason": reason, "answers": answers},
        "required": ["reason", "answers"],
        "additionalProperties": False,
    }
    return {"type": "json_schema", "json_schema": {"name": SCHEMA_NAME, "strict": True, "schema": schema}}


def _json_schema(schema: dict[str, Any]) -> dict[str, Any]:
    inner = schema.get("json_schema", {}).get("schema") if schema.get("type") == "json_schema" else None
    if not isinstance(inner, dict):
        raise ValueError("not a response_format made by answer_schema")
    return inner


def _where(path: Sequence[object]) -> str:
    return ".".join(str(p) for p in path) or "the reply"


def _stored(prop: dict[str, Any], value: Any) -> str:
    """A checked answer as the rating table stores it."""
    if prop.get("type") == "integer":
        return str(int(value))  # 4.0 passes "integer" (JSON has one number type): stored as "4"
    if prop.get("type") == "number":
        return str(int(value)) if isinstance(value, int) else repr(float(value))
    if prop.get("enum") == list(PAIRWISE_VALUES):
        return PAIRWISE_VALUES[value]
    return str(value)


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def parse_answer(text: str, schema: dict[str, Any]) -> JudgeAnswer:
    """The answers in the model's reply ``text``, checked against ``schema`` (:func:`answer_schema`'s): JSON,
    every question answered, each with a value it allows, nothing else. A reply wrapped in one Markdown code
    fence (a server that ignored ``response_format``) is read inside it. Raises :class:`InvalidAnswer`."""
    from jsonschema import validators  # type: ignore[import-untyped]

    inner = _json_schema(schema)
    stripped = text.strip()
    fenced = _FENCE.match(stripped)
    if fenced:
        stripped = fenced.group(1).strip()
    if not stripped:
        raise InvalidAnswer(["the reply is empty"])
    try:
        data = json.loads(stripped, parse_constant=_no_constant)
    except ValueError as exc:
        why = f"{exc.msg} at line {exc.lineno}, column {exc.colno}" if isinstance(exc, json.JSONDecodeError) else exc
        shown = stripped if len(stripped) <= 80 else stripped[:77] + "..."
        raise InvalidAnswer([f"the reply is not JSON ({why}): {shown!r}"]) from None
    validator = validators.Draft202012Validator(inner)
    errors = sorted(validator.iter_errors(data), key=lambda e: (list(map(str, e.absolute_path)), e.message))
    problems = [f"{_where(list(e.absolute_path))}: {e.message}" for e in errors]
    if problems:
        raise InvalidAnswer(problems)
    props = inner["properties"]["answers"]["properties"]
    values = {name: _stored(props[name], value) for name, value in data["answers"].items()}
    return JudgeAnswer(values=values, reason=data["reason"])
