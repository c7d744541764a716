"""Nothing that counts rows reaches a reviewer's page (issue 33): widget keys and the key handler's script name
the item by an opaque per-session key, never by its assignment id, which told a reviewer their rank in the plan
(``a41_dim_correctness``)."""

from __future__ import annotations

import re
from pathlib import Path

from sqlalchemy.engine import Engine

from reviewer_app.batches.loading import load_batch
from reviewer_app.people.people import add_reviewer
from reviewer_app.review.assignment import assign
from tests.helpers import RATING_RUBRIC, make_records, write_batch, write_rubric
from tests.support.apptest import app_for, sent_text

OPAQUE = re.compile(r"i[0-9a-f]{16}")


def test_the_page_names_its_item_by_an_opaque_key_of_this_session(engine: Engine, tmp_path: Path) -> None:
    rubric = write_rubric(tmp_path, RATING_RUBRIC.format(overlap=1))
    load_batch(engine, [write_batch(tmp_path, make_records(4, ["m1", "m2"]))], rubric, name="b", open_now=True)
    _, link = add_reviewer(engine, "ann")
    assign(engine, "b")
    keys = []
    for _ in range(2):  # two browser sessions of the same reviewer, on the same first item
        at = app_for(link)
        at.run()
        assert not at.exception, at.exception
        assignment = at.session_state["form_assignment"]
        page = sent_text(at)
        assert "Item " in page
        assert not re.search(r"\ba\d+_(dim_|comment|cant|reason|raw)", page)  # the old id-based keys
        widget_keys = {str(k) for k in at.session_state if re.match(r"^i[0-9a-f]{16}_", str(k))}
        assert widget_keys >= {f"{k.split('_')[0]}_comment" for k in widget_keys}
        (key,) = {k.split("_")[0] for k in widget_keys}
        assert OPAQUE.fullmatch(key)
        assert f'ITEM = \\"{key}\\"' in page  # the key handler's script (quotes escaped as sent)
        assert not re.search(r"ITEM = \d", page)
        keys.append((assignment, key))
    (first, key1), (second, key2) = keys
    assert first == second and key1 != key2  # the same item, unrelated keys: nothing to line up across sessions
