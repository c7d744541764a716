"""The lead's pages read first what matters (issue 27, point 13), through AppTest on SQLite and PostgreSQL:
"Compare versions" opens on a valid pair (the newest follow-up and its baseline, even when an unrelated batch
was loaded after it) and shows the regressions before the other verdicts; no lead table draws a missing value
as the word "None"."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy.engine import Engine
from streamlit.testing.v1 import AppTest

from reviewer_app.batches.loading import load_batch
from reviewer_app.people.people import add_reviewer
from reviewer_app.ui.components.tables import MISSING
from tests.helpers import write_batch
from tests.support.apptest import app_for, element_kinds
from tests.support.compare_chain import chain, load, records


def _page(person_id: int) -> None:
    from reviewer_app.domain.enums import Role
    from reviewer_app.domain.views import Person
    from reviewer_app.settings import database_url
    from reviewer_app.ui.views import compare
    from storage.engine import get_engine

    compare.render(get_engine(database_url()), Person(person_id, "lena", Role.LEAD))


def _lead_page(engine: Engine) -> AppTest:
    at = AppTest.from_function(_page, args=(add_reviewer(engine, "lena", "lead")[0].id,), default_timeout=120)
    at.run()
    assert not at.exception
    return at


def test_compare_opens_on_the_newest_follow_up_even_with_a_later_batch(engine: Engine, tmp_path: Path) -> None:
    load(engine, tmp_path, "v1", records({"m1": "m1"}))
    follow_up = write_batch(tmp_path / "v2", records({"m1": "m1"}))
    load_batch(engine, [follow_up], None, name="v2", follow_up="v1", on_leak="flag")
    load(engine, tmp_path, "other-project", records({"z": "z"}, prefix="x"))  # loaded last, follows up nothing
    at = _lead_page(engine)
    assert (at.selectbox(key="compare_baseline").value, at.selectbox(key="compare_candidate").value) == ("v1", "v2")


def test_compare_shows_the_regressions_before_every_other_verdict(engine: Engine, tmp_path: Path) -> None:
    chain(engine, tmp_path)
    at = _lead_page(engine)
    at.selectbox(key="compare_baseline").set_value("v1")
    at.selectbox(key="compare_candidate").set_value("v2")
    at.text_area(key="compare_match").input("m1=m1-v2")
    at.button[0].click()
    at.run()
    assert not at.exception and not at.error
    kinds = element_kinds(at)
    first = kinds.index("markdown:##### Verdicts")
    tables = [i for i, k in enumerate(kinds) if k == "dataframe" and i > first]
    regressions, every = at.dataframe[0].value, at.dataframe[1].value
    assert any(w.value.startswith(f"**{len(regressions)} regression") for w in at.warning)
    assert 0 < len(regressions) < len(every) and "verdict" not in regressions.columns
    verdicts = list(every["verdict"])
    assert verdicts[: len(regressions)] == ["regression"] * len(regressions)  # regressions first
    assert "regression" not in verdicts[len(regressions) :]
    assert tables[0] < tables[1]


def test_the_progress_tables_draw_no_none(engine: Engine, demo: dict[str, str]) -> None:
    """The demo's progress page: demo-reviewer has no timed answer, so its median seconds per item is missing.
    (The results on the same page are the results page's own tables.)"""
    at = app_for(demo["demo-lead"])
    at.run(timeout=120)
    assert not at.exception
    tables = [t for t in at.dataframe if "median s/item" in t.value.columns]  # by scenario, by reviewer
    assert tables[1].value["median s/item"].isna().any()
    for table in tables:
        assert table.proto.placeholder == MISSING  # a missing cell is drawn as a dash, not "None"
    assert tables[1].value["median s/item"].dtype == float  # still numbers: the column sorts as numbers
