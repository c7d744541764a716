"""The Admin page's "Plan a study" tab: the plan from a pilot batch and from stated components, the chart of
its power curve, and a wrong input said on the page."""

from __future__ import annotations

from sqlalchemy.engine import Engine

from reviewer_app.people.people import add_reviewer
from tests.support.apptest import app_for, element_kinds


def _plan(at, **fields: object) -> None:  # type: ignore[no-untyped-def]
    for label, value in fields.items():
        widget = next(w for w in [*at.text_input, *at.selectbox, *at.radio, *at.number_input] if w.label == label)
        widget.set_value(value)
    next(b for b in at.button if b.label == "Plan").click()
    at.run(timeout=120)


def test_a_plan_from_the_demo_pilot_and_from_stated_components(engine: Engine, demo: dict[str, str]) -> None:
    at = app_for(add_reviewer(engine, "root", "admin")[1])
    at.run()
    _plan(
        at,
        **{
            "Pilot batch (rating mode)": "demo",
            "Gap to separate (points)": 0.15,
            "Reviewers per output to compare": "1,2",
        },
    )
    assert not at.exception
    sentences = [i.value for i in at.info]
    assert len(sentences) == 3 and all("with 80% power" in s for s in sentences)
    assert any(df.value.shape[0] == 6 for df in at.dataframe)  # 3 scenarios x 2 values of k
    assert "vega_lite_chart" in element_kinds(at)  # the power curve
    stated = {
        "Variance components": "From stated variance components",
        "Stated components": "output=0.4,reviewer=0.1,residual=0.6",
        "Gap to separate (points)": 0.5,
    }
    _plan(at, **stated)
    assert not at.exception and any("all: to separate the best of 4 models" in i.value for i in at.info)
    _plan(at, **{"Stated components": "output=0.4"})
    assert any("needs reviewer, residual too" in e.value for e in at.error)
