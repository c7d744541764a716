"""The Admin page as an admin uses it: closing asks first, archiving and deleting a batch loaded by mistake,
every identity leak listed, a bare sign-in link, an Assign form that chooses nobody by itself and shows the
load first, and messages worded for the page. And what a reviewer sees when their batch goes away."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy.engine import Engine

from reviewer_app.batches.admin import batch_table
from reviewer_app.batches.loading import load_batch
from reviewer_app.people.people import add_reviewer
from reviewer_app.ui.components.safe_text import markdown_literal
from tests.helpers import RATING_RUBRIC, make_records, write_batch, write_rubric
from tests.support.apptest import app_for, sent_text

ALPACA = Path(__file__).resolve().parents[2] / "fixtures" / "alpaca_eval"


def _load(engine: Engine, folder: Path, name: str, records: list[dict[str, Any]], **kw: Any) -> None:
    load_batch(
        engine,
        [write_batch(folder / name, records)],
        write_rubric(folder / name, RATING_RUBRIC.format(overlap=1)),
        name=name,
        **{"open_now": True, **kw},
    )


@pytest.fixture
def admin(engine: Engine, tmp_path: Path) -> Any:
    """An admin's page on a database with batch 'first' (3 samples of m-one and m-two) and reviewers ann, bob."""
    _load(engine, tmp_path, "first", make_records(3, ["m-one", "m-two"]))
    link = add_reviewer(engine, "root", "admin")[1]
    for name in ("ann", "bob"):
        add_reviewer(engine, name)
    at = app_for(link)
    at.run()
    assert not at.exception
    return at


def _button(at: Any, label: str) -> Any:
    return next(b for b in at.button if b.label == label)


def _click(at: Any, label: str) -> None:
    _button(at, label).click()
    at.run()
    assert not at.exception


def _texts(at: Any, kind: str) -> list[str]:
    return [e.value for e in getattr(at, kind)]


def test_closing_a_batch_asks_first(engine: Engine, admin: Any) -> None:
    _click(admin, "Close batch")
    assert any("Close 'first'? Reviewers can no longer submit" in w for w in _texts(admin, "warning"))
    assert batch_table(engine)[0].batch.status == "open"
    _click(admin, "Cancel")
    assert not admin.warning and batch_table(engine)[0].batch.status == "open"
    _click(admin, "Close batch")
    _click(admin, "Yes, close it")
    assert "Batch 'first' is closed: it takes no new or revised ratings (it was open to every active reviewer)." in (
        _texts(admin, "success")
    )
    assert batch_table(engine)[0].batch.status == "closed"
    _click(admin, "Open batch")  # opening asks nothing
    assert batch_table(engine)[0].batch.status == "open"


def test_the_batches_table_shows_each_models_outputs(engine: Engine, admin: Any) -> None:
    table = admin.dataframe[0].value
    assert list(table.columns)[:11] == [
        "id",
        "name",
        "reviewers see",
        "mode",
        "status",
        "k",
        "samples",
        "outputs",
        "items",
        "done",
        "ratings",
    ]
    assert table["models (outputs)"].tolist() == ["m-one 3, m-two 3"]
    assert table["reviewers see"].tolist() == ["first"]  # the name itself: it names no model


def test_an_archived_batch_leaves_the_page_and_can_be_restored(engine: Engine, admin: Any, tmp_path: Path) -> None:
    _load(engine, tmp_path, "second", make_records(2, ["m-one", "m-two"], scenarios=("other",)))
    admin.run()
    admin.selectbox(key="admin_batch_pick").select("first")
    admin.run()
    _click(admin, "Archive batch")
    assert any("is archived" in s for s in _texts(admin, "success"))
    assert admin.dataframe[0].value["name"].tolist() == ["second"]
    assert admin.selectbox(key="admin_batch_pick").options == ["second"]
    assert admin.selectbox(key="admin_assign_batch").options == ["second"]
    assert admin.selectbox(key="admin_archived_pick").options == ["first"]
    _click(admin, "Restore")
    assert any("'first' is back, closed" in s for s in _texts(admin, "success"))
    assert admin.dataframe[0].value["name"].tolist() == ["first", "second"]
    assert admin.selectbox(key="admin_assign_batch").options == ["second"]  # restored closed: not assignable


def test_deleting_needs_the_batch_name_typed(engine: Engine, admin: Any) -> None:
    assert _button(admin, "Delete batch and its ratings").disabled
    box = next(t for t in admin.text_input if t.label == "Batch name to confirm")
    box.input("firs")
    admin.run()
    assert _button(admin, "Delete batch and its ratings").disabled
    box = next(t for t in admin.text_input if t.label == "Batch name to confirm")
    box.input("first")
    admin.run()
    _click(admin, "Delete batch and its ratings")
    assert any(s.startswith("Deleted batch 'first'") for s in _texts(admin, "success"))
    assert batch_table(engine) == [] and batch_table(engine, archived=True) == []
    assert "No batches yet" in sent_text(admin)


def test_every_identity_leak_is_listed(engine: Engine, admin: Any, tmp_path: Path) -> None:
    records = make_records(14, ["gpt-4", "claude-2"])
    for r in records:
        r["output"] = f"As {r['model']}, here is my answer."
    _load(engine, tmp_path, "leaky", records)
    admin.run()
    admin.selectbox(key="admin_batch_pick").select("leaky")
    admin.run()
    assert not admin.exception
    assert "Identity leaks (28)" in sent_text(admin)
    leaks = next(d.value for d in admin.dataframe if "handling" in d.value.columns)
    assert len(leaks) == 28 and set(leaks["handling"]) == {"masked"} and set(leaks["model"]) == {"gpt-4", "claude-2"}
    assert {b.label for b in admin.get("download_button")} >= {"Download as CSV", "Download as JSONL"}


def test_a_new_sign_in_link_is_shown_bare(engine: Engine, admin: Any) -> None:
    next(t for t in admin.text_input if t.label == "Name").input("new-expert")
    _click(admin, "Add and show sign-in link")
    (code,) = admin.code
    assert code.value.startswith("http") and "?token=" in code.value
    assert "`" not in code.value and code.value == code.value.strip()
    admin.selectbox(key="admin_person_pick").select("ann")
    admin.run()
    _click(admin, "New sign-in link")
    (code,) = admin.code
    assert code.value.startswith("http") and "`" not in code.value


def test_assign_chooses_nobody_by_itself_and_shows_the_load_first(engine: Engine, admin: Any) -> None:
    people = admin.multiselect(key="admin_assign_people_first")
    assert people.value == []
    assert not any(b.label.startswith("Assign to") for b in admin.button)
    people.set_value(["ann"])
    admin.run()
    preview = next(d.value for d in admin.dataframe if "new (about)" in d.value.columns)
    assert preview.to_dict("records") == [{"person": "ann", "unfinished now": 0, "new (about)": 6}]
    assert "6 free slot(s) (6 items, 1 reviewer(s) each) over 1 person: about 6 new item(s) each" in sent_text(admin)
    _click(admin, "Assign to 1 person")
    assert any(s.startswith("Assigned 6 item showings in 'first' to 1 reviewer(s)") for s in _texts(admin, "success"))
    # The next visit starts from the people chosen last time for this batch, with what they hold now.
    later = app_for(add_reviewer(engine, "root-2", "admin")[1])
    later.run()
    assert later.multiselect(key="admin_assign_people_first").value == ["ann"]
    preview = next(d.value for d in later.dataframe if "new (about)" in d.value.columns)
    assert preview.to_dict("records") == [{"person": "ann", "unfinished now": 6, "new (about)": 0}]


def test_messages_are_worded_for_the_page(engine: Engine, admin: Any) -> None:
    leaky = make_records(2, ["gpt-4", "claude-2"])
    for r in leaky:
        r["output"] = f"I am {r['model']}."
    admin.file_uploader[0].set_value(
        [("batch.jsonl", "".join(json.dumps(r) + "\n" for r in leaky).encode(), "application/octet-stream")]
    )
    admin.file_uploader[1].set_value(("rubric.toml", RATING_RUBRIC.format(overlap=1).encode(), "application/toml"))
    next(t for t in admin.text_input if t.label == "Batch name").input("leaky")
    next(s for s in admin.selectbox if s.label == "Outputs that name a model or vendor").select("fail")
    _click(admin, "Check and load")
    (error,) = _texts(admin, "error")
    assert "4 output(s) name a model or vendor" in error
    assert 'another choice under "Outputs that name a model or vendor"' in error
    bad = b'{"sample_id": "s1", "scenario": "qa", "prompt": "Q?", "model": "m"}\n'
    admin.file_uploader[0].set_value([("batch.jsonl", bad, "application/octet-stream")])
    _click(admin, "Check and load")
    shown = "\n".join(_texts(admin, "error") + [c.value for c in admin.code])
    assert "batch.jsonl:1: output: missing" in shown and "Fix these and load again." in shown
    next(t for t in admin.text_input if t.label == "Name").input("ann")
    _click(admin, "Add and show sign-in link")
    (taken,) = _texts(admin, "error")
    assert taken == "a person named 'ann' already exists; make them a new sign-in link below"
    for page in (shown, error, taken):
        assert "--" not in page and "blind-review" not in page and "command" not in page


def test_two_uploads_named_model_outputs_json_are_both_loaded(engine: Engine, admin: Any) -> None:
    admin.file_uploader[0].set_value(
        [
            ("model_outputs.json", (ALPACA / m / "model_outputs.json").read_bytes(), "application/json")
            for m in ("claude-2", "vicuna-13b")
        ]
    )
    admin.file_uploader[1].set_value(("rubric.toml", RATING_RUBRIC.format(overlap=1).encode(), "application/toml"))
    next(t for t in admin.text_input if t.label == "Batch name").input("alpaca")
    next(s for s in admin.selectbox if s.label == "Outputs that name a model or vendor").select("flag")
    _click(admin, "Check and load")
    summary = "\n".join(_texts(admin, "success") + [c.value for c in admin.code])
    assert "18 outputs from 2 model(s)" in summary
    assert "outputs per model: claude-2 9, vicuna-13b 9" in summary
    assert "'model_outputs.json' was read as 'model_outputs (2).json'" in summary
    row = next(r for r in batch_table(engine) if r.batch.name == "alpaca")
    assert row.per_model == {"claude-2": 9, "vicuna-13b": 9}


def _reviewer_on_an_item(engine: Engine, tmp_path: Path) -> Any:
    _load(engine, tmp_path, "only", make_records(3, ["m-one", "m-two"]))
    at = app_for(add_reviewer(engine, "ann")[1])
    at.run()
    assert any(m.value.startswith("Item ") for m in at.subheader)
    return at


def _answer_and_submit(at: Any) -> None:
    from tests.ui.views.test_pages import choose

    for radio in at.radio:
        choose(radio, 0)
    next(b for b in at.button if b.label in ("Submit and next", "Save changes")).click()
    at.run()
    assert not at.exception


@pytest.mark.parametrize("action", ["archive", "delete"])
def test_a_reviewer_whose_batch_goes_away_gets_a_message(engine: Engine, tmp_path: Path, action: str) -> None:
    from reviewer_app.batches.admin import archive_batch, delete_batch

    reviewer = _reviewer_on_an_item(engine, tmp_path)
    if action == "archive":
        archive_batch(engine, "only")
    else:
        delete_batch(engine, "only", confirm="only")
    _answer_and_submit(reviewer)
    page = sent_text(reviewer)
    assert "Traceback" not in page and not any(m.value.startswith("Saved item") for m in reviewer.success)
    reviewer.run()
    assert not reviewer.exception
    page = sent_text(reviewer)
    assert not any(m.value.startswith("Item ") for m in reviewer.subheader)
    assert "No batch is open for you yet" in page or "closed" in page


def test_assign_asks_for_as_many_people_as_the_overlap(engine: Engine, tmp_path: Path) -> None:
    load_batch(
        engine,
        [write_batch(tmp_path, make_records(2, ["m-one", "m-two"]))],
        write_rubric(tmp_path, RATING_RUBRIC.format(overlap=2)),
        name="pairs-of-eyes",
        open_now=True,
    )
    add_reviewer(engine, "ann")
    at = app_for(add_reviewer(engine, "root", "admin")[1])
    at.run()
    at.multiselect(key="admin_assign_people_pairs-of-eyes").set_value(["ann"])
    at.run()
    assert "Each item needs 2 different reviewers: choose at least 2 people." in _texts(at, "warning")
    assert not any(b.label.startswith("Assign to") for b in at.button)


def test_titles_reviewers_see_are_shown_set_and_refused_on_the_page(engine: Engine, admin: Any) -> None:
    records = make_records(2, ["vicuna-13b", "claude-2"], scenarios=("vicuna", "qa"))
    admin.file_uploader[0].set_value(
        [("batch.jsonl", "".join(json.dumps(r) + "\n" for r in records).encode(), "application/octet-stream")]
    )
    admin.file_uploader[1].set_value(("rubric.toml", RATING_RUBRIC.format(overlap=1).encode(), "application/toml"))
    next(t for t in admin.text_input if t.label == "Batch name").input("claude-vs-vicuna")
    _click(admin, "Check and load")
    loaded = "\n".join(_texts(admin, "success") + [c.value for c in admin.code])
    assert "the batch's name names a model or vendor (Claude, Vicuna): reviewers see it as 'Batch " in loaded
    assert "'vicuna' (Vicuna): shown as 'Scenario 2'" in loaded
    assert 'to give reviewers other titles: the Batches tab, "Titles reviewers see"' in loaded
    assert "blind-review" not in loaded and "--help" not in loaded
    admin.selectbox(key="admin_batch_pick").select("claude-vs-vicuna")
    admin.run()
    bid = next(r.batch.id for r in batch_table(engine) if r.batch.name == "claude-vs-vicuna")
    table = admin.dataframe[0].value
    assert table.loc[table["name"] == "claude-vs-vicuna", "reviewers see"].tolist() == [f"Batch {bid}"]
    titles = next(d.value for d in admin.dataframe if "why" in d.value.columns)
    assert titles[["name", "reviewers see"]].values.tolist() == [
        ["claude-vs-vicuna", f"Batch {bid}"],
        ["qa", "qa"],
        ["vicuna", "Scenario 2"],
    ]
    assert "Titles reviewers see (2 name(s) hidden: they name a model)" in [e.label for e in admin.expander]

    def fill(batch_title: str, vicuna: str) -> None:
        next(t for t in admin.text_input if t.label == "Batch title for reviewers").input(batch_title)
        next(t for t in admin.text_input if t.label == markdown_literal("Scenario 'vicuna'")).input(vicuna)
        _click(admin, "Save titles")

    fill("Claude round", "Open questions")  # names a model: refused, worded for the page, nothing saved
    (error,) = _texts(admin, "error")
    assert error.startswith(
        markdown_literal("Batch title for reviewers: the title 'Claude round' names a model or vendor (Claude)")
    )
    assert [r.title for r in batch_table(engine) if r.batch.name == "claude-vs-vicuna"] == [f"Batch {bid}"]
    fill("Round 1", "Open questions")
    assert any("Reviewers see 'claude-vs-vicuna' as 'Round 1'" in s for s in _texts(admin, "success"))
    titles = next(d.value for d in admin.dataframe if "why" in d.value.columns)
    assert titles["reviewers see"].tolist() == ["Round 1", "qa", "Open questions"]
    assert set(titles["why"]) == {"title set by an admin", "the name itself"}


def test_an_admin_chooses_a_batchs_reviewers_and_the_page_says_who_it_is_open_to(
    admin: Any, engine: Engine, tmp_path: Path
) -> None:
    """Issue 27, point 9: the Batches tab says who the batch is open to, and its reviewers are chosen there."""
    from reviewer_app.batches.audience import batch_audience

    assert "Batch 'first' is open to every active reviewer." in _texts(admin, "markdown")
    picker = next(m for m in admin.multiselect if m.label == "Reviewers of this batch")
    picker.set_value(["ann"])
    _click(admin, "Save reviewers")
    assert "Batch 'first' is open to its reviewers: ann." in _texts(admin, "success")
    assert batch_audience(engine, "first").reviewers == ("ann",)
    picker = next(m for m in admin.multiselect if m.label == "Reviewers of this batch")
    assert picker.value == ["ann"]
    picker.set_value([])
    _click(admin, "Save reviewers")
    assert batch_audience(engine, "first").everyone

    _load(engine, tmp_path, "later", make_records(2, ["m-one", "m-two"], scenarios=("other",)), open_now=False)
    admin.run()
    admin.selectbox(key="admin_batch_pick").set_value("later")
    admin.run()
    assert any("Batch 'later' is not open yet: nobody sees it until you open it (Open batch below)" in t
               for t in _texts(admin, "markdown"))  # fmt: skip
    _click(admin, "Open batch")
    assert "Batch 'later' is open to every active reviewer." in _texts(admin, "success")


def test_an_adaptive_batch_shows_its_pool_and_is_not_assigned(engine: Engine, tmp_path: Path) -> None:
    load_batch(
        engine,
        [write_batch(tmp_path / "ad", make_records(6, ["m-one", "m-two"]))],
        write_rubric(tmp_path / "ad", 'allocation = "adaptive"\n' + RATING_RUBRIC.format(overlap=1)),
        name="ad",
        open_now=True,
    )
    link = add_reviewer(engine, "root", "admin")[1]
    add_reviewer(engine, "ann")
    at = app_for(link)
    at.run()
    assert not at.exception
    pool = next(e for e in at.expander if e.label.startswith("Adaptive pool"))
    text = " ".join(m.value for m in pool.markdown)
    assert "Adaptive pool of 'ad' (20% of releases uniformly at random" in text
    _click(at, "Refresh now")
    success = " ".join(_texts(at, "success"))
    assert "Refreshed the adaptive pool of 'ad': qa in burn-in (0 complete); summaries in burn-in" in success
    pool = next(e for e in at.expander if e.label.startswith("Adaptive pool"))
    shown = " ".join(m.value for m in pool.markdown)
    assert "qa: 0 complete, 3 held back; first in line until its verdicts start" in shown
    info = " ".join(_texts(at, "info"))
    assert "ad allocates adaptively" in info and "nothing to assign" in info
    assert not any(b.label.startswith("Assign to") for b in at.button)
