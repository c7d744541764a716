"""Blindness of anchor items, as an attacker would test it: a reviewer of a follow-up batch cannot tell an
anchor (one of the baseline batch's own outputs shown again) from a new output.

Signed in as a reviewer, on every item of the follow-up, neither the page (every element sent) nor the session
state says "anchor", "baseline" or "follow-up", names a model or the baseline batch; and an anchor item's page
is the same page as a new output's of the same sample once the output's text and the item's label are taken
out (same layout, same widgets, same label scheme). The view object itself has no field that differs in kind.
Real Chromium (page HTML and websocket messages) is covered for titles by tests/browser/test_name_blindness.py;
anchors add no element of their own, which is what the page comparison here checks.
"""

from __future__ import annotations

import re
from dataclasses import fields
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select
from sqlalchemy.engine import Engine

from reviewer_app.batches.catalog import set_batch_open
from reviewer_app.batches.loading import load_batch
from reviewer_app.people.people import add_reviewer
from reviewer_app.review import reviews
from reviewer_app.review.assignment import assign
from storage.engine import read_session
from storage.models import Assignment, Item
from tests.helpers import PAIRWISE_RUBRIC, RATING_RUBRIC, write_batch, write_rubric
from tests.support.apptest import app_for, sent_text, state_text
from tests.support.fixed_secrets import fixed_batch_secrets

FORBIDDEN = re.compile(r"anchor|baseline|follow-?up|zephyr|orca|falcon|round-one", re.IGNORECASE)


def _records(models: tuple[str, ...], prefix: str) -> list[dict[str, Any]]:
    return [
        {
            "sample_id": f"q{i}",
            "scenario": "qa" if i % 2 else "writing",
            "prompt": f"Question {i}: what is the capital of country {i}?",
            "model": model,
            "output": f"{prefix} answer {i} of this kind, written by a machine ({k}).",
        }
        for i in range(6)
        for k, model in enumerate(models)
    ]


def _anchor_assignments(engine: Engine, batch_id: int) -> set[int]:
    with read_session(engine) as session:
        stmt = (
            select(Assignment.id)
            .join(Item, Item.id == Assignment.item_id)
            .where(Assignment.batch_id == batch_id, Item.is_anchor.is_(True))
        )
        return {int(a) for a in session.execute(stmt).scalars()}


@pytest.mark.parametrize("mode", ["rating", "pairwise"])
def test_a_reviewer_cannot_tell_an_anchor_from_a_new_output(
    engine: Engine, tmp_path: Path, mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Fixed batch secrets: the id order checked at the end follows the plan over the secret pool order, so with
    # fresh secrets a pairwise case's 4 anchors among 10 items came first (or last) by chance in 2 runs of 210
    # (a CI failure of [postgres-pairwise], December 2026).
    fixed_batch_secrets(monkeypatch, "anchor-blindness")
    rubric = write_rubric(tmp_path / "a", (RATING_RUBRIC if mode == "rating" else PAIRWISE_RUBRIC).format(overlap=1))
    load_batch(engine, [write_batch(tmp_path / "a", _records(("zephyr-7b", "orca-2"), "A first"))], rubric,
               name="round-one", open_now=True)  # fmt: skip
    summary = load_batch(
        engine,
        [write_batch(tmp_path / "b", _records(("zephyr-7b", "falcon-40b"), "A second"))],
        None,
        name="Helpfulness",
        follow_up="round-one",
        anchor_share=0.5,
        open_now=True,
    )
    # Half of 3 samples, rounded up: 2 per scenario; each shows the baseline's 2 outputs (rating) or 1 pair.
    per_sample = 2 if mode == "rating" else 1
    own = 12 if mode == "rating" else 6
    assert summary.anchor_items == 4 * per_sample
    set_batch_open(engine, "round-one", False)  # the first round is over (an open one is listed to everyone)
    link = add_reviewer(engine, "ann")[1]
    assign(engine, "Helpfulness", ["ann"])
    anchors = _anchor_assignments(engine, summary.batch_id)
    assert len(anchors) == 4 * per_sample

    at = app_for(link)
    at.run()
    person_id = at.session_state["person_id"]
    at.session_state["batch_id"] = summary.batch_id
    pages: dict[int, tuple[str, Any]] = {}
    for entry in reviews.queue(engine, summary.batch_id, person_id):
        view = reviews.item_view(engine, person_id, entry.assignment_id)
        at = app_for(link)  # a fresh session per item: no widget value carried over from another item's page
        at.run()
        at.session_state["batch_id"] = summary.batch_id
        at.session_state["assignment_id"] = entry.assignment_id
        at.run()
        assert not at.exception, at.exception
        page = sent_text(at)
        assert f"Item {view.label}" in page
        for text in (page, state_text(at)):
            leak = FORBIDDEN.search(text)
            assert leak is None, (
                f"item {view.label} shows {leak.group(0)!r}: {text[leak.start() - 80 : leak.end() + 40]}"
            )
        pages[entry.assignment_id] = (page, view)
    assert len(pages) == own + 4 * per_sample and anchors <= set(pages)

    def skeleton(page: str, view: Any) -> str:
        out = page
        for o in view.outputs:
            out = out.replace(o.text, "<output>")
        out = out.replace(view.label, "<label>")
        out = re.sub(r"\$\$ID-[0-9a-f]+-", "$$ID-", out)  # element ids: hashes of the widget's key
        out = re.sub(r"session=[\w-]+", "session=<token>", out)  # each fresh sign-in's own token
        out = re.sub(r"\bi[0-9a-f]{16}(?=_|\\?\")", "<key>", out)  # the item's opaque key (widgets, key handler)
        out = re.sub(r"\d+", "<n>", out)  # queue positions, counts
        return out

    def shape(view: Any) -> dict[str, Any]:
        return {f.name: type(getattr(view, f.name)).__name__ for f in fields(view)}

    by_sample: dict[Any, dict[bool, str]] = {}
    for assignment_id, (page, view) in pages.items():
        assert re.fullmatch(r"[A-Z0-9-]+", view.label)  # one label scheme for every item
        if view.position > 1:  # the queue's first item is drawn without the widget state the others carry
            by_sample.setdefault(str(view.prompt), {})[assignment_id in anchors] = skeleton(page, view)
    compared = 0
    for kinds in by_sample.values():
        if True in kinds and False in kinds:
            assert kinds[True] == kinds[False]
            compared += 1
    assert compared >= 2
    # Nor does the order give them away: the ids the page carries (in widget keys) mix anchors with the rest.
    ordered = [a in anchors for a in sorted(pages)]
    assert ordered != sorted(ordered) and ordered != sorted(ordered, reverse=True)
    anchor_view, new_view = (next(v for a, (_, v) in pages.items() if (a in anchors) is k) for k in (True, False))
    assert shape(anchor_view) == shape(new_view)
