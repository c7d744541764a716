"""The "Judge vs panel" tab of the lead's results: an LLM judge measured against the panel, and the rankings
that use its ratings beside the panel's. Layout only: the section is the report's (``analysis.judge_section``).
"""

from __future__ import annotations

import streamlit as st

from reviewer_app.domain.report_assisted import AssistedModelRow, JudgeSection
from reviewer_app.domain.report_rankings import LETTERS_NOTE, RankingRow
from reviewer_app.reporting.formats import ASSISTED_NOTE, judge_heading
from reviewer_app.ui.components.safe_text import markdown_literal
from reviewer_app.ui.views.results_tables import report_table


def render_judge(section: JudgeSection) -> None:
    """The judge's run, then each judge-assisted ranking (sentence, ranking, what the judge contributed)."""
    st.markdown(markdown_literal(judge_heading(section)))
    for note in section.notes:
        st.info(markdown_literal(note))
    if not section.assisted:
        return
    st.markdown("##### Judge-assisted rankings")
    st.caption(markdown_literal(ASSISTED_NOTE))
    for a in section.assisted:
        ratio = "" if a.width_ratio is None else f": intervals {a.width_ratio:.2f}x the panel's alone"
        with st.expander(markdown_literal(f"{a.scenario} ({a.dimension}){ratio}")):
            st.info(markdown_literal(a.summary))
            frame = report_table(RankingRow.COLUMNS, a.ranking)
            first = [c for c in ("model", "letters", "rank", "tier") if c in frame.columns]  # in view on a phone
            st.dataframe(frame[first + [c for c in frame.columns if c not in first]], hide_index=True)
            st.caption(LETTERS_NOTE)
            st.dataframe(report_table(AssistedModelRow.COLUMNS, a.models), hide_index=True)
