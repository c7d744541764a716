"""An archived batch leaves the lists of every page, not only the Admin page's: the reviewer's batch choice
and the lead's page. (Needs ``storage.repositories.batches.list_batches`` to leave archived batches out.)"""

from __future__ import annotations

from pathlib import Path

from sqlalchemy.engine import Engine

from reviewer_app.batches.admin import archive_batch, restore_batch
from reviewer_app.batches.catalog import batch_list
from reviewer_app.batches.loading import load_batch
from reviewer_app.people.people import add_reviewer
from reviewer_app.review.reviews import batches_for
from tests.helpers import RATING_RUBRIC, make_records, write_batch, write_rubric
from tests.support.apptest import app_for


def _load(engine: Engine, folder: Path, name: str) -> None:
    load_batch(
        engine,
        [write_batch(folder / name, make_records(2, ["m-one", "m-two"], scenarios=(name,)))],
        write_rubric(folder / name, RATING_RUBRIC.format(overlap=1)),
        name=name,
        open_now=True,
    )


def test_an_archived_batch_is_in_no_list(engine: Engine, tmp_path: Path) -> None:
    _load(engine, tmp_path, "kept")
    _load(engine, tmp_path, "oops")
    ann = add_reviewer(engine, "ann")[0]
    lead_link = add_reviewer(engine, "leo", "lead")[1]
    assert [b.name for b in batches_for(engine, ann.id)] == ["kept", "oops"]
    archive_batch(engine, "oops")
    assert [b.name for b in batch_list(engine)] == ["kept"]
    assert [b.name for b in batches_for(engine, ann.id)] == ["kept"]
    lead = app_for(lead_link)
    lead.run()
    assert not lead.exception
    assert lead.selectbox(key="lead_batch_id").options == ["kept (rating)"]
    restore_batch(engine, "oops")
    assert [b.name for b in batch_list(engine)] == ["kept", "oops"]
