"""``refusal_phrases`` in the rubric (issue 10): extra phrases that count as a refusal in a comparison's drift
table, beside the default list; a bad value is a located rubric error; a follow-up (the baseline's rubric)
and a plain candidate batch both have them counted by ``compare_batches``."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy.engine import Engine

from reviewer_app.batches.rubric_file import parse_rubric_text
from reviewer_app.domain.rubric import Rubric
from reviewer_app.errors import RubricError
from reviewer_app.versions.batch_compare import compare_batches
from reviewer_app.versions.refusals import DEFAULT_REFUSAL_PHRASES
from tests.support.compare_chain import RUBRIC, SCENARIOS, load, records

PHRASE = "Als KI darf ich das nicht"


def test_phrases_are_parsed_trimmed_deduplicated_and_stored() -> None:
    rubric = parse_rubric_text(f'refusal_phrases = [" {PHRASE} ", "{PHRASE}", "Nope."]\n' + RUBRIC)
    assert rubric.refusal_phrases == (PHRASE, "Nope.")
    assert Rubric.from_json(rubric.to_json()) == rubric


def test_a_rubric_without_phrases_is_stored_as_before() -> None:
    rubric = parse_rubric_text(RUBRIC)
    assert rubric.refusal_phrases == ()
    assert "refusal_phrases" not in rubric.to_json()  # batches loaded earlier keep their stored rubric text
    assert Rubric.from_json(rubric.to_json()) == rubric


@pytest.mark.parametrize(
    ("value", "field", "says"),
    [
        ('"I cannot"', "refusal_phrases", "must be a list of phrases"),
        ('["ok", 3]', "refusal_phrases[1]", "must be a non-empty phrase"),
        ('["ok", "  "]', "refusal_phrases[1]", "must be a non-empty phrase"),
        ('["' + "x" * 201 + '"]', "refusal_phrases[0]", "at most 200"),
        ('["two\\nlines"]', "refusal_phrases[0]", "control character"),
    ],
)
def test_a_bad_value_is_a_located_rubric_error(value: str, field: str, says: str) -> None:
    with pytest.raises(RubricError) as caught:
        parse_rubric_text(f"refusal_phrases = {value}\n" + RUBRIC, source="my-rubric.toml")
    problems = caught.value.problems
    assert [(p.file, p.field) for p in problems] == [("my-rubric.toml", field)], problems
    assert says in problems[0].message


def test_the_candidates_rubric_phrases_count_as_refusals(engine: Engine, tmp_path: Path) -> None:
    """m1's qa outputs say PHRASE (not in the default list) in the candidate: a refusal only with the rubric key."""
    assert not any(p in PHRASE.lower() for p in DEFAULT_REFUSAL_PHRASES)
    rows = records({"m1": "m1"})
    changed = [dict(r, output=f"{PHRASE}. {r['output']}") if r["scenario"] == "qa" else r for r in rows]
    load(engine, tmp_path, "v1", rows)
    load(engine, tmp_path, "plain", changed)
    load(engine, tmp_path, "told", changed, rubric=f"refusal_phrases = [{PHRASE.upper()!r}]\n" + RUBRIC)

    def rate(candidate: str) -> dict[str, float | None]:
        drift = compare_batches(engine, "v1", candidate, rounds=100).drift
        return {d.scenario: d.candidate for d in drift if d.metric == "refusal_rate"}

    assert rate("plain") == dict.fromkeys(SCENARIOS, 0.0)
    told = rate("told")
    assert told == {"qa": 1.0, "summaries": 0.0}
