"""The rubric as a form: one radio group per dimension, a comment, and "can't judge" with a reason.

Widget keys carry only the assignment id and the dimension name, and the values are the stored answers
("1".."5", "0"/"1", a choice, "left"/"right"/"tie"/"both_bad"): nothing in the session state names a
model, a file or the original order.
"""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from reviewer_app.services.reviews import ReviewItemView, choice_label
from reviewer_app.services.rubric import Dimension


@dataclass(frozen=True)
class Submission:
    answers: dict[str, str]
    comment: str
    cant_judge: str | None


def _options(dim: Dimension) -> list[str]:
    values = dim.allowed_values()
    return ["1", "0"] if dim.scale == "binary" else values  # "Yes" first reads more naturally


def rating_form(view: ReviewItemView) -> Submission | None:
    """Draw the form for ``view``; returns what was submitted on the run the button was pressed."""
    key = f"a{view.assignment_id}"
    with st.form(key=f"{key}_form", border=True):
        answers: dict[str, str | None] = {}
        for dim in view.dimensions:
            options = _options(dim)
            previous = view.answers.get(dim.name)
            answers[dim.name] = st.radio(
                f"**{dim.name.replace('_', ' ').capitalize()}** — {dim.description}" if dim.description
                else f"**{dim.name.replace('_', ' ').capitalize()}**",
                options, index=options.index(previous) if previous in options else None,
                format_func=lambda v, d=dim: choice_label(d, v), horizontal=True, key=f"{key}_{dim.name}",
                disabled=not view.editable,
            )
        comment = st.text_area("Comment (optional)", value=view.comment, key=f"{key}_comment", height=80,
                               disabled=not view.editable)
        cant = st.checkbox("I can't judge this item", value=view.cant_judge is not None, key=f"{key}_cant",
                           disabled=not view.editable)
        reason = st.text_input("Why not? (required if you can't judge)", value=view.cant_judge or "",
                               key=f"{key}_reason", disabled=not view.editable,
                               placeholder="e.g. outside my expertise, the image does not load")
        label = "Save changes" if view.submitted else "Submit and next"
        pressed = st.form_submit_button(label, type="primary", disabled=not view.editable)
    if not pressed:
        return None
    if cant:
        return Submission({}, comment, reason)
    return Submission({k: v for k, v in answers.items() if v is not None}, comment, None)
