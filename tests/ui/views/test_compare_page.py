"""The lead's "Compare versions" page through AppTest, on SQLite and PostgreSQL: a lead picks the batches and
reads the verdicts first, then the charts, then drift, with a download per format; a bad --match is said
in the page's own words; only leads get the page."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy.engine import Engine
from streamlit.testing.v1 import AppTest

from reviewer_app.batches.loading import load_batch
from reviewer_app.people.people import add_reviewer
from tests.helpers import write_batch
from tests.support.apptest import app_for, element_kinds, sent_text
from tests.support.compare_chain import chain, load, records


def _page(person_id: int) -> None:
    from reviewer_app.domain.enums import Role
    from reviewer_app.domain.views import Person
    from reviewer_app.settings import database_url
    from reviewer_app.ui.views import compare
    from storage.engine import get_engine

    compare.render(get_engine(database_url()), Person(person_id, "lena", Role.LEAD))


def _lead_page(engine: Engine) -> AppTest:
    person_id = add_reviewer(engine, "lena", "lead")[0].id
    at = AppTest.from_function(_page, args=(person_id,), default_timeout=120)
    at.run()
    assert not at.exception
    return at


def test_lead_compares_two_batches_and_reads_verdicts_charts_drift(engine: Engine, tmp_path: Path) -> None:
    chain(engine, tmp_path)
    at = _lead_page(engine)
    at.selectbox(key="compare_baseline").set_value("v1")
    at.selectbox(key="compare_candidate").set_value("v2")
    at.text_area(key="compare_match").input("m1=m1-v2")
    at.button[0].click()  # the form's submit
    at.run()
    assert not at.exception and not at.error
    kinds = element_kinds(at)
    verdicts = kinds.index("markdown:##### Verdicts")
    drift = kinds.index("markdown:##### Behaviour drift")
    charts = [i for i, k in enumerate(kinds) if k == "vega_lite_chart"]
    tables = [i for i, k in enumerate(kinds) if k == "dataframe"]
    assert verdicts < tables[0] < charts[0] <= charts[-1] < drift < tables[-1]
    assert len(charts) == 2  # correctness and overall
    page = sent_text(at)
    assert "regression" in page and "m1-v2" in page
    assert "No anchors: a change of the panel cannot be measured" in page
    assert "m3" in page  # unpaired, said in a note
    downloads = [k for k in kinds if k == "download_button"]
    assert len(downloads) == 4
    for fmt in ("JSON", "CSV", "MD", "HTML"):
        assert f"Download {fmt}" in page


def test_a_bad_match_is_said_with_the_fields_label(engine: Engine, tmp_path: Path) -> None:
    chain(engine, tmp_path, rate_candidate=False)
    at = _lead_page(engine)
    at.selectbox(key="compare_baseline").set_value("v1")
    at.selectbox(key="compare_candidate").set_value("v2")
    at.text_area(key="compare_match").input("m9=m1-v2")
    at.button[0].click()
    at.run()
    assert not at.exception
    errors = [e.value for e in at.error]
    assert errors and "Renamed versions (one OLD=NEW a line): 'm9' is not a model of baseline batch" in errors[0]
    assert "compare_result" not in at.session_state


def test_only_leads_get_the_page(engine: Engine, tmp_path: Path) -> None:
    chain(engine, tmp_path, rate_candidate=False)
    lead = app_for(add_reviewer(engine, "lena", "lead")[1])
    lead.run(timeout=120)
    assert "Compare versions" in sent_text(lead.sidebar)
    reviewer = app_for(add_reviewer(engine, "rita", "reviewer")[1])
    reviewer.run(timeout=120)
    assert not reviewer.exception
    assert "Compare versions" not in sent_text(reviewer.sidebar)


def test_a_follow_up_is_offered_against_its_own_baseline(engine: Engine, tmp_path: Path) -> None:
    load(engine, tmp_path, "unrelated", records({"z": "z"}, prefix="x"))
    load(engine, tmp_path, "v1", records({"m1": "m1"}))
    follow_up = write_batch(tmp_path / "v2", records({"m1": "m1"}, refuse=frozenset({("qa", "m1")})))
    load_batch(engine, [follow_up], None, name="v2", follow_up="v1", on_leak="flag", open_now=True)
    at = _lead_page(engine)
    assert at.selectbox(key="compare_baseline").value == "v1"
    assert at.selectbox(key="compare_candidate").value == "v2"


def test_the_difference_chart_fits_a_phone(engine: Engine, tmp_path: Path) -> None:
    """A phone is 390 px wide: the verdict legend goes below the chart (beside it, it took a third of the
    width) and each row's label is two lines, scenario then models, so "support · cirrus-mini vs cirrus-large"
    is not cut; rows are tall enough for two lines with every label drawn."""
    import json

    from reviewer_app.ui.views.compare import _diff_chart
    from reviewer_app.versions.batch_compare import compare_batches

    chain(engine, tmp_path)
    result = compare_batches(engine, "v1", "v2", match=["m1=m1-v2"])
    rows = [r for r in result.comparison.rows if r.dimension == "correctness"]
    spec = json.loads(_diff_chart(rows, "correctness").to_json())
    assert spec["height"] == {"step": 34}
    encodings = [layer.get("encoding", {}) for layer in spec["layer"]]
    legends = [e["color"]["legend"] for e in encodings if "color" in e]
    assert legends and all(legend["orient"] == "bottom" for legend in legends)
    axes = [e["y"]["axis"] for e in encodings if "y" in e]
    assert axes and all("split(datum.label, ' · ')" in a["labelExpr"] and a["labelOverlap"] is False for a in axes)
    labels = [r for e in encodings if "y" in e for r in e["y"]["sort"]]
    assert "qa · m1-v2 vs m1" in labels  # a renamed pair's label: scenario, then the models
