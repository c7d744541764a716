"""Public benchmark scores beside the blind ranking, on the lead's results page: pasted in the sidebar, the
report computed with them (once per upload), and each benchmark's section under a ranking.

The scores are read and checked by ``results.benchmark_scores`` (as ``blind-review report --benchmarks``
reads its file); the section's sentences and rho are ``reporting.benchmarks``'. Layout only.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import pandas as pd
import streamlit as st

from reviewer_app.domain.benchmarks import DEFAULT_MARGIN, BenchmarkScores, BenchmarkSection
from reviewer_app.domain.report import Report, records
from reviewer_app.errors import ValidationError
from reviewer_app.reporting.benchmarks import TITLE as BENCHMARKS_TITLE
from reviewer_app.reporting.benchmarks import rho_line, where
from reviewer_app.reporting.formats import significant
from reviewer_app.results.batch_reports import batch_report
from reviewer_app.results.benchmark_scores import parse_benchmark_scores
from reviewer_app.ui.components.safe_text import markdown_literal
from reviewer_app.ui.views.results_charts import benchmark_chart

if TYPE_CHECKING:
    from sqlalchemy.engine import Engine


@st.cache_resource(max_entries=4, show_spinner=False)
def benchmark_report(
    _engine: Engine,
    batch_id: int,
    rounds: int,
    weights: tuple[tuple[str, float], ...],
    scores_digest: str,
    base_key: tuple[str, int],
    _scores: BenchmarkScores,
    adjudicated: bool = False,
) -> Report:
    """The report with the uploaded benchmark scores beside it, computed once per upload (``scores_digest``),
    rounds, weights and the batch's data (``base_key``: when and from how many ratings the cached report was
    built, so a new rating gives a new key)."""
    with st.spinner("Putting the benchmark scores beside the rankings..."):
        return batch_report(
            _engine,
            batch_id=batch_id,
            rounds=rounds,
            weights=dict(weights) or None,
            benchmarks=_scores,
            adjudicated=adjudicated,
        )


BENCHMARK_CSV_MAX_CHARS = 200_000  # a few thousand rows: far more than any leaderboard has models and benchmarks


def benchmarks_upload(batch_id: int) -> BenchmarkScores | None:
    """The sidebar's benchmark scores, pasted as CSV text: the scores read from it, None without any (or with
    an error, shown in the sidebar with its lines). Pasted, not uploaded: only admins get an upload widget (a
    page with one accepts files from its session), and a scores table is a few lines."""
    pasted = st.text_area(
        "Public benchmark scores (CSV: model,benchmark,score)",
        key=f"benchmarks-{batch_id}",
        max_chars=BENCHMARK_CSV_MAX_CHARS,
        placeholder="model,benchmark,score\nmodel-a,MMLU,71.2\nmodel-b,MMLU,70.4",
        help="One row per model and benchmark; scores in the benchmark's own units, higher is better unless a "
        "higher_is_better column says false. Each scenario's tab then shows the benchmark beside the blind ranking.",
    )
    margin = st.number_input(
        "Benchmark margin (points)",
        min_value=0.0,
        value=DEFAULT_MARGIN,
        step=0.5,
        key=f"benchmark-margin-{batch_id}",
        help="Pairs a benchmark separates by this many of its points or less get a sentence.",
    )
    if not pasted.strip():
        return None
    try:
        return parse_benchmark_scores(pasted.encode(), source="the pasted scores", margin=float(margin))
    except ValidationError as exc:  # the CLI's wording says "run the command again": here, fix the text
        problems = "; ".join(str(p) for p in exc.problems)
        st.error(markdown_literal(f"The benchmark scores are not used (fix them above): {problems}"))
        return None


def benchmark_sections(sections: Sequence[BenchmarkSection] | None, scenario: str | None) -> None:
    """Each benchmark beside the ranking: the sentences first, then rho, the chart and the two orders."""
    if sections is None:
        return
    st.markdown(f"**{BENCHMARKS_TITLE}**")
    for s in sections:
        st.markdown(f"**{markdown_literal(s.benchmark)}**")
        for line, pair in zip(s.disagreements, s.pairs, strict=True):
            if pair.verdict == "reversed":
                st.warning(markdown_literal(line))
            else:
                st.info(markdown_literal(line))
        st.caption(markdown_literal(rho_line(s, where(scenario))))
        chart = benchmark_chart(s, f"{s.benchmark} score against blind score")
        if chart is not None:
            st.altair_chart(chart, width="stretch")
        frame = pd.DataFrame(records(s.models))
        for name in ("benchmark_rank", "blind_rank", "tier"):
            frame[name] = frame[name].astype("Int64")  # whole numbers, blank where missing
        for name in ("benchmark_score", "blind_score", "blind_ci_low", "blind_ci_high"):
            frame[name] = frame[name].map(lambda v: None if v is None or v != v else significant(float(v)))
        headers = {
            "model": "model",
            "benchmark_rank": "benchmark rank",
            "benchmark_score": "benchmark score",
            "blind_rank": "blind rank",
            "blind_score": "blind score",
            "blind_ci_low": "CI low",
            "blind_ci_high": "CI high",
            "tier": "tier",
        }
        st.dataframe(frame[list(headers)].rename(columns=headers), hide_index=True)
        for note in s.notes:
            st.caption(markdown_literal(note))
