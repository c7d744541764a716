"""An answer refused because others completed the item while the reviewer's hold had run out: the reviewer
is told what happened on the next page, whatever item (or none) comes next."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy.engine import Engine

from reviewer_app.batches.loading import load_batch
from reviewer_app.people.people import add_reviewer
from reviewer_app.review.reviews import next_item, submit_review
from tests.helpers import RATING_RUBRIC, expire_reservations, make_records, write_batch, write_rubric
from tests.support.apptest import app_for
from tests.ui.views.test_pages import _submit, choose

ANSWER = {"correctness": "4", "follows_format": "1"}


def test_a_refused_late_answer_is_explained_on_the_next_page(engine: Engine, tmp_path: Path) -> None:
    summary = load_batch(
        engine,
        [write_batch(tmp_path, make_records(1, ["m1"]))],
        write_rubric(tmp_path, RATING_RUBRIC.format(overlap=1)),
        name="pool",
        open_now=True,
    )
    _, link = add_reviewer(engine, "slow")
    fast = add_reviewer(engine, "fast")[0]
    at = app_for(link)
    at.run()  # slow opens the only item: a pool claim with a reservation
    assert not at.exception, at.exception
    expire_reservations(engine)  # the hold runs out
    opened = next_item(engine, summary.batch_id, fast.id)  # ... fast takes the slot and completes the item
    assert opened is not None
    submit_review(engine, fast.id, opened.assignment_id, ANSWER)
    shown = [h.value for h in at.subheader if h.value.startswith("Item ")]
    at.run()  # a rerun before submitting (a toggle, a refresh) keeps the opened item on screen
    assert [h.value for h in at.subheader if h.value.startswith("Item ")] == shown
    for radio in at.radio:
        choose(radio, 0)
    _submit(at)
    at.run()
    assert not at.exception, at.exception
    warnings = [w.value for w in at.warning]
    assert any("your answer was not saved" in w for w in warnings), warnings
    assert not any(s.value.startswith("Saved item") for s in at.success)
