"""Continuous dimensions and lower-is-better scores in the rubric: parsed, checked, stored, answered."""

from __future__ import annotations

import json

import pytest

from reviewer_app.batches.rubric_file import parse_rubric_text
from reviewer_app.domain.enums import Scale
from reviewer_app.domain.rubric import Rubric
from reviewer_app.errors import RubricError

MQM = """
[[dimensions]]
name = "mqm"
description = "MQM error score (0 = perfect)"
scale = "continuous"
min = 0.0
max = 200.0
level = "interval"
higher_is_better = false

[[dimensions]]
name = "adequacy"
description = "Direct assessment"
scale = "continuous"
min = 0
max = 100

[[dimensions]]
name = "errors"
description = "Number of errors"
scale = "likert"
min = 0
max = 10
higher_is_better = false

[[gold]]
sample_id = "s1"
model = "m"
expected = { mqm = 12.5, errors = 0 }
"""


def test_continuous_and_lower_is_better_dimensions_parse():
    rubric = parse_rubric_text(MQM)
    mqm, adequacy, errors = rubric.dimensions
    assert mqm.scale == Scale.CONTINUOUS and (mqm.min, mqm.max) == (0.0, 200.0)
    assert mqm.level == "interval" and mqm.higher_is_better is False and mqm.numeric()
    assert adequacy.level == "interval" and adequacy.higher_is_better is True  # the defaults
    assert errors.scale == Scale.LIKERT and errors.higher_is_better is False
    assert rubric.gold[0].expected == {"mqm": "12.5", "errors": "0"}


def test_continuous_answers_are_any_number_in_range():
    mqm = parse_rubric_text(MQM).dimensions[0]
    for ok in ("0", "12.5", "200", "1e1", "3.0"):
        assert mqm.accepts(ok), ok
    for bad in ("-0.1", "200.5", "nan", "inf", "twelve", ""):
        assert not mqm.accepts(bad), bad
    assert mqm.allowed_values() == [] and mqm.value_hint() == "a number from 0 to 200"
    errors = parse_rubric_text(MQM).dimensions[2]
    assert errors.accepts("3") and not errors.accepts("3.5") and not errors.accepts("11")


def test_stored_rubrics_round_trip_and_old_ones_still_load():
    rubric = parse_rubric_text(MQM)
    assert Rubric.from_json(rubric.to_json()) == rubric
    old = json.loads(rubric.to_json())
    for d in old["dimensions"]:
        del d["higher_is_better"]  # a batch stored before the field existed
    loaded = Rubric.from_json(json.dumps(old))
    assert all(d.higher_is_better for d in loaded.dimensions)


@pytest.mark.parametrize(
    ("dimension", "message"),
    [
        ('scale = "continuous"\nmin = 5.0\nmax = 1.0', "max must be above min"),
        ('scale = "continuous"\nmin = "0"\nmax = 1.0', "needs numeric min and max"),
        ('scale = "continuous"\nmin = 0.0\nmax = 1.0\nlevel = "ordinal"', "interval or ratio, not ordinal"),
        ('scale = "continuous"\nmin = -1.0\nmax = 1.0\nlevel = "ratio"', "a ratio scale needs min >= 0"),
        ('scale = "continuous"\nmin = 0.0\nmax = 1.0\nlabels = { 0 = "bad" }', "has no labels"),
        ('scale = "likert"\nmin = 1\nmax = 5\nhigher_is_better = "no"', "must be true or false"),
        ('scale = "categorical"\nchoices = ["a", "b"]\nhigher_is_better = false', "not to categorical choices"),
        ('scale = "percent"', '"continuous"'),
    ],
)
def test_bad_continuous_dimensions_are_explained(dimension, message):
    with pytest.raises(RubricError) as err:
        parse_rubric_text(f'[[dimensions]]\nname = "x"\ndescription = "x"\n{dimension}\n')
    assert message in str(err.value)


def test_gold_answer_outside_a_continuous_scale_is_refused():
    text = MQM.replace("mqm = 12.5", "mqm = 250")
    with pytest.raises(RubricError) as err:
        parse_rubric_text(text)
    assert "250 is not an allowed answer (a number from 0 to 200)" in str(err.value)
