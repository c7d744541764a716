"""The downloaded HTML reports read on a phone, in real Chromium at 390x844 (issue 27, point 13): without a
viewport meta tag a phone lays a page out 980 px wide and shrinks it, so body text was a few pixels high. Each
report (a batch's report, a comparison, a model's history, the production monitor) is rendered from the demo
and opened as a file; its body text must be drawn at 14 px or more, and the page must not scroll sideways
(wide tables scroll inside themselves)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from sqlalchemy.engine import Engine

pytestmark = pytest.mark.browser

PHONE = {"width": 390, "height": 844}

# The drawn size of body text: the CSS px size times how much the page is scaled to fit the screen.
_DRAWN_TEXT = """() => {
  const p = [...document.querySelectorAll('p:not([class]), li')].find(e => e.innerText.trim().length > 20);
  const size = parseFloat(getComputedStyle(p || document.body).fontSize);
  return {size, scale: window.visualViewport.scale, layout: document.documentElement.clientWidth,
          overflow: document.documentElement.scrollWidth - document.documentElement.clientWidth};
}"""


def _reports(engine: Engine) -> dict[str, str]:
    from reviewer_app.production.feedback import monitor
    from reviewer_app.reporting.compare import render_comparison
    from reviewer_app.reporting.formats import render as render_report
    from reviewer_app.reporting.history import render_history
    from reviewer_app.reporting.monitor import render_monitor
    from reviewer_app.results import batch_report
    from reviewer_app.versions import model_history
    from reviewer_app.versions.batch_compare import compare_batches

    return {
        "report": render_report(batch_report(engine, batch="demo", rounds=200), "html"),
        "compare": render_comparison(compare_batches(engine, "demo", "demo-v2"), "html"),
        "history": render_history(model_history(engine, "cirrus-mini", rounds=200), "html"),
        "monitor": render_monitor(monitor(engine, window="7d"), "html"),
    }


@pytest.mark.parametrize("sqlite_database", ["demo"], indirect=True)
def test_every_html_report_is_readable_on_a_phone(
    sqlite_engine: Engine, demo: dict[str, str], chromium: Any, tmp_path: Path
) -> None:
    context = chromium.new_context(viewport=PHONE, is_mobile=True, has_touch=True, device_scale_factor=3)
    for name, html in _reports(sqlite_engine).items():
        path = tmp_path / f"{name}.html"
        path.write_text(html, encoding="utf-8")
        page = context.new_page()
        page.goto(path.as_uri())
        drawn = page.evaluate(_DRAWN_TEXT)
        page.screenshot(path=str(tmp_path / f"{name}-390.png"))
        assert drawn["layout"] == PHONE["width"], f"{name}: laid out {drawn['layout']} px wide, not the phone's"
        assert drawn["size"] * drawn["scale"] >= 14, f"{name}: body text drawn at {drawn}"
        assert drawn["overflow"] <= 1, f"{name}: the page scrolls sideways by {drawn['overflow']} px"
        assert '<meta name="viewport" content="width=device-width, initial-scale=1">' in html, name
        page.close()
    context.close()
