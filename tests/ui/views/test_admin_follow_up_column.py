"""The Admin page's Batches table says which batch a follow-up follows up, in a last column, as
`list-batches` does."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy.engine import Engine

from reviewer_app.batches.loading import load_batch
from reviewer_app.people.people import add_reviewer
from tests.helpers import RATING_RUBRIC, make_records, write_batch, write_rubric
from tests.support.apptest import app_for


def test_the_batches_table_ends_with_the_baseline_of_each_follow_up(engine: Engine, tmp_path: Path) -> None:
    records = make_records(10, ["m-one", "m-two"])
    rubric = write_rubric(tmp_path, RATING_RUBRIC.format(overlap=1))
    load_batch(engine, [write_batch(tmp_path / "a", records)], rubric, name="round-1", open_now=True)
    new = [{**r, "output": "New: " + r["output"]} for r in records]
    load_batch(engine, [write_batch(tmp_path / "b", new)], None, name="round-2", follow_up="round-1", open_now=True)
    at = app_for(add_reviewer(engine, "root", "admin")[1])
    at.run()
    assert not at.exception
    table = at.dataframe[0].value
    assert list(table.columns)[-2:] == ["models (outputs)", "follow-up of"]
    assert table["follow-up of"].tolist() == ["", "round-1"]
