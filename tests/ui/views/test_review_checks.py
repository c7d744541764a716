"""The reviewer's page shows the automatic checks' results under an answer only when the rubric sets
``show_checks`` (AppTest, SQLite and PostgreSQL); names and details are literal text."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy.engine import Engine

from reviewer_app.batches.loading import load_batch
from reviewer_app.people.people import add_reviewer
from reviewer_app.review.assignment import assign
from tests.helpers import RATING_RUBRIC, make_records, write_batch, write_rubric
from tests.support.apptest import app_for, sent_text

CHECKS = [{"type": "json", "name": "*valid* JSON"}, {"type": "max_words", "value": 2}]


@pytest.mark.parametrize("show", [True, False])
def test_check_results_appear_under_the_answer_only_when_the_rubric_says_so(
    engine: Engine, tmp_path: Path, show: bool
) -> None:
    records = [{**r, "checks": CHECKS} for r in make_records(1, ["m1"])]  # "Answer 0 by a model.": fails both
    rubric = RATING_RUBRIC.format(overlap=1).replace("seed = 11", f"seed = 11\nshow_checks = {str(show).lower()}")
    load_batch(engine, [write_batch(tmp_path, records)], write_rubric(tmp_path, rubric), name="b", open_now=True)
    link = add_reviewer(engine, "ann")[1]
    assign(engine, "b")
    at = app_for(link)
    at.run(timeout=60)
    assert not at.exception, at.exception
    captions = [c.value for c in at.caption if c.value.startswith("Automatic checks:")]
    if show:
        assert captions == [
            r"Automatic checks: ❌ \*valid\* JSON (not JSON: unexpected character, expected a JSON value: line 1 "
            r"column 1 (char 0)) · ❌ max\_words (5 words, over 2)"
        ]
    else:
        assert captions == []
        assert "Automatic checks" not in sent_text(at) and "max_words" not in sent_text(at)
