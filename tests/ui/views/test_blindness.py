"""Blindness: for every item of the demo batches, as a reviewer sees it, neither what the page sends nor
the session state names a model, a source file or a sample id (which would give away the original order)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from sqlalchemy.engine import Engine

from reviewer_app.demo.seed import HERE
from reviewer_app.review import drafts, reviews
from tests.support.apptest import app_for, sent_text, state_text

MODELS = ("aurora-7b", "borealis-xl", "cirrus-mini", "dynamo-2")


def _forbidden() -> re.Pattern[str]:
    words = set()
    for name in ("demo.jsonl", "demo_pairwise.jsonl", "demo_v2.jsonl"):
        for line in (HERE / name).read_text(encoding="utf-8").splitlines():
            rec = json.loads(line)
            words.add(rec["sample_id"])
            words.update(Path(p).name for p in rec.get("images", []))
    words.update(MODELS)
    words.update(m.split("-")[0] for m in MODELS)  # "aurora" alone would give the model away too
    words.update(("demo.jsonl", "demo_pairwise.jsonl", "demo_v2.jsonl", "rubric.toml"))
    return re.compile("|".join(re.escape(w) for w in sorted(words, key=len, reverse=True)), re.IGNORECASE)


def test_no_item_of_the_demo_names_a_model_file_or_sample(sqlite_engine: Engine, demo: dict[str, str]) -> None:
    forbidden = _forbidden()
    seen_items: set[tuple[int, str]] = set()
    checked = with_images = 0
    for name in ("demo-reviewer", "demo-colleague-1", "demo-colleague-2"):
        at = app_for(demo[name])
        at.run()
        person_id = at.session_state["person_id"]
        for batch in reviews.batches_for(sqlite_engine, person_id):
            for entry in reviews.queue(sqlite_engine, batch.batch_id, person_id):
                view = reviews.item_view(sqlite_engine, person_id, entry.assignment_id)
                key = (batch.batch_id, json.dumps(view.prompt) + "\x00".join(sorted(o.text for o in view.outputs)))
                if key in seen_items:
                    continue
                seen_items.add(key)
                at.session_state["batch_id"] = batch.batch_id
                at.session_state["assignment_id"] = entry.assignment_id
                at.run()
                assert not at.exception, at.exception
                page = sent_text(at)
                assert f"Item {view.label}" in page  # the item really is on the page
                leak = forbidden.search(page) or forbidden.search(state_text(at))
                assert leak is None, f"item {view.label} shows {leak.group(0)!r}"
                if view.images:  # the chart and the scanned form are really shown
                    assert not at.warning and "imgs" in page
                    with_images += 1
                checked += 1
    # every rating item and every pair of the demo, and demo-v2's 144 outputs plus its 23 anchors whose text the
    # new versions changed (dynamo-2 on 11 support questions, cirrus-mini on 12 data questions; an anchor that
    # shows the same text as a new output is the same page)
    assert checked == 144 + 36 + 144 + 23
    assert with_images == 18  # two image samples x four models in demo and in demo-v2, and their two changed anchors


def test_injection_output_is_sent_as_text(sqlite_engine: Engine, demo: dict[str, str]) -> None:
    for name in ("demo-reviewer", "demo-colleague-1"):
        at = app_for(demo[name])
        at.run()
        person_id = at.session_state["person_id"]
        batch = next(b for b in reviews.batches_for(sqlite_engine, person_id) if b.name == "demo")
        for entry in reviews.queue(sqlite_engine, batch.batch_id, person_id):
            view = reviews.item_view(sqlite_engine, person_id, entry.assignment_id)
            if "<script>" in view.outputs[0].text:
                at.session_state["assignment_id"] = entry.assignment_id
                at.run()
                bodies = [e.proto.body for e in at.get("html")]
                shown = next(b for b in bodies if "alert" in b)
                assert "<script>" not in shown and "<img" not in shown and "<a " not in shown
                assert (
                    "&lt;script&gt;alert(&quot;pwned&quot;)&lt;/script&gt;" in shown
                    or '&lt;script&gt;alert("pwned")&lt;/script&gt;' in shown
                )
                assert not any(getattr(m.proto, "allow_html", False) for m in at.markdown)
                return
    raise AssertionError("the injection item is in nobody's queue")


def test_drafts_and_every_page_of_previous_items_stay_blind(sqlite_engine: Engine, demo: dict[str, str]) -> None:
    """A restored draft and the paged "Your previous items" list (labels, places, prompt snippets) name no
    model, file or sample either: on the page or in the session state."""
    forbidden = _forbidden()
    at = app_for(demo["demo-colleague-1"])
    at.run()
    person_id = at.session_state["person_id"]
    for batch in reviews.batches_for(sqlite_engine, person_id):
        entries = reviews.queue(sqlite_engine, batch.batch_id, person_id)
        first = entries[0].assignment_id
        drafts.save_draft(sqlite_engine, person_id, first, drafts.Draft({"x": "1"}, "a comment", True, "why"))
        fresh = app_for(demo["demo-colleague-1"])
        fresh.run()
        fresh.session_state["batch_id"] = batch.batch_id
        fresh.session_state["assignment_id"] = first
        fresh.run()
        assert not fresh.exception, fresh.exception
        assert [c.value for c in fresh.checkbox] == [True], [e.value for e in fresh.error]  # the draft is shown
        pages = 0
        while True:
            page = sent_text(fresh)
            leak = forbidden.search(page) or forbidden.search(state_text(fresh))
            assert leak is None, f"batch {batch.name}: {leak.group(0)!r}"
            pages += 1
            older = [b for b in fresh.button if b.label == "Older"]
            if not older or older[0].disabled:
                break
            older[0].click()
            fresh.run()
        assert pages >= 1
