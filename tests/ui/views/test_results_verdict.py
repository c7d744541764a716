"""The lead's results open with the verdict, and draw their details one tab at a time (issue 27, points 11-13).

Before, the page drew every scenario's charts and tables, the comments and the production monitor on every
visit, one after another (a 6,200 px wall at 1440 px, busy about 4 s on each revisit with the report cached).
"""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy.engine import Engine

from reviewer_app.reporting.verdict import verdicts
from reviewer_app.results.batch_reports import batch_report
from reviewer_app.ui.components.safe_text import markdown_literal
from tests.support.apptest import app_for, element_kinds, open_tab


@pytest.fixture
def lead_page(sqlite_engine: Engine, demo: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> tuple[Any, list[int]]:
    """The demo lead's page, run once, with the production monitor's drawing counted."""
    import reviewer_app.ui.views.production as production

    calls: list[int] = []
    real = production.render_production

    def counted(*args: Any, **kwargs: Any) -> None:
        calls.append(1)
        real(*args, **kwargs)

    monkeypatch.setattr(production, "render_production", counted)
    at = app_for(demo["demo-lead"])
    at.run(timeout=300)
    assert not at.exception, at.exception
    return at, calls


def test_the_page_opens_with_the_verdict_before_any_detail(
    sqlite_engine: Engine, lead_page: tuple[Any, list[int]]
) -> None:
    at, _calls = lead_page
    kinds = element_kinds(at)
    verdict = kinds.index("markdown:#### Verdict")
    first_tab = kinds.index("tab")
    report = batch_report(sqlite_engine, batch="demo", rounds=1000)
    lines = [k for k in kinds[verdict:first_tab] if k.startswith("markdown:**")]
    expected = verdicts(report)
    assert len(lines) == len(expected) == 4  # the composite and the demo's three scenarios
    for line, v in zip(lines, expected, strict=True):
        assert line.startswith(f"markdown:**{markdown_literal(v.where)}")
        assert markdown_literal(v.standing) in line and markdown_literal(v.sureness) in line
    assert not [k for k in kinds[:verdict] if k in ("dataframe", "vega_lite_chart", "arrow_vega_lite_chart")]


def test_only_the_open_tab_is_drawn(lead_page: tuple[Any, list[int]]) -> None:
    at, calls = lead_page
    assert [t.label for t in at.tabs][:4] == ["Composite", "code", "data", "support"]
    assert not calls  # the production monitor waits for its tab
    assert len(at.tabs[0].info) == 1 and not at.tabs[1].info  # the composite's sentence; code's tab empty
    open_tab(at, "Production")
    assert calls == [1]
    code = open_tab(at, "code")
    assert calls == [1] and code.info  # the monitor is not drawn again once another tab is open


def test_a_ranking_table_puts_model_letters_rank_and_tier_first(lead_page: tuple[Any, list[int]]) -> None:
    """What stays in view of a ranking table on a phone: its first columns (the model is pinned)."""
    at, _calls = lead_page
    tab = open_tab(at, "code")
    ranking = next(f.value for f in tab.dataframe if "letters" in f.value.columns)
    assert list(ranking.columns)[:5] == ["model", "letters", "rank", "tier", "dimension"]


def test_the_production_charts_tell_models_apart_in_their_legend(lead_page: tuple[Any, list[int]]) -> None:
    """Issue 27, point 13: the monitor's legend swatches came from the CI band (15% opacity, pale circles) in
    the theme's blues and reds; now one distinct colour per model and solid stroke swatches."""
    import json

    at, _calls = lead_page
    tab = open_tab(at, "Production")
    charts = [json.loads(c.proto.spec) for c in _charts(tab)]
    encodings = [
        layer["encoding"]["color"]
        for spec in charts
        for layer in spec.get("layer", [spec])
        if layer.get("encoding", {}).get("color", {}).get("field") == "model"
    ]
    assert len(encodings) >= 3  # the feedback band and line, the latency lines
    for colour in encodings:
        assert colour["scale"] == {"scheme": "tableau10"}
        assert colour["legend"] == {"symbolOpacity": 1, "symbolStrokeWidth": 4, "symbolType": "stroke"}


def _charts(node: Any) -> list[Any]:
    out = [node] if getattr(node, "type", None) in ("vega_lite_chart", "arrow_vega_lite_chart") else []
    for child in getattr(node, "children", {}).values():
        out += _charts(child)
    return out


def test_the_verdict_says_where_each_scenario_stands_for_anytime_looks(lead_page: tuple[Any, list[int]]) -> None:
    at, _calls = lead_page
    (line,) = [c.value for c in at.caption if c.value.startswith("**Anytime-valid**")]
    # The demo's colleagues finished their share, demo-reviewer has not: no sample has its 2 ratings yet.
    for scenario in ("code", "data", "support"):
        assert f"{scenario}: no sample is complete yet" in line
    assert line.count(":material/hourglass_top:") == 3
