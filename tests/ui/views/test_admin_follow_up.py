"""Loading a follow-up batch on the Admin page: upload the new outputs, pick the baseline; the same load and
checks as `blind-review load-batch --follow-up`."""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy.engine import Engine

from reviewer_app.batches.catalog import batch_list, find_batch
from reviewer_app.batches.loading import load_batch
from reviewer_app.people.people import add_reviewer
from tests.helpers import RATING_RUBRIC, make_records, write_batch, write_rubric
from tests.support.apptest import app_for


def _lines(records: list[dict[str, Any]]) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in records).encode()


def test_the_admin_loads_a_follow_up_and_its_errors_are_located(engine: Engine, tmp_path: Any) -> None:
    records = make_records(10, ["m-one", "m-two"])
    load_batch(engine, [write_batch(tmp_path, records)], write_rubric(tmp_path, RATING_RUBRIC.format(overlap=1)),
               name="round-1", open_now=True)  # fmt: skip
    link = add_reviewer(engine, "root", "admin")[1]
    at = app_for(link)
    at.run()
    form_files = next(u for u in at.get("file_uploader") if u.key == "follow_up_files")
    new = [{**r, "model": r["model"] + "-b"} for r in records]
    form_files.set_value([("new.jsonl", _lines([*new, {**new[0], "sample_id": "s77"}]), "application/json")])
    at.selectbox(key="follow_up_baseline").set_value("round-1")
    at.text_input(key="follow_up_name").input("round-2")
    next(b for b in at.button if b.label == "Check and load the follow-up").click()
    at.run()
    assert not at.exception
    shown = at.error[0].value + "\n" + at.code[0].value
    assert "new.jsonl:21: sample_id: 's77' is not a sample of the baseline batch 'round-1'" in shown
    assert [b.name for b in batch_list(engine)] == ["round-1"]

    form_files = next(u for u in at.get("file_uploader") if u.key == "follow_up_files")
    form_files.set_value([("new.jsonl", _lines(new), "application/json")])
    next(b for b in at.button if b.label == "Check and load the follow-up").click()
    at.run()
    assert not at.exception
    assert any(s.value.startswith("Loaded batch 'round-2'") for s in at.success)
    assert "follow-up of 'round-1': 4 anchor item(s)" in at.code[0].value
    assert find_batch(engine, "round-2").baseline_batch_id == find_batch(engine, "round-1").id
