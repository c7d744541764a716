"""Two `serve` processes on one PostgreSQL database: nothing that matters lives in one process's memory.

Needs the PostgreSQL server of BLIND_REVIEW_TEST_POSTGRES_URL (the database fixtures fail in CI when it is
unreachable, never skip).
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy.engine import Engine

from reviewer_app.batches.loading import load_batch
from reviewer_app.people.people import add_reviewer
from reviewer_app.ratings.export import export_rows
from tests.helpers import RATING_RUBRIC, make_records, write_batch, write_rubric
from tests.support.app_server import Server
from tests.support.review_page import answer_with_mouse, next_label, settle, submit, wait_item

pytestmark = [pytest.mark.browser, pytest.mark.postgres]


def _done_metric(page: Any) -> str:
    """The lead's progress line, "<done> of <assigned> assigned item showings done ...", as "done / assigned"."""
    page.reload()
    line = page.locator('[data-testid="stProgress"]', has_text="assigned item showings done")
    line.wait_for(timeout=20_000)
    settle(page)
    found = re.search(r"(\d+) of (\d+) assigned item showings done", line.inner_text())
    assert found is not None, line.inner_text()
    return f"{found.group(1)} / {found.group(2)}"


@pytest.mark.parametrize("database", ["postgres"], indirect=True)
def test_two_servers_one_database(engine: Engine, db_url: str, chromium: Any, tmp_path: Path) -> None:
    # Pool mode (no plan) and k = 2: every item is claimed under row locks by whoever comes first.
    load_batch(
        engine,
        [write_batch(tmp_path, make_records(3, ["m-one", "m-two"]))],
        write_rubric(tmp_path, RATING_RUBRIC.format(overlap=2)),
        name="scale",
        open_now=True,
    )
    links = {name: add_reviewer(engine, name)[1] for name in ("r1", "r2", "r3", "r4")}
    lead_link = add_reviewer(engine, "boss", "lead")[1]
    servers = [Server(db_url, tmp_path / f"data{i}", tmp_path / f"serve{i}.log", wait=False) for i in (0, 1)]
    dialogs: list[str] = []
    try:
        for server in servers:
            server.wait_ready()
        context = chromium.new_context(viewport={"width": 1280, "height": 900})
        context.on("page", lambda p: p.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss())))
        lead = context.new_page()
        lead.goto(servers[1].link(lead_link))
        assert _done_metric(lead) == "0 / 0"
        where = {"r1": 0, "r2": 1, "r3": 0, "r4": 1}  # reviewers on both processes
        pages, current = {}, {}
        for name, server_no in where.items():
            page = chromium.new_context(viewport={"width": 1280, "height": 900}).new_page()
            page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
            page.goto(servers[server_no].link(links[name]))
            pages[name] = page
        for name, page in pages.items():  # the four pages load side by side
            current[name] = wait_item(page)
        seen: dict[str, list[str]] = {name: [] for name in pages}
        first = True
        while any(current.values()):
            for name, page in pages.items():
                if not current[name]:
                    continue
                seen[name].append(current[name])
                answer_with_mouse(page, [3, 0])
                submit(page)
                current[name] = next_label(page, current[name])
                if first:
                    # Saved through process 0, read through process 1.
                    assert re.fullmatch(r"1 / \d+", _done_metric(lead))
                    first = False
        assert _done_metric(lead) == "12 / 12"  # 6 items x k = 2, all through the browser
        rows = export_rows(engine, "scale")
        per_item = Counter((r["sample_id"], r["model"]) for r in rows if r["dimension"] == "correctness")
        assert len(per_item) == 6 and set(per_item.values()) == {2}  # nothing beyond k
        pairs = [(r["reviewer"], r["sample_id"], r["model"]) for r in rows if r["dimension"] == "correctness"]
        assert len(pairs) == len(set(pairs))  # nobody rated an item twice
        for name, labels in seen.items():
            assert len(labels) == len(set(labels)), f"{name} saw an item twice"
        assert not set(seen["r1"]) & set(seen["r2"])  # labels are per reviewer
        assert dialogs == []
    finally:
        for server in servers:
            server.terminate()  # both at once, then wait for each
        for server in servers:
            server.stop()
