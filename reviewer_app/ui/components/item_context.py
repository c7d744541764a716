"""What is judged besides the answers, as a reviewer sees it: the prompt, its images, the acceptance criteria and
the reference answer. The review page and the Adjudicate page draw the same, so an adjudicator rules on exactly
what the panel saw."""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from reviewer_app.domain.views import ReviewItemView
from reviewer_app.errors import BlindReviewError
from reviewer_app.ui.components.conversation import render_prompt
from reviewer_app.ui.components.safe_text import render_markdown

IMAGE_CAPTION = (
    "Image {n}. To see it larger: with a mouse, point at it and click the expand button at its top right; "
    "on a touch screen, pinch to zoom."
)


def render_item_context(view: ReviewItemView, image: Callable[[str], bytes], missing: str) -> None:
    """The prompt, its images (read through ``image``, the page's own service; ``missing`` says one that cannot
    be shown, with ``{n}`` its number), then the criteria and reference where the rubric shows them."""
    st.markdown("##### Prompt")
    render_prompt(view.prompt)
    if view.images:
        columns = st.columns(min(len(view.images), 3))
        for i, name in enumerate(view.images):
            with columns[i % len(columns)]:
                try:
                    data = image(name)
                except BlindReviewError:
                    st.warning(missing.format(n=i + 1))
                    continue
                st.image(data, caption=IMAGE_CAPTION.format(n=i + 1))
    if view.criteria or view.reference:
        with st.container(border=True):
            if view.criteria:
                st.markdown("**Acceptance criteria**")
                render_markdown(view.criteria)
            if view.reference:
                st.markdown("**Reference answer**")
                render_markdown(view.reference)
