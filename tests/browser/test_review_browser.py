"""The reviewer's page in real headless Chromium: sign in, score with mouse and keys, refresh and resume,
two reviewers at once, roles, and no script from an output ever running."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy.engine import Engine

from reviewer_app.batches.loading import load_batch
from reviewer_app.people.people import add_reviewer
from reviewer_app.review import reviews
from reviewer_app.review.assignment import assign
from tests.helpers import RATING_RUBRIC, write_batch, write_rubric
from tests.support.app_server import Server
from tests.support.databases import Templates
from tests.support.review_page import answer_with_keys, answer_with_mouse, groups, next_label, submit, wait_item

pytestmark = pytest.mark.browser

INJECTION = '<script>alert("pwned")</script> and <img src=x onerror="alert(1)"> end'


def _records(n: int, tag: str) -> list[dict[str, Any]]:
    out = []
    for i in range(n):
        for model in ("model-one", "model-two"):
            text = INJECTION if (i == 0 and model == "model-one") else f"Answer {i} ({tag}) written by a machine."
            out.append(
                {
                    "sample_id": f"{tag}{i}",
                    "scenario": "qa",
                    "prompt": f"{tag} question {i}?",
                    "model": model,
                    "output": text,
                }
            )
    return out


@pytest.fixture(scope="module")
def served(
    tmp_path_factory: pytest.TempPathFactory, templates: Templates
) -> Iterator[tuple[Server, Engine, dict[str, str]]]:
    from storage.engine import get_engine

    folder = tmp_path_factory.mktemp("browser")
    copy = templates.copy("sqlite", "blank", folder)
    engine = get_engine(copy.url)
    with pytest.MonkeyPatch.context() as env:  # the module's own data dir, for this test and the server alike
        env.setenv("BLIND_REVIEW_DATA_DIR", str(copy.data_dir))
        links = {}
        for name in ("alice", "bob", "carol", "dave"):
            links[name] = add_reviewer(engine, name, "reviewer")[1]
        load_batch(
            engine,
            [write_batch(folder / "planned", _records(4, "p"))],
            write_rubric(folder / "planned", RATING_RUBRIC.format(overlap=2)),
            name="planned",
            open_now=True,
        )
        assign(engine, "planned", ["alice", "bob"])
        server = Server(copy.url, copy.data_dir, folder / "serve.log")
        yield server, engine, links
        server.stop()
        engine.dispose()


@pytest.fixture
def dialogs() -> list[str]:
    return []


def _page(chromium: Any, dialogs: list[str]) -> Any:
    context = chromium.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    return page


VALUES = {0: "1", 1: "2", 2: "3", 3: "4", 4: "5"}


def _stored(picks: list[int]) -> dict[str, str]:
    return {"correctness": VALUES[picks[0]], "follows_format": "1" if picks[1] == 0 else "0"}


def test_sign_in_score_with_mouse_and_keys_refresh_and_resume(served: Any, chromium: Any, dialogs: list[str]) -> None:
    server, engine, links = served
    page = _page(chromium, dialogs)
    page.goto(server.link(links["alice"]))
    label = wait_item(page)
    expected: dict[str, dict[str, str]] = {}
    saw_injection = False
    plan = [("mouse", [3, 0]), ("keys", [1, 1]), ("refresh", []), ("arrows", [4, 0]), ("mouse", [0, 1])]
    for how, picks in plan:
        html = page.content()  # the page's HTML, iframes' srcdoc included
        assert "model-one" not in html and "model-two" not in html and "batch.jsonl" not in html
        body = page.inner_text("body")
        if 'alert("pwned")' in body:
            saw_injection = True
            assert '<script>alert("pwned")</script>' in body and '<img src=x onerror="alert(1)">' in body
        if how == "refresh":
            page.reload()
            assert wait_item(page) == label  # resumes exactly where it was
            continue
        if how == "mouse":
            answer_with_mouse(page, picks)
            submit(page)
        elif how == "arrows":  # second question first (J), then back up to the first one (K)
            page.locator("h3", has_text="Item").first.click()
            for key in ("j", str(picks[1] + 1), "k", str(picks[0] + 1), "Enter"):
                page.keyboard.press(key)
        else:
            answer_with_keys(page, picks)
        expected[label] = _stored(picks)
        new = next_label(page, label)
        assert page.get_by_text(f"Saved item {label}.").is_visible()
        label = new
    # Typing in the comment box neither answers (digits) nor submits (Enter).
    comment = page.get_by_label("Comment (optional)")
    comment.click()
    comment.type("3 looks fine\n2")
    page.wait_for_timeout(500)
    assert wait_item(page) == label
    assert groups(page).nth(0).locator("input:checked").count() == 0
    # Walk the rest so the injection output is certainly rendered once.
    while label and not saw_injection:
        body = page.inner_text("body")
        if 'alert("pwned")' in body:
            saw_injection = True
            assert '<script>alert("pwned")</script>' in body
            break
        answer_with_mouse(page, [2, 0])
        submit(page)
        expected[label] = _stored([2, 0])
        label = next_label(page, label)
    assert saw_injection
    page.wait_for_timeout(500)
    assert dialogs == [], f"a script from an output ran: {dialogs}"
    assert (
        page.evaluate(
            '() => document.querySelectorAll(\'[data-testid="stMarkdown"] script, '
            '[data-testid="stMarkdown"] img[onerror]\').length'
        )
        == 0
    )
    # The database holds exactly the answers given in the browser.
    person_id = next(p.id for p in _people(engine) if p.name == "alice")
    batch = next(b for b in reviews.batches_for(engine, person_id) if b.name == "planned")
    stored = {}
    for entry in reviews.queue(engine, batch.batch_id, person_id):
        view = reviews.item_view(engine, person_id, entry.assignment_id)
        if view.answers:
            stored[entry.label] = view.answers
    assert stored == expected
    page.context.close()


def _people(engine: Engine) -> list[Any]:
    from reviewer_app.people.people import list_people

    return list_people(engine)


def test_two_reviewers_at_once_get_disjoint_labels_and_no_item_twice(
    served: Any, chromium: Any, dialogs: list[str], tmp_path: Path
) -> None:
    server, engine, links = served
    # Pool mode (no plan), k = 1: the two reviewers compete for the same six items.
    load_batch(
        engine,
        [write_batch(tmp_path, _records(3, "q"))],
        write_rubric(tmp_path, RATING_RUBRIC.format(overlap=1)),
        name="pool",
        open_now=True,
    )
    pages = {name: _page(chromium, dialogs) for name in ("carol", "dave")}
    labels: dict[str, list[str]] = {name: [] for name in pages}
    current = {}
    for name, page in pages.items():
        page.goto(server.link(links[name]))  # the page opens the batch with work for them: the pool
    for name, page in pages.items():
        current[name] = wait_item(page)
    while any(current.values()):
        for name, page in pages.items():
            if not current[name]:
                continue
            labels[name].append(current[name])
            answer_with_mouse(page, [4, 0])
            submit(page)
            current[name] = next_label(page, current[name])
    assert not set(labels["carol"]) & set(labels["dave"])
    for name in pages:
        assert len(labels[name]) == len(set(labels[name]))
    assert len(labels["carol"]) + len(labels["dave"]) == 6  # every item once, none twice (k = 1)
    assert dialogs == []
    for page in pages.values():
        page.context.close()


def test_a_reviewer_cannot_reach_the_admin_or_lead_page(served: Any, chromium: Any, dialogs: list[str]) -> None:
    server, _engine, links = served
    page = _page(chromium, dialogs)
    token = links["bob"].split("token=")[-1]
    for path in ("admin", "progress"):
        page.goto(f"{server.url}/{path}?token={token}")
        wait_item(page)
        body = page.inner_text("body")
        assert "Load a batch" not in body and "Add a person" not in body and "By reviewer" not in body
        assert "Admin" not in page.inner_text('[data-testid="stSidebar"]')
    page.goto(f"{server.url}/?token=wrong")
    page.get_by_text("This sign-in link is not valid").wait_for()
    assert "Item " not in page.inner_text("body")
    page.context.close()
