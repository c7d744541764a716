"""The rubric as a form: one radio group per dimension (a number box for a continuous one), a comment, and
"can't judge" with a reason.

Widget keys carry only the assignment id and the dimension name, and the values are the stored answers
("1".."5", "0"/"1", a choice, "left"/"right"/"tie"/"both_bad", a number): nothing in the session state names
a model, a file or the original order.

The answers are saved in the submit button's callback, which Streamlit runs before the script: one script
run takes the answers and draws the next item, instead of one run to notice the click and a second
(``st.rerun``) to draw what follows.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import streamlit as st

from reviewer_app.components.safe_text import markdown_literal
from reviewer_app.domain.enums import Scale
from reviewer_app.domain.rubric import Dimension
from reviewer_app.domain.views import ReviewItemView, choice_label


@dataclass(frozen=True)
class Submission:
    assignment_id: int
    answers: dict[str, str]
    comment: str
    cant_judge: str | None


def _options(dim: Dimension) -> list[str]:
    values = dim.allowed_values()
    return ["1", "0"] if dim.scale == Scale.BINARY else values  # "Yes" first reads more naturally


def _collect(key: str, view: ReviewItemView) -> Submission:
    state = st.session_state
    comment = str(state.get(f"{key}_comment") or "")
    if state.get(f"{key}_cant"):
        return Submission(view.assignment_id, {}, comment, str(state.get(f"{key}_reason") or ""))
    answers = {
        d.name: _stored(state[_dim_key(key, d)]) for d in view.dimensions if state.get(_dim_key(key, d)) is not None
    }
    return Submission(view.assignment_id, answers, comment, None)


def _dim_key(key: str, dim: Dimension) -> str:
    """A dimension's widget key, in a namespace of its own: a dimension named ``comment``, ``cant``, ``reason``
    or ``form`` must not share a key with the form's other widgets (Streamlit refuses duplicate keys)."""
    return f"{key}_dim_{dim.name}"


def _stored(value: object) -> str:
    """A widget's value as the stored answer text: a number box's 12.0 as "12", 12.5 as "12.5"."""
    if isinstance(value, float):
        return f"{value:.15g}"
    return str(value)


def _number(dim: Dimension, key: str, label: str, previous: str | None, editable: bool) -> None:
    """A continuous dimension: a number box bounded by the scale, empty until the reviewer types."""
    assert dim.min is not None and dim.max is not None
    value = float(previous) if previous is not None and dim.accepts(previous) else None
    lo, hi = float(dim.min), float(dim.max)
    better = "higher is better" if dim.higher_is_better else "lower is better"
    st.number_input(
        label,
        min_value=lo,
        max_value=hi,
        value=value,
        step=None,
        format="%g",
        help=f"Any number from {lo:g} to {hi:g} ({better}).",
        key=key,
        disabled=not editable,
    )


def rating_form(view: ReviewItemView, on_submit: Callable[[Submission], None]) -> None:
    """Draw the form for ``view``; ``on_submit`` gets the answers when the button is pressed."""
    key = f"a{view.assignment_id}"
    with st.form(key=f"{key}_form", border=True):
        for dim in view.dimensions:
            previous = view.answers.get(dim.name)
            title = dim.name.replace("_", " ").capitalize()
            label = (  # rubric words are shown as written: no Streamlit directives, colours or remote images
                f"**{markdown_literal(title)}** — {markdown_literal(dim.description)}"
                if dim.description
                else f"**{markdown_literal(title)}**"
            )
            if dim.scale == Scale.CONTINUOUS:
                _number(dim, _dim_key(key, dim), label, previous, view.editable)
                continue
            options = _options(dim)
            st.radio(
                label,
                options,
                index=options.index(previous) if previous in options else None,
                format_func=lambda v, d=dim: markdown_literal(choice_label(d, v)),
                horizontal=True,
                key=_dim_key(key, dim),
                disabled=not view.editable,
            )
        st.text_area(
            "Comment (optional)", value=view.comment, key=f"{key}_comment", height=80, disabled=not view.editable
        )
        st.checkbox(
            "I can't judge this item", value=view.cant_judge is not None, key=f"{key}_cant", disabled=not view.editable
        )
        st.text_input(
            "Why not? (required if you can't judge)",
            value=view.cant_judge or "",
            key=f"{key}_reason",
            disabled=not view.editable,
            placeholder="e.g. outside my expertise, the image does not load",
        )
        st.form_submit_button(
            "Save changes" if view.submitted else "Submit and next",
            type="primary",
            disabled=not view.editable,
            on_click=lambda: on_submit(_collect(key, view)),
        )
