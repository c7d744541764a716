"""The rubric as a form: one radio group per dimension (a number box for a continuous one), a comment, and
"can't judge" with a reason; a draft of it is kept as the reviewer fills it in.

Widget keys carry only the assignment id and the dimension name, and the values are the stored answers
("1".."5", "0"/"1", a choice, "left"/"right"/"tie"/"both_bad", a number): nothing in the session state names
a model, a file or the original order.

The choice questions are fragments (``st.fragment``): picking an answer re-runs only them, not the page with
its long answers, and each change hands the whole form to ``on_change`` (the page saves it as a draft: a
refresh or a crash loses nothing). They are not an ``st.form``, whose widgets send nothing until submitted.
The submit button sits outside: its callback, which Streamlit runs before the script, saves the answers,
and the same full run draws the next item. Every box one types into (a number, the comment, the reason)
and the "can't judge" tick stay outside the fragments: a box sends its text when it loses focus, so a click
on Submit while typing sent a fragment rerun and the button's full rerun at once, and Streamlit ran the
callback (the answer was saved) but left the page on the item, form filled, no "Saved" (issue 27; in a
minimal app of a text box in a fragment and a button outside, 9 and 10 of 12 such clicks; 0 of 12 with the
box outside). Outside, both reruns are full ones, which Streamlit folds into one.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

import streamlit as st

from reviewer_app.domain.rubric import Dimension
from reviewer_app.domain.scales import spec_of
from reviewer_app.domain.views import ReviewItemView, choice_label
from reviewer_app.ui.components.item_keys import item_key
from reviewer_app.ui.components.safe_text import markdown_literal

FORM_KEY = "judgement"  # the form's container: ``st-key-judgement`` in the page (styles, keyboard script)
SUBMIT_KEY = "submit_answer"


@dataclass(frozen=True)
class FormState:
    """What the reviewer has chosen and typed so far (also a draft's content)."""

    answers: dict[str, str] = field(default_factory=dict)
    comment: str = ""
    cant_judge: bool = False
    reason: str = ""


@dataclass(frozen=True)
class Submission:
    assignment_id: int
    answers: dict[str, str]
    comment: str
    cant_judge: str | None


def question_title(dim: Dimension) -> str:
    """A dimension's name as the form shows it: ``follows_format`` -> "Follows format"."""
    return dim.name.replace("_", " ").capitalize()


def first_missing_choice(view: ReviewItemView, missing: tuple[str, ...]) -> int | None:
    """The place, among the form's choice questions (radio groups, which the keys answer; a number box is
    not one), of the first one in ``missing``; None when no choice question is missing."""
    choices = [d for d in view.dimensions if not spec_of(d.scale).typed]
    return next((i for i, d in enumerate(choices) if d.name in missing), None)


def _options(dim: Dimension) -> list[str]:
    return spec_of(dim.scale).form_order(dim)


def _prefix(view: ReviewItemView) -> str:
    return item_key(view.assignment_id)


def current_state(view: ReviewItemView) -> FormState:
    """The form as it stands in this session."""
    state, key = st.session_state, _prefix(view)
    answers = {
        d.name: _stored(state[_dim_key(key, d)]) for d in view.dimensions if state.get(_dim_key(key, d)) is not None
    }
    comment, reason = str(state.get(f"{key}_comment") or ""), str(state.get(f"{key}_reason") or "")
    return FormState(answers, comment, bool(state.get(f"{key}_cant")), reason)


def collect(view: ReviewItemView) -> Submission:
    """The form as a submission: no scores when "can't judge" is ticked."""
    form = current_state(view)
    if form.cant_judge:
        return Submission(view.assignment_id, {}, form.comment, form.reason)
    return Submission(view.assignment_id, form.answers, form.comment, None)


_SHOWN = "form_assignment"  # the assignment whose form the widgets hold
_FORM_KEY = re.compile(r"^i[0-9a-f]{16}_(dim_.+|comment|cant|reason)$")


def _form_key(name: str) -> bool:
    return bool(_FORM_KEY.match(name))


def _dim_key(key: str, dim: Dimension) -> str:
    """A dimension's widget key, in a namespace of its own: a dimension named ``comment``, ``cant``, ``reason``
    or ``form`` must not share a key with the form's other widgets (Streamlit refuses duplicate keys)."""
    return f"{key}_dim_{dim.name}"


def _stored(value: object) -> str:
    """A widget's value as the stored answer text: a number box's 12.0 as "12", 12.5 as "12.5"."""
    if isinstance(value, float):
        return f"{value:.15g}"
    return str(value)


def saved_summary(view: ReviewItemView) -> str:
    """The answer saved for ``view`` in a line, as the form words it (literal: safe in a caption)."""
    if view.cant_judge is not None:
        return markdown_literal(f"can't judge: {view.cant_judge}")
    parts = [
        f"{question_title(d)}: {choice_label(d, view.answers[d.name])}"
        for d in view.dimensions
        if d.name in view.answers
    ]
    if view.comment:
        parts.append(f"comment: {view.comment}")
    return markdown_literal(" · ".join(parts) or "no answer")


def forget_form(assignment_id: int) -> None:
    """Drop what this session's widgets hold for an item's form: the next run starts it again from the saved
    answer (the reviewer chose to keep an answer saved in another tab over this form's)."""
    key = item_key(assignment_id)
    for k in [k for k in list(st.session_state.keys()) if str(k).startswith(key + "_") and _form_key(str(k))]:
        del st.session_state[k]


def _start_values(view: ReviewItemView, draft: FormState | None) -> None:
    """Put the draft (else the submitted answer) into the widgets' state, once per item: set before the
    widgets are drawn, and never again while they live, so what the reviewer does is not overwritten."""
    state, key = st.session_state, _prefix(view)
    if state.get(_SHOWN) != view.assignment_id:
        # Another item was on the page meanwhile: what this item's widgets held then (Streamlit can keep a
        # value set through the session state past the widget's life) must not replace its saved answer.
        stale = [k for k in list(state.keys()) if _form_key(str(k))]
        for k in stale:
            del state[k]
        state[_SHOWN] = view.assignment_id
    start = draft or FormState(dict(view.answers), view.comment, view.cant_judge is not None, view.cant_judge or "")
    for dim in view.dimensions:
        k = _dim_key(key, dim)
        if k in state:
            continue
        value = start.answers.get(dim.name)
        if spec_of(dim.scale).typed:
            state[k] = float(value) if value is not None and dim.accepts(value) else None
        else:
            state[k] = value if value in _options(dim) else None
    for k, v in ((f"{key}_comment", start.comment), (f"{key}_cant", start.cant_judge), (f"{key}_reason", start.reason)):
        if k not in state:
            state[k] = v


def _number(dim: Dimension, key: str, label: str, editable: bool, on_change: Callable[[], None]) -> None:
    """A continuous dimension: a number box bounded by the scale, empty until the reviewer types."""
    assert dim.min is not None and dim.max is not None
    lo, hi = float(dim.min), float(dim.max)
    better = "higher is better" if dim.higher_is_better else "lower is better"
    st.number_input(
        label,
        min_value=lo,
        max_value=hi,
        value=None,
        step=None,
        format="%g",
        help=f"Any number from {lo:g} to {hi:g} ({better}).",
        key=key,
        disabled=not editable,
        on_change=on_change,
    )


def _shown_choice(dim: Dimension) -> Callable[[str], str]:
    def shown(value: str) -> str:
        return markdown_literal(choice_label(dim, value))

    return shown


def _label(view: ReviewItemView, dim: Dimension, missing: tuple[str, ...]) -> str:
    title = question_title(dim)
    label = (  # rubric words are shown as written: no Streamlit directives, colours or remote images
        f"**{markdown_literal(title)}** — {markdown_literal(dim.description)}"
        if dim.description
        else f"**{markdown_literal(title)}**"
    )
    if dim.name in missing and st.session_state.get(_dim_key(_prefix(view), dim)) is None:
        label = ":red[**Not answered yet.**] " + label
    return label


@st.fragment
def _choices(
    view: ReviewItemView, dims: tuple[Dimension, ...], on_change: Callable[[FormState], None], missing: tuple[str, ...]
) -> None:
    """A run of choice questions (radio groups): picking an answer re-runs only them."""

    def changed() -> None:
        on_change(current_state(view))

    for dim in dims:
        st.radio(
            _label(view, dim, missing),
            _options(dim),
            index=None,
            format_func=_shown_choice(dim),
            horizontal=True,
            key=_dim_key(_prefix(view), dim),
            disabled=not view.editable,
            on_change=changed,
        )


def _questions(view: ReviewItemView, on_change: Callable[[FormState], None], missing: tuple[str, ...]) -> None:
    """The questions in the rubric's order: each run of choice questions a fragment, every box one types into
    (a number, the comment, the reason) and the "can't judge" tick outside any fragment (see the module's
    docstring for why)."""
    key = _prefix(view)

    def changed() -> None:
        on_change(current_state(view))

    run: list[Dimension] = []
    for dim in view.dimensions:
        if not spec_of(dim.scale).typed:
            run.append(dim)
            continue
        if run:
            _choices(view, tuple(run), on_change, missing)
            run = []
        _number(dim, _dim_key(key, dim), _label(view, dim, missing), view.editable, changed)
    if run:
        _choices(view, tuple(run), on_change, missing)
    st.text_area("Comment (optional)", key=f"{key}_comment", height=68, disabled=not view.editable, on_change=changed)
    st.checkbox("I can't judge this item", key=f"{key}_cant", disabled=not view.editable, on_change=changed)
    if not st.session_state.get(f"{key}_cant"):
        return  # the reason box only when it is needed: the form fits beside the answer on one screen
    st.text_input(
        "Why not? (required if you can't judge)",
        key=f"{key}_reason",
        disabled=not view.editable,
        placeholder="e.g. outside my expertise, the image does not load",
        on_change=changed,
    )


def rating_form(
    view: ReviewItemView,
    on_submit: Callable[[Submission], None],
    *,
    on_change: Callable[[FormState], None],
    draft: FormState | None = None,
    missing: tuple[str, ...] = (),
    error: str | None = None,
) -> None:
    """Draw the form for ``view``, starting from ``draft`` when there is one; ``on_change`` gets the whole
    form after each change, ``on_submit`` the answers when the button is pressed. ``missing``: dimension
    names to mark as not answered (after a submit without them); ``error``: why the last submit was refused,
    shown just above the button (where the reviewer is looking; below it, it fell out of a scrolled form)."""
    _start_values(view, draft)
    _questions(view, on_change, missing)
    if error is not None:
        with st.container(key="form_error"):
            st.error(markdown_literal(error))
    st.button(
        "Save changes" if view.submitted else "Submit and next",
        type="primary",
        key=SUBMIT_KEY,
        disabled=not view.editable,
        on_click=lambda: on_submit(collect(view)),
    )
