"""The "Judge vs panel" tab of the lead's results: an LLM judge measured against the panel (its report card: a
verdict per scenario with the rule, the measures folded), and the rankings that use its ratings beside the
panel's. Layout only: the section is the report's (``analysis.judge_section``).
"""

from __future__ import annotations

import streamlit as st

from reviewer_app.domain.report_assisted import AssistedModelRow, JudgeSection
from reviewer_app.domain.report_judge_card import (
    VERDICT_RULE,
    JudgeAgreementRow,
    JudgeBiasRow,
    JudgeDimensionCard,
    LeaveOneOutRow,
)
from reviewer_app.domain.report_rankings import LETTERS_NOTE, RankingRow
from reviewer_app.reporting.formats import ASSISTED_NOTE, card_line, judge_heading
from reviewer_app.ui.components.safe_text import markdown_literal
from reviewer_app.ui.views.results_tables import report_table


def render_judge(section: JudgeSection) -> None:
    """The judge's run, then each judge-assisted ranking (sentence, ranking, what the judge contributed)."""
    st.markdown(markdown_literal(judge_heading(section)))
    for note in section.notes:
        st.info(markdown_literal(note))
    if section.cards:
        st.markdown("##### The judge's report card")
        for card in section.cards:
            box = (
                st.success if card.verdict == "stands_in" else st.warning if card.verdict == "triage_only" else st.error
            )
            box(markdown_literal(card_line(card)))
        st.caption(markdown_literal(VERDICT_RULE))
        for card in section.cards:
            with st.expander(markdown_literal(f"{card.scenario}: the measures")):
                st.dataframe(report_table(JudgeAgreementRow.COLUMNS, card.agreement), hide_index=True)
                if card.bias:
                    st.dataframe(report_table(JudgeBiasRow.COLUMNS, card.bias), hide_index=True)
                if card.measures:
                    st.dataframe(report_table(JudgeDimensionCard.COLUMNS, card.measures), hide_index=True)
                if card.leave_one_out:
                    st.dataframe(report_table(LeaveOneOutRow.COLUMNS, card.leave_one_out), hide_index=True)
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
