"""The "Style control" tab of the lead's results: per scenario and dimension, the ranking with length and
Markdown held fixed beside the ranking as rated, and what each style feature is worth. Layout only: the
section is the report's (``analysis.style_control``)."""

from __future__ import annotations

from collections.abc import Sequence

import streamlit as st

from reviewer_app.domain.report_style import STYLE_NOTE, StyleRanking, StyleRow
from reviewer_app.ui.components.safe_text import markdown_literal
from reviewer_app.ui.views.results_tables import report_table


def render_style(rankings: Sequence[StyleRanking]) -> None:
    """The overall rankings open, each dimension's folded; the method under them."""
    for ranked in rankings:
        title = ranked.scenario if ranked.dimension == "overall" else f"{ranked.scenario} ({ranked.dimension})"
        with st.expander(markdown_literal(title), expanded=ranked.dimension == "overall"):
            moved = any(r.rank_change for r in ranked.rows)
            (st.warning if moved and _clear(ranked) else st.info)(markdown_literal(ranked.sentence))
            st.dataframe(report_table(StyleRow.COLUMNS, ranked.rows), hide_index=True)
            st.markdown("\n".join(f"- {markdown_literal(c.sentence)}" for c in ranked.coefficients))
            if ranked.left_out:
                st.caption(
                    f"Not controlled (no variation to learn from): {markdown_literal(', '.join(ranked.left_out))}."
                )
    st.caption(markdown_literal(STYLE_NOTE))


def _clear(ranked: StyleRanking) -> bool:
    """Some style effect whose interval leaves out zero: a rank change then means something."""
    return any(
        c.ci_low is not None and c.ci_high is not None and (c.ci_low > 0 or c.ci_high < 0) for c in ranked.coefficients
    )


def style_verdict_lines(rankings: Sequence[StyleRanking]) -> list[str]:
    """For the verdict: the overall rankings where style matters and holding it fixed changes the top model."""
    out = []
    for ranked in rankings:
        if ranked.dimension != "overall" or not ranked.rows or not _clear(ranked):
            continue
        if any(r.rank == 1 and r.controlled_rank != 1 for r in ranked.rows):
            out.append(ranked.sentence)
    return out
