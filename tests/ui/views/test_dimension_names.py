"""Dimension names are the rubric author's words: none of them may collide with the form's own widgets."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy.engine import Engine

from reviewer_app.batches.loading import load_batch
from reviewer_app.people.people import add_reviewer
from reviewer_app.ratings.export import export_rows
from reviewer_app.review.assignment import assign
from tests.helpers import make_records, write_batch, write_rubric
from tests.support.apptest import app_for
from tests.ui.views.test_pages import _submit, choose

RUBRIC = """
mode = "rating"
overlap = 1
seed = 3
"""
# Each name is also the key suffix of one of the form's other widgets (comment box, can't-judge checkbox,
# its reason, the form itself, a raw-text switch): before dimension keys had their own namespace, a batch
# with any of them broke every item with a duplicate widget key.
NAMES = ("comment", "cant", "reason", "form", "raw_answer")


def test_dimensions_named_like_the_forms_widgets_work(engine: Engine, tmp_path: Path) -> None:
    dims = "".join(
        f'[[dimensions]]\nname = "{n}"\ndescription = "About {n}"\nscale = "binary"\nlevel = "nominal"\n' for n in NAMES
    )
    load_batch(
        engine,
        [write_batch(tmp_path, make_records(2, ["m1"]))],
        write_rubric(tmp_path, RUBRIC + dims),
        name="names",
        open_now=True,
    )
    _, link = add_reviewer(engine, "ann")
    assign(engine, "names")
    at = app_for(link)
    at.run()
    assert not at.exception, at.exception
    assert len(at.radio) == len(NAMES)
    for radio in at.radio:
        choose(radio, 0)
    at.text_area[0].input("a note")
    _submit(at)
    at.run()
    assert not at.exception, at.exception
    rows = export_rows(engine, "names")
    assert sorted(r["dimension"] for r in rows) == sorted(NAMES)
    assert {r.get("comment") for r in rows} <= {"a note", None}
