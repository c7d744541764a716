"""--on-leak mask (the default): reviewers see "[model name]" where an output names a model; leads' frames and
exports keep the text as written; --on-leak flag still shows it unmasked."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy.engine import Engine

from reviewer_app.batches.loading import load_batch
from reviewer_app.domain.enums import OnLeak
from reviewer_app.people.people import add_reviewer
from reviewer_app.review.reviews import next_item
from storage.engine import read_session
from storage.repositories.results.outputs import outputs_frame
from tests.helpers import RATING_RUBRIC, write_batch, write_rubric

LEAKY = "I am Cla\u00adude, an assistant made by anthropic. The total is 12."


def _records() -> list[dict[str, object]]:
    return [
        {"sample_id": "s1", "scenario": "qa", "prompt": "Total?", "model": "m1", "output": LEAKY},
    ]


def test_masking_is_the_default_and_only_reviewers_see_the_mask(engine: Engine, tmp_path: Path) -> None:
    summary = load_batch(
        engine,
        [write_batch(tmp_path, _records())],
        write_rubric(tmp_path, RATING_RUBRIC.format(overlap=1)),
        name="leaky",
        open_now=True,
    )
    assert summary.on_leak is OnLeak.MASK and len(summary.leaks) == 1
    assert any("masked" in line for line in summary.lines())
    ann = add_reviewer(engine, "ann")[0]
    view = next_item(engine, summary.batch_id, ann.id)
    assert view is not None
    assert view.outputs[0].text == "I am [model name], an assistant made by [model name]. The total is 12."
    with read_session(engine) as session:
        frame = outputs_frame(session, summary.batch_id)
    assert frame.loc[0, "leak_words"] == "Claude, Anthropic"
    assert frame.loc[0, "output_chars"] == len(LEAKY)  # leads read the output as written


@pytest.mark.parametrize("policy", [OnLeak.FLAG, "flag"])
def test_flag_shows_the_output_as_written(engine: Engine, tmp_path: Path, policy: OnLeak | str) -> None:
    summary = load_batch(
        engine,
        [write_batch(tmp_path, _records())],
        write_rubric(tmp_path, RATING_RUBRIC.format(overlap=1)),
        name="flagged",
        on_leak=policy,
        open_now=True,
    )
    ann = add_reviewer(engine, "ann")[0]
    view = next_item(engine, summary.batch_id, ann.id)
    assert view is not None and view.outputs[0].text == LEAKY
