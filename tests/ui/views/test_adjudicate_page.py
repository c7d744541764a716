"""The Adjudicate page through AppTest, on SQLite and PostgreSQL, with the demo's panel: a lead works through the
demo pairwise batch's disagreements blind (no model, reviewer, sample or file name in anything sent or kept),
a ruling needs a reason, a saved one moves on; the sidebar offers the page to leads and to the reviewers a
rubric names, and to nobody else."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy.engine import Engine
from streamlit.testing.v1 import AppTest

from reviewer_app.batches.loading import load_batch
from reviewer_app.demo.seed import HERE
from reviewer_app.people.people import get_person
from tests.support.apptest import app_for, sent_text, state_text

MODELS = ("aurora-7b", "borealis-xl", "cirrus-mini", "dynamo-2")
NAMES = (*MODELS, "demo-colleague-1", "demo-colleague-2", "demo-reviewer", "support-02", "demo_pairwise.jsonl")


def _page(name: str) -> None:
    from reviewer_app.people.people import get_person
    from reviewer_app.settings import database_url
    from reviewer_app.ui.views import adjudicate
    from storage.engine import get_engine

    engine = get_engine(database_url())
    adjudicate.render(engine, get_person(engine, name))


def _blind(at: AppTest) -> None:
    seen = sent_text(at) + state_text(at)
    for name in NAMES:
        assert name not in seen, name


def test_a_lead_rules_blind_and_moves_on(engine: Engine, demo: dict[str, str]) -> None:
    at = AppTest.from_function(_page, args=("demo-lead",), default_timeout=120)
    at.run()
    assert not at.exception
    pairwise = next(b for b in at.selectbox(key="adjudicate_batch").options if "pairwise" in b)
    at.selectbox(key="adjudicate_batch").select(pairwise)
    at.run()
    assert not at.exception
    assert "0 of 6 ruled, 6 open" in sent_text(at)
    assert "Disagreement 1 of 6" in sent_text(at) and "Reviewer 2" in sent_text(at)
    _blind(at)
    # No reason: said, nothing saved.
    at.radio[0].set_value("left")
    at.button(key="FormSubmitter:adjudicate_form_" + at.session_state["adjudicate_case"] + "-Record ruling").click()
    at.run()
    assert [e.value for e in at.error] == [
        "Write the reason for your ruling: the lead reads it beside the item in the report."
    ]
    assert "0 of 6 ruled" in sent_text(at)
    at.text_area[0].input("Answer A names the refund window; B does not.")
    at.button(key="FormSubmitter:adjudicate_form_" + at.session_state["adjudicate_case"] + "-Record ruling").click()
    at.run()
    assert not at.exception and not at.error
    assert [e.value for e in at.success][0] == "Ruling saved. Here is the next open disagreement."
    assert "1 of 6 ruled, 5 open" in sent_text(at)
    _blind(at)
    # Next and Previous walk the queue; the ruled one says who ruled.
    at.button(key="adjudicate_next").click().run()
    assert "Disagreement 2 of 6" in sent_text(at)
    at.button(key="adjudicate_prev").click().run()
    assert "Disagreement 1 of 6" in sent_text(at)


def test_the_sidebar_offers_the_page_to_leads_and_named_reviewers_only(
    engine: Engine, demo: dict[str, str], tmp_path: Path
) -> None:
    for who, shown in (("demo-lead", True), ("demo-reviewer", False)):
        at = app_for(demo[who])
        at.run()
        assert not at.exception
        assert ("Adjudicate" in sent_text(at.sidebar)) is shown, who
    # A batch whose rubric names demo-reviewer an adjudicator: now the page is theirs, for that batch only.
    rubric = (HERE / "rubric.toml").read_text(encoding="utf-8") + '\n[adjudication]\nadjudicators = ["demo-reviewer"]\n'
    (tmp_path / "rubric.toml").write_text(rubric, encoding="utf-8")
    load_batch(engine, [HERE / "demo.jsonl"], tmp_path / "rubric.toml", name="senior-round", on_leak="flag")
    at = app_for(demo["demo-reviewer"])
    at.run()
    assert "Adjudicate" in sent_text(at.sidebar)
    at = AppTest.from_function(_page, args=("demo-reviewer",), default_timeout=120)
    at.run()
    assert not at.exception
    assert at.selectbox(key="adjudicate_batch").options == ["senior-round"]
    assert get_person(engine, "demo-reviewer").role == "reviewer"


def _results(batch_id: int) -> None:
    from reviewer_app.settings import database_url
    from reviewer_app.ui.views.results import render_results
    from storage.engine import get_engine

    render_results(get_engine(database_url()), batch_id)


def test_the_lead_page_ranks_with_rulings_when_switched_on(engine: Engine, demo: dict[str, str]) -> None:
    from reviewer_app.adjudication import queue, rule
    from reviewer_app.batches.catalog import find_batch

    lead = get_person(engine, "demo-lead")
    batch_id = find_batch(engine, "demo-pairwise").id
    assert batch_id is not None
    q = queue(engine, lead, batch_id)
    rule(engine, lead, batch_id, q.tokens[0], "both_bad", "Neither gives the 30-day window.")
    at = AppTest.from_function(_results, args=(batch_id,), default_timeout=180)
    at.run()
    assert not at.exception
    page = sent_text(at)
    assert "1 ruled, 5 still open" in page
    assert "The rankings use" not in page
    at.toggle(key=f"adjudicated-{batch_id}").set_value(True).run()
    assert not at.exception
    warnings = [w.value for w in at.warning]
    assert any(
        "The rankings use the 1 ruling in place of the panel's answers on those items." in w for w in warnings
    ), warnings


CONTINUOUS_RUBRIC = """
mode = "rating"
overlap = 2
seed = 3
[[dimensions]]
name = "mqm"
description = "Error points (MQM)"
scale = "continuous"
min = 0.0
max = 100.0
higher_is_better = false
"""


def test_a_continuous_question_is_ruled_by_typing_the_number(engine: Engine, tmp_path: Path) -> None:
    """A continuous scale's answers cannot be listed: the ruling is typed, and checked against the scale."""
    from reviewer_app.adjudication import queue
    from reviewer_app.batches.catalog import find_batch
    from reviewer_app.people.people import add_reviewer
    from reviewer_app.ratings.files import import_ratings
    from tests.helpers import make_records, write_batch, write_rubric

    batch = write_batch(tmp_path, make_records(2, ["mx", "my"], scenarios=("qa",)))
    load_batch(engine, [batch], write_rubric(tmp_path, CONTINUOUS_RUBRIC), name="mqm-round", on_leak="flag")
    rows = "reviewer,sample_id,model,dimension,score\nana,s0,mx,mqm,0\nben,s0,mx,mqm,80\n"
    (tmp_path / "r.csv").write_text(rows, encoding="utf-8")
    import_ratings(engine, "mqm-round", tmp_path / "r.csv")
    add_reviewer(engine, "lena", "lead")
    at = AppTest.from_function(_page, args=("lena",), default_timeout=120)
    at.run()
    assert not at.exception and "Disagreement 1 of 1" in sent_text(at)
    box = at.text_input[0]
    assert box.label == "Your ruling (a number from 0 to 100)"
    box.input("250")
    at.text_area[0].input("Two minor errors, not eighty points.")
    token = at.session_state["adjudicate_case"]
    at.button(key=f"FormSubmitter:adjudicate_form_{token}-Record ruling").click().run()
    assert [e.value for e in at.error] and "not an answer" in at.error[0].value
    at.text_input[0].input("10")
    at.button(key=f"FormSubmitter:adjudicate_form_{token}-Record ruling").click().run()
    assert not at.error and at.success[0].value == "Ruling saved. Every disagreement in this batch is ruled."
    lead = get_person(engine, "lena")
    batch_id = find_batch(engine, "mqm-round").id
    assert batch_id is not None and queue(engine, lead, batch_id).ruled == 1
