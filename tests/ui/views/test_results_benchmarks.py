"""The results page with public benchmark scores pasted: per scenario tab and in "All scenarios", the
sentences first, then rho, the chart of benchmark score against blind score (with CI bars), the orders side by
side; bad scores are an error naming the line, and the rest of the page still shows."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from sqlalchemy.engine import Engine

from reviewer_app.people.people import add_reviewer
from tests.support.apptest import app_for
from tests.support.report_panels import MODELS, build_panel_db
from tests.ui.views.test_results_page import _results, _split_by_tab, _text

LABEL = "Public benchmark scores (CSV: model,benchmark,score)"
TITLE = "**Public benchmarks beside the blind ranking**"
# The panel ranks dune > cedar > birch > aurora; the benchmark says the opposite.
SCORES = "model,benchmark,score\n" + "".join(f"{m},MMLU,{90 - 10 * i}\n" for i, m in enumerate(MODELS))


def _page(engine: Engine, tmp_path: Path) -> Any:
    build_panel_db(engine, tmp_path / "panel", mode="rating", n_samples=12, seed=3, name="panel")
    at = app_for(add_reviewer(engine, "lena", "lead")[1])
    at.run(timeout=300)
    assert not at.exception
    return at


def _scores_box(at: Any) -> Any:
    return next(u for u in at.text_area if u.label == LABEL)


def test_each_tab_shows_the_benchmark_beside_the_ranking(engine: Engine, tmp_path: Path) -> None:
    at = _page(engine, tmp_path)
    assert TITLE not in [_text(e) for _, e in _results(at)]  # nothing before scores are pasted
    _scores_box(at).input(SCORES)
    at.run(timeout=300)
    assert not at.exception
    tabs = _split_by_tab(_results(at))[1:]  # after the composite's tab
    labels = ["extraction", "summary", "support", "all scenarios"]
    for tab, where in zip(tabs[:4], labels, strict=True):
        kinds = [kind for kind, _ in tab]
        texts = [_text(e) for _, e in tab]
        start = texts.index(TITLE)
        section = tab[start:]
        reversed_lines = [_text(e) for kind, e in section if kind == "warning"]
        assert reversed_lines and all(line.endswith("reversed (significant).") for line in reversed_lines)
        scope = "across all scenarios" if where == "all scenarios" else f"on {where}"
        assert all(scope in line for line in reversed_lines)
        # The sentences first, then rho, then the chart and the table side by side.
        order = [kind for kind, _ in section]
        first_chart = order.index("vega_lite_chart")
        assert order.index("warning") < first_chart
        rho = next(_text(e) for kind, e in section if kind == "caption" and "Spearman's rho" in _text(e))
        assert rho.startswith(f"MMLU against the blind overall score {scope}: Spearman's rho -")
        spec = json.loads(section[first_chart][1].proto.spec)
        fields = {layer["encoding"]["x"]["field"] for layer in spec["layer"]}
        assert fields == {"benchmark_score"}
        bars = next(layer for layer in spec["layer"] if layer["mark"]["type"] == "rule")
        assert bars["encoding"]["y"]["field"] == "blind_ci_low" and bars["encoding"]["y2"]["field"] == "blind_ci_high"
        table = next(e.value for kind, e in section if kind == "dataframe")
        assert list(table.columns)[:4] == ["model", "benchmark rank", "benchmark score", "blind rank"]
        # The blind order's first (dune, or cedar where 12 samples put it ahead) is in the benchmark's bottom half.
        assert list(table["model"])[0] in ("dune", "cedar") and list(table["benchmark rank"])[0] >= 3
        assert "dataframe" in kinds
    # The downloads carry the section too.
    assert any(b.label == "Download JSON" for b in at.get("download_button"))


def test_a_bad_file_is_an_error_with_its_line_and_the_page_stays(engine: Engine, tmp_path: Path) -> None:
    at = _page(engine, tmp_path)
    _scores_box(at).input("model,benchmark,score\naurora,MMLU,high\n")
    at.run(timeout=300)
    assert not at.exception
    errors = [e.value.replace("\u2060", "") for e in at.error]  # markdown_literal's word joiners
    assert len(errors) == 1 and errors[0].startswith("The benchmark scores are not used (fix them above): ")
    assert "the pasted scores:2: score: 'high' is not a number" in errors[0]
    texts = [_text(e) for _, e in _results(at)]  # the results, without the section
    assert texts[0].startswith("Results:") and TITLE not in texts and not any("Spearman's rho" in t for t in texts)
