"""The lead's "Model history" page through AppTest, on SQLite and PostgreSQL: a lead picks a model and its
earlier name and reads the headline (the regression first), the chart, the tables and a download per format;
errors are said in one line; only leads get the page, and a reviewer cannot reach it."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy.engine import Engine
from streamlit.testing.v1 import AppTest

from reviewer_app.people.people import add_reviewer
from tests.support.apptest import app_for, element_kinds, sent_text
from tests.support.history_chain import history_chain


def _page(person_id: int, role: str) -> None:
    from reviewer_app.domain.enums import Role
    from reviewer_app.domain.views import Person
    from reviewer_app.settings import database_url
    from reviewer_app.ui.views import history
    from storage.engine import get_engine

    history.render(get_engine(database_url()), Person(person_id, "lena", Role(role)))


def test_lead_reads_the_history_with_the_regression_marked(engine: Engine, tmp_path: Path) -> None:
    history_chain(engine, tmp_path)
    person_id = add_reviewer(engine, "lena", "lead")[0].id
    at = AppTest.from_function(_page, args=(person_id, "lead"), default_timeout=120)
    at.run()
    assert not at.exception
    assert at.selectbox(key="history_model").options == ["m1", "m1b", "m2"]
    at.selectbox(key="history_model").set_value("m1b")
    at.multiselect(key="history_also").set_value(["m1"])
    at.button[0].click()  # the form's submit
    at.run()
    assert not at.exception and not at.error
    assert at.warning and "2 regression(s): qa (correctness) in r3; qa (overall) in r3" in at.warning[0].value
    kinds = element_kinds(at)
    assert kinds.count("vega_lite_chart") == 1 and kinds.count("dataframe") == 2
    assert kinds.count("download_button") == 4
    assert at.selectbox(key="history_dimension").value == "overall"
    table = at.dataframe[1].value
    marked = table[table["verdict"] == "regression"]
    assert sorted(zip(marked["batch"], marked["scenario"], marked["dimension"], strict=True)) == [
        ("r3", "qa", "correctness"),
        ("r3", "qa", "overall"),
    ]
    page = sent_text(at)
    assert "#c1121f" in page  # the chart's ring layer, in the regression colour
    for fmt in ("JSON", "CSV", "MD", "HTML"):
        assert f"Download {fmt}" in page
    at.selectbox(key="history_dimension").set_value("correctness")
    at.run()
    assert not at.exception


def test_a_model_without_ratings_is_said_in_one_line(engine: Engine, tmp_path: Path) -> None:
    history_chain(engine, tmp_path, rate=False)
    person_id = add_reviewer(engine, "lena", "lead")[0].id
    at = AppTest.from_function(_page, args=(person_id, "lead"), default_timeout=120)
    at.run()
    at.selectbox(key="history_model").set_value("m2")
    at.button[0].click()
    at.run()
    assert not at.exception
    assert [e.value for e in at.error] and "has no ratings yet in any batch; its batches: r1 (m2)" in at.error[0].value
    assert "history_result" not in at.session_state


def test_only_leads_get_the_page(engine: Engine, tmp_path: Path) -> None:
    history_chain(engine, tmp_path, rate=False)
    lead = app_for(add_reviewer(engine, "lena", "lead")[1])
    lead.run(timeout=120)
    assert "Model history" in sent_text(lead.sidebar)
    rita, link = add_reviewer(engine, "rita", "reviewer")
    reviewer = app_for(link)
    reviewer.run(timeout=120)
    assert not reviewer.exception
    assert "Model history" not in sent_text(reviewer.sidebar)
    # Called directly (a page URL typed in), the page itself refuses a reviewer before it reads anything.
    direct = AppTest.from_function(_page, args=(rita.id, "reviewer"), default_timeout=120)
    direct.run()
    assert direct.exception or direct.error
    assert "m1b" not in sent_text(direct)
