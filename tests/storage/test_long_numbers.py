"""The metadata reader's check for integers too long for orjson's fast path: the same answer as the regular
expression it replaced, for JSON text (whose numbers are ASCII digits), at run lengths around the limit."""

from __future__ import annotations

import json
import random
import re

import pytest

from storage.repositories.results.outputs import LONG_NUMBER_DIGITS, has_long_number

OLD = re.compile(rf"[0-9]{{{LONG_NUMBER_DIGITS}}}")


@pytest.mark.parametrize(
    "text",
    [
        "",
        "[]",
        "1" * 18,
        "1" * 19,
        "x" + "9" * 19 + "x",
        '{"id": 12345678901234567890}',
        '{"id": 1234567890123456789.5}',
        '{"a": 123456789012345678, "b": "é١٢٣٤٥٦٧٨٩٠١٢٣٤٥٦٧٨٩٠"}',  # Arabic-Indic digits are not JSON numbers
        '{"t": "日本語 1234567890 123456789"}',
        "\ud800" + "0" * 19,  # a lone surrogate (as a text column could hold) does not break the check
    ],
)
def test_the_check_finds_runs_of_ascii_digits(text: str) -> None:
    assert has_long_number(text) == bool(OLD.search(text))


def test_the_check_agrees_with_the_regular_expression_on_random_metadata() -> None:
    rng = random.Random(7)
    for _ in range(300):
        objects = [
            {"latency_ms": rng.random() * 10 ** rng.randint(0, 12), "n": rng.randint(0, 10 ** rng.randint(1, 20))}
            for _ in range(rng.randint(1, 20))
        ]
        text = json.dumps(objects)
        assert has_long_number(text) == bool(OLD.search(text)), text
