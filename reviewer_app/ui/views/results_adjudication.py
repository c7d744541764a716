"""The "Adjudication" tab of the lead's results: how many disagreements went to the queue and how many are ruled,
per scenario, and every ruling with the panel's answers and the reason. Layout only: the section is the
report's (``analysis.disputes``); the queue itself is the Adjudicate page."""

from __future__ import annotations

import streamlit as st

from reviewer_app.domain.report_adjudication import (
    ADJUDICATION_NOTE,
    AdjudicatedItem,
    AdjudicationScenario,
    AdjudicationSection,
)
from reviewer_app.ui.components.safe_text import markdown_literal
from reviewer_app.ui.views.results_tables import report_table


def render_adjudication(section: AdjudicationSection) -> None:
    """The summary (whether these rankings use the rulings first), the counts, the rulings."""
    (st.warning if section.used and section.ruled else st.info)(markdown_literal(section.summary))
    st.caption(markdown_literal(f"Disputed when: {section.rule}."))
    st.dataframe(report_table(AdjudicationScenario.COLUMNS, section.scenarios), hide_index=True)
    if section.items:
        st.markdown("**Rulings**")
        st.dataframe(report_table(AdjudicatedItem.COLUMNS, section.items), hide_index=True)
    else:
        st.caption("No ruling yet: leads and designated senior reviewers rule on the Adjudicate page.")
    st.caption(markdown_literal(ADJUDICATION_NOTE))
