"""The Production view (``views.production.render_production``) through AppTest, on SQLite and PostgreSQL: the
flagged change said first, the charts, the downloads, the window and canary pickers; only the models asked
for; nothing to show said in one line."""

from __future__ import annotations

import json
from pathlib import Path

from sqlalchemy.engine import Engine
from streamlit.testing.v1 import AppTest

from reviewer_app.production.feedback import import_feedback
from tests.support.apptest import element_kinds, sent_text

MONDAY = 1_772_409_600_000
DAY_MS = 86_400_000


def _page(models: list[str] | None) -> None:
    from reviewer_app.settings import database_url
    from reviewer_app.ui.views.production import render_production
    from storage.engine import get_engine

    render_production(get_engine(database_url()), models)


def _events(path: Path) -> Path:
    """``cur``: 0.8 for 7 days then 0.5; ``new``: 0.8 over the last 7 days; ``other``: one event."""
    lines = []
    for d in range(14):
        for i in range(200):
            ts = MONDAY + d * DAY_MS + i * 1000
            lines.append({"model": "cur", "timestamp": ts, "feedback": 1 if i < (160 if d < 7 else 100) else -1,
                          "latency_ms": 300 + i})  # fmt: skip
            if d >= 7:
                lines.append({"model": "new", "timestamp": ts, "feedback": 1 if i < 160 else -1, "latency_ms": 200 + i})
    lines.append({"model": "other", "timestamp": MONDAY, "feedback": 1})
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    return path


def test_the_monitor_with_the_change_first(engine: Engine, tmp_path: Path) -> None:
    import_feedback(engine, _events(tmp_path / "f.jsonl"))
    at = AppTest.from_function(_page, args=(["cur", "new"],), default_timeout=120)
    at.run()
    assert not at.exception and not at.error
    assert at.warning and "2 model(s)" in at.warning[0].value and "significant change(s)" in at.warning[0].value
    said = [m.value for m in at.markdown]
    assert any("cur: feedback fell from 80.0% to 50.0% in the window from 2026-03-09" in s for s in said)
    kinds = element_kinds(at)
    assert kinds.count("vega_lite_chart") == 2  # feedback with its band, latency p50/p95
    assert kinds.count("download_button") == 4
    page = sent_text(at)
    assert "other" not in at.selectbox(key="production_canary").options
    for fmt in ("JSON", "CSV", "MD", "HTML"):
        assert f"Download {fmt}" in page
    flagged = at.dataframe[0].value
    assert list(flagged["model"]) == ["cur"] and list(flagged["after (window)"]) == ["2026-03-09"]

    at.selectbox(key="production_canary").set_value("new")
    at.selectbox(key="production_current").set_value("cur")
    at.run()
    assert not at.exception
    flagged = at.dataframe[0].value
    assert set(flagged["kind"]) == {"window", "canary"}
    assert ("canary", "new", "cur", "overall") in set(
        zip(flagged["kind"], flagged["model"], flagged["against"], flagged["after (window)"], strict=True)
    )
    at.radio(key="production_window").set_value("7d")
    at.run()
    assert not at.exception
    assert "in 7d windows" in (at.warning or at.info)[0].value


def test_no_feedback_is_one_line(engine: Engine, tmp_path: Path) -> None:
    at = AppTest.from_function(_page, args=(None,), default_timeout=120)
    at.run()
    assert not at.exception
    assert at.info and "No production feedback for these models yet" in at.info[0].value
    import_feedback(engine, _events(tmp_path / "f.jsonl"))
    only_other = AppTest.from_function(_page, args=(["ghost"],), default_timeout=120)
    only_other.run()
    assert only_other.info and "No production feedback" in only_other.info[0].value
