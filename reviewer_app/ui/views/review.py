"""The reviewer's page: one blind item at a time, progress, and going back to revise an answer.

Where the reviewer is lives in the database, not in this process: the current item is always "the first
unfinished one in my queue", so a refresh, a crash or a second server resumes at the same place. The
session state holds only the chosen batch id, the assignment id of an item being revised, a one-shot
"Saved" note, and a count of submits refused for unanswered questions (it moves the keyboard's outline).
The batch and its scenario are named by the titles reviewers see, never by a name that names a model.

Blind by structure: this page and its components import only the domain, the errors, the settings, the
sign-in view and the reviewer-facing services (reviews, progress, reviewers), never storage, reporting, the
ratings export or aggregation, so nothing that can read a model's name is within reach (an import-graph
test keeps it so).

Everything the batch supplies (prompt, answers, reference, criteria, instructions, scenario) is untrusted
text: it is rendered by ``components.safe_text``, never by Streamlit's own Markdown.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import streamlit as st

from reviewer_app.domain.enums import AssignmentStatus, BatchStatus, Role
from reviewer_app.domain.views import BatchProgress, Person, ReviewItemView
from reviewer_app.errors import (
    AnswerChangedError,
    AuthError,
    BatchClosedError,
    BlindReviewError,
    NotFoundError,
    SlotTakenError,
)
from reviewer_app.people.people import authenticate_session, hash_token, require
from reviewer_app.review import drafts, finished_items, reviews
from reviewer_app.ui.components.item_context import render_item_context
from reviewer_app.ui.components.item_keys import item_key
from reviewer_app.ui.components.keyboard import KEYS_HELP, PREVIOUS_KEY, STYLES, install_keys
from reviewer_app.ui.components.output_card import render_outputs
from reviewer_app.ui.components.rating_form import (
    FORM_KEY,
    FormState,
    Submission,
    collect,
    first_missing_choice,
    forget_form,
    rating_form,
    saved_summary,
)
from reviewer_app.ui.components.safe_text import install_styles, markdown_literal, render_markdown
from reviewer_app.ui.views import signin

if TYPE_CHECKING:
    from sqlalchemy.engine import Engine

PER_PAGE = 20  # previous items per page of "Your previous items"
# Wide screens: the judgement in a column beside the prompt and answers, held in view (sticky) while a long
# answer scrolls past. Under 640 px Streamlit stacks columns, and the form follows the answers as before.
_LAYOUT = f"""
<style>
@media (min-width: 640px) {{
  [data-testid="stColumn"]:has(> div > .st-key-{FORM_KEY}), [data-testid="stColumn"]:has(.st-key-{FORM_KEY}) {{
    position: sticky; top: 3.75rem; align-self: flex-start;
    max-height: calc(100vh - 4.5rem); overflow-y: auto;
  }}
}}
@media (max-width: 639px) {{ .st-key-keys_help {{ display: none; }} }}  /* phones have no keyboard shortcuts */
/* Phones: a long answer puts the form screens below; a button goes there, and a link in the form comes back.
   Hidden on wide screens (the form is beside the answer) and while the form is in view (set by the keys). */
.br-jump, .br-back {{ display: none; }}
@media (max-width: 639px) {{
  .br-jump {{ display: block; position: fixed; right: 1rem; bottom: 1rem; z-index: 999990; padding: 0.6rem 1rem;
    border-radius: 1.5rem; background: #2f5f9e; color: #fff !important; text-decoration: none; font-weight: 600;
    box-shadow: 0 2px 8px rgba(0, 0, 0, 0.3); }}
  body.br-form-in-view .br-jump {{ display: none; }}
  .br-back {{ display: inline-block; padding: 0.4rem 0; }}
}}
</style>
"""
# The header line: Streamlit's 6rem of space above the first element, a big title, the batch picker, a
# banner and a progress bar took ~350 px of a 900 px laptop screen before the item began.
_HEADER = """<style>
[data-testid="stMainBlockContainer"] { padding-top: 3.75rem; }
.st-key-review_header h3 { font-size: 1.4rem; padding: 0.25rem 0 0; }
.st-key-review_header [data-testid="stAlertContainer"] { padding: 0.3rem 0.75rem; }
.st-key-review_header [data-testid="stProgress"] p { margin-bottom: 0; }
</style>"""
ANSWER_ANCHOR, JUDGEMENT_ANCHOR = "br-answer", "br-judgement"  # where the phone's jump and back links go
_ANCHOR = '<div id="{id}"></div>'
_JUMP_LINK = f'<a class="br-jump" href="#{JUDGEMENT_ANCHOR}">Go to your judgement ↓</a>'
_BACK_LINK = f'<a class="br-back" href="#{ANSWER_ANCHOR}">↑ Back to the answer</a>'
LONG_ON_A_PHONE = 1_500  # characters of answer(s) from which a phone gets the "Go to your judgement" button
SIGNIN_CHECKED = "signin_checked"  # set by the Submit callback, taken by app.main in the same run
REFUSALS = "form_refusals"  # how many submits this tab refused for unanswered questions (moves the outline)
BATCH_CHOSEN = "batch_chosen"  # the reviewer picked the batch shown (the page does not move them off it)
CONFLICT = "answer_conflict"  # (assignment id, message): a submit refused, the answer was saved in another tab


def render(engine: Engine, person: Person) -> None:
    require(person, Role.REVIEWER)
    batches = reviews.batches_for(engine, person.id)
    if not batches:
        st.title("Review")
        st.info("No batch is open for you yet. Your admin will tell you when there is work.")
        return
    st.html(_HEADER)
    # The header line is drawn once the item is known (it names it), but sits above everything else.
    header = st.container(key="review_header")
    batch_id = _choose_batch(batches)
    taken = st.session_state.pop("flash_warning", None)
    if taken:
        st.warning(markdown_literal(taken), icon=":material/info:")
    revising = st.session_state.get("assignment_id")
    view: ReviewItemView | None
    try:
        if revising is not None:
            view = reviews.item_view(engine, person.id, int(revising))
        else:
            view = reviews.next_item(engine, batch_id, person.id)
    except NotFoundError:
        st.session_state.pop("assignment_id", None)
        st.rerun()
    except BatchClosedError as exc:
        with header:
            _header(engine, person, batches, None)
        st.info(markdown_literal(str(exc)))
        _previous_items(engine, batch_id, person, current=None)
        return
    if view is None and not st.session_state.get(BATCH_CHOSEN):
        # Landed (not by the reviewer's choice) on a batch with nothing for them: open one that has work.
        found = reviews.first_batch_with_work(engine, person.id, _others_by_work(batches, batch_id))
        if found is not None:
            left = next(b.name for b in batches if b.batch_id == batch_id)
            st.session_state["batch_id"], view = found.batch_id, found.view
            st.session_state["flash_note"] = f"Nothing in “{left}” is waiting for you: here is a batch with work."
            batch_id = found.batch_id
    with header:
        _header(engine, person, batches, view)
    if view is None:
        mine = next(b for b in batches if b.batch_id == batch_id)
        if mine.assigned and mine.done >= mine.assigned:
            st.success("You have finished every item of this batch. Thank you!", icon=":material/celebration:")
        else:
            st.info("Nothing in this batch is waiting for you: every item already has its reviewers.")
        if len(batches) > 1:
            st.caption("Pick another batch at the top of the page to go on.")
        _previous_items(engine, batch_id, person, current=None)
        return
    _item(engine, person, view)
    _previous_items(engine, batch_id, person, current=view.assignment_id)


def _others_by_work(batches: list[BatchProgress], batch_id: int) -> list[int]:
    """The other open batches, those with the reviewer's own unfinished items first."""
    others = [b for b in batches if b.batch_id != batch_id and b.status == BatchStatus.OPEN]
    return [b.batch_id for b in sorted(others, key=lambda b: not b.done < b.assigned)]


def _choose_batch(batches: list[BatchProgress]) -> int:
    """The batch on the page: the one picked, else where there is work (own unfinished items first, then
    open batches with a free pool). Decided before the picker is drawn (in the header line)."""
    ids = [b.batch_id for b in batches]
    if st.session_state.get("batch_id") not in ids:
        started = [b.batch_id for b in batches if b.status == BatchStatus.OPEN and b.done < b.assigned]
        fresh = [b.batch_id for b in batches if b.status == BatchStatus.OPEN and not b.assigned]
        st.session_state["batch_id"] = (started + fresh + ids)[0]
        st.session_state.pop(BATCH_CHOSEN, None)
    return int(st.session_state["batch_id"])


def _batch_picked() -> None:
    """The picker's callback: the reviewer chose this batch (the page no longer moves them off it)."""
    st.session_state.pop("assignment_id", None)
    st.session_state[BATCH_CHOSEN] = True


def _header(engine: Engine, person: Person, batches: list[BatchProgress], view: ReviewItemView | None) -> None:
    """One line above the item: its name and state, progress and the saved note, the batch picker and the
    way back to the previous item (it replaced a title, the picker, a banner and a progress bar stacked
    ~350 px high, which pushed the answer below the fold of a laptop)."""
    where, progress, tools = st.columns([4, 5, 5], vertical_alignment="center", gap="small")
    batch_id = int(st.session_state["batch_id"])
    mine = next(b for b in batches if b.batch_id == batch_id)
    with where:
        if view is not None:
            st.subheader(f"Item {view.label}")
            state = "revising a submitted answer" if view.submitted else "new"
            st.caption(f"{markdown_literal(view.scenario)} · {state}")
        else:
            st.subheader("Review")
    with progress:
        _progress(view, mine)
        flash = st.session_state.pop("flash", None)
        if flash:
            st.success(markdown_literal(flash), icon=":material/check_circle:")
        note = st.session_state.pop("flash_note", None)
        if note:
            st.caption(markdown_literal(note))
    with tools, st.container(horizontal=True, horizontal_alignment="right", vertical_alignment="center"):
        if len(batches) > 1:
            # Static option texts: Streamlit treats a selectbox whose options change as a new widget and
            # would jump back to the first batch, so progress is shown beside the picker, not in it.
            names = {b.batch_id: b.name for b in batches}
            st.selectbox(
                "Batch",
                [b.batch_id for b in batches],
                format_func=lambda i: markdown_literal(names[i]),
                key="batch_id",
                on_change=_batch_picked,
                label_visibility="collapsed",
                width=220,
            )
        if view is None:
            return
        revising = st.session_state.get("assignment_id") is not None
        st.button(
            "Previous item",
            icon=":material/arrow_back:",
            key=PREVIOUS_KEY,
            help="Open the item you finished before this one (key B)",
            on_click=_open_previous,
            args=(engine, person, view.assignment_id if revising else None),
        )
        if revising and st.button("Back to my next item", icon=":material/arrow_forward:"):
            st.session_state.pop("assignment_id", None)
            st.rerun()


def _progress(view: ReviewItemView | None, mine: BatchProgress) -> None:
    """Done out of planned. An item taken from the shared pool beyond the plan has no fixed total (one more
    comes while items still need answers): the line says so instead of a total that grows by one each time."""
    if view is None:
        if mine.assigned:
            st.progress(min(1.0, mine.done / mine.assigned), text=f"{mine.done} of {mine.assigned} done")
        return
    if view.from_pool:
        st.caption(
            f"{view.done} done · item {view.position}, an extra one from the shared pool",
            help="Items that still need answers are handed out one at a time, so this count has no fixed end.",
        )
        return
    share = view.done / view.total if view.total else 0.0
    st.progress(min(share, 1.0), text=f"{view.done} of {view.total} done · item {view.position} of {view.total}")


def _item(engine: Engine, person: Person, view: ReviewItemView) -> None:
    install_styles()
    st.html(STYLES + _LAYOUT)
    error = st.session_state.pop("form_error", None)
    missing = st.session_state.pop("form_missing", None)
    if missing is not None and missing[0] != view.assignment_id:
        missing = None
    if st.session_state.pop("no_previous", False):
        st.info("There is no finished item before this one.")
    if not view.editable:
        st.warning("This batch is closed: you can read your answers but not change them.")
    wide = len(view.outputs) > 1
    content, judgement = st.columns([2, 1] if wide else [3, 2], gap="medium")
    with content:
        _content(view)
    conflict = st.session_state.get(CONFLICT)
    if conflict is not None and conflict[0] != view.assignment_id:
        st.session_state.pop(CONFLICT, None)  # another item is on the page: that question is over
        conflict = None
    with judgement, st.container(key=FORM_KEY, border=True):
        st.html(_ANCHOR.format(id=JUDGEMENT_ANCHOR))
        if conflict is not None:
            _conflict(engine, person, view, conflict[1])
        st.markdown("##### Your judgement")
        draft = drafts.load_draft(engine, person.id, view.assignment_id) if view.editable else None
        rating_form(
            view,
            lambda submission: _save(engine, person, submission, view),
            on_change=lambda form: _keep_draft(engine, person, view.assignment_id, form),
            draft=None if draft is None else FormState(draft.answers, draft.comment, draft.cant_judge, draft.reason),
            missing=() if missing is None else tuple(missing[1]),
            error=error[1] if error is not None and error[0] == view.assignment_id else None,
        )
        with st.container(key="keys_help"):
            st.caption(KEYS_HELP)
        if _long(view):
            st.html(_BACK_LINK)
    if _long(view):
        st.html(_JUMP_LINK)
    if missing is None and error is None:
        install_keys(item_key(view.assignment_id))
    else:  # a refused submit: the message in view, the outline on the first question left unanswered
        refusal = int(st.session_state.get(REFUSALS, 0))
        missed = None if missing is None else first_missing_choice(view, tuple(missing[1]))
        install_keys(item_key(view.assignment_id), refusal=refusal, missing=missed)


def _long(view: ReviewItemView) -> bool:
    """Whether the answers are long enough to push the form far down a phone's screen."""
    return sum(len(o.text) for o in view.outputs) > LONG_ON_A_PHONE


def _content(view: ReviewItemView) -> None:
    """What is judged: instructions, prompt, images, criteria and reference, and the answer(s)."""
    if view.instructions:
        with st.expander("Instructions", expanded=False):
            render_markdown(view.instructions)
    render_item_context(view, reviews.image_bytes, 'Image {n} cannot be shown; tick "can\'t judge" if you need it.')
    st.html(_ANCHOR.format(id=ANSWER_ANCHOR))
    st.markdown("##### " + ("Answers" if len(view.outputs) > 1 else "Answer to judge"))
    render_outputs(view.outputs, key=item_key(view.assignment_id))


def _conflict(engine: Engine, person: Person, view: ReviewItemView, message: str) -> None:
    """A submit refused because the answer was saved from another tab meanwhile: say so above the form (which
    still holds this tab's answers) and ask which of the two to keep."""
    with st.container(key="answer_conflict"):
        st.warning(markdown_literal(message), icon=":material/sync_problem:")
        st.caption("Saved there: " + saved_summary(view))
        with st.container(horizontal=True):
            st.button("Keep the saved answer", key="conflict_keep", on_click=_keep_saved, args=(engine, person, view))
            st.button(
                "Save this form instead",
                key="conflict_replace",
                type="primary",
                on_click=lambda: _save(engine, person, collect(view), view),
            )


def _keep_saved(engine: Engine, person: Person, view: ReviewItemView) -> None:
    """ "Keep the saved answer": the form starts again from it (this tab's draft of the item is dropped)."""
    drafts.discard_draft(engine, person.id, view.assignment_id)
    forget_form(view.assignment_id)
    st.session_state.pop(CONFLICT, None)
    st.session_state["flash"] = f"Kept the answer saved in your other tab for item {view.label}; it is shown below."


def _keep_draft(engine: Engine, person: Person, assignment_id: int, form: FormState) -> None:
    """A form widget's callback: keep the form as it stands, so a refresh or a crash loses nothing (written
    in the background: choosing an answer does not wait for the database)."""
    draft = drafts.Draft(form.answers, form.comment, form.cant_judge, form.reason)
    drafts.save_draft_soon(engine, person.id, assignment_id, draft)


def _open_previous(engine: Engine, person: Person, current: int | None) -> None:
    """The "Previous item" button's callback (key B): open the finished item before this one."""
    batch_id = int(st.session_state["batch_id"])
    previous = finished_items.previous_item(engine, batch_id, person.id, current)
    if previous is None:
        st.session_state["no_previous"] = True
    else:
        st.session_state["assignment_id"] = previous


def _save(engine: Engine, person: Person, submission: Submission, view: ReviewItemView) -> None:
    """The submit button's callback (runs before the script): save, then let the run draw the next item."""
    if submission.cant_judge is None:
        missing = [d for d in view.dimensions if d.name not in submission.answers]
        if missing:
            # Named as the reviewer reads them on the form, and marked there; nothing is sent.
            words = "; ".join(reviews.question_words(d) for d in missing)
            st.session_state["form_error"] = (submission.assignment_id, f"Please answer: {words}.")
            st.session_state["form_missing"] = (submission.assignment_id, [d.name for d in missing])
            st.session_state[REFUSALS] = int(st.session_state.get(REFUSALS, 0)) + 1
            return
    try:
        # The sign-in is checked again at the moment of saving: a sign-in ended meanwhile saves nothing.
        token = st.query_params.get(signin.SESSION_PARAM)
        signed_in = authenticate_session(engine, token, signin.browser_id(), require_browser=signin.browser_required())
        if signed_in.id != person.id:
            raise AuthError("You are signed in as someone else in this tab; reload the page.")
        # This run's sign-in check is the one just made: app.main takes it instead of asking the database
        # again a few milliseconds later. One-shot, and valid only for this same token.
        st.session_state[SIGNIN_CHECKED] = (hash_token(token or ""), signed_in)
        reviews.submit_review(
            engine,
            person.id,
            submission.assignment_id,
            submission.answers,
            comment=submission.comment,
            cant_judge=submission.cant_judge,
            saved_at=view.saved_at,
        )
    except AnswerChangedError as exc:
        # Stay on the item with this form's answers as they are, and ask which answer to keep.
        st.session_state[CONFLICT] = (submission.assignment_id, str(exc))
        st.session_state["assignment_id"] = submission.assignment_id
        return
    except SlotTakenError as exc:
        # The item is no longer this reviewer's: say what happened at the top of whatever page comes next.
        st.session_state["flash_warning"] = str(exc)
        st.session_state.pop("assignment_id", None)
        return
    except BlindReviewError as exc:
        st.session_state["form_error"] = (submission.assignment_id, str(exc))
        st.session_state[REFUSALS] = int(st.session_state.get(REFUSALS, 0)) + 1
        return
    # submit_review has committed when it returns: only now is "Saved" true.
    st.session_state["flash"] = f"Saved item {view.label}."
    st.session_state.pop("assignment_id", None)
    st.session_state.pop(CONFLICT, None)


def _previous_items(engine: Engine, batch_id: int, person: Person, current: int | None) -> None:
    """Every finished item of the batch, a page at a time, numbered as the progress bar counts them."""
    key = f"previous_page_{batch_id}"
    listing = finished_items.previous_items(engine, batch_id, person.id, int(st.session_state.get(key, 0)), PER_PAGE)
    if not listing.total:
        return
    with st.expander(f"Your previous items ({listing.total}) — open one to revise your answer"):
        if listing.pages > 1:
            newer, where, older = st.columns([1, 2, 1], vertical_alignment="center")
            newer.button(
                "Newer",
                icon=":material/chevron_left:",
                disabled=listing.page == 0,
                on_click=lambda: st.session_state.__setitem__(key, listing.page - 1),
                key="previous_newer",
            )
            first, last = listing.items[0].place, listing.items[-1].place
            where.caption(f"Page {listing.page + 1} of {listing.pages} · items {first} to {last}, newest first")
            older.button(
                "Older",
                icon=":material/chevron_right:",
                disabled=listing.page >= listing.pages - 1,
                on_click=lambda: st.session_state.__setitem__(key, listing.page + 1),
                key="previous_older",
            )
        labels = {
            q.assignment_id: f"#{q.place} · item {q.label} · "
            + ("can't judge" if q.status == AssignmentStatus.SKIPPED else "done")
            + (f" · {q.snippet}" if q.snippet else "")
            for q in listing.items
        }
        ids = list(labels)
        pick = st.selectbox("Item", ids, format_func=lambda i: markdown_literal(labels[i]), key="revise_pick")
        if st.button("Open", disabled=pick == current):
            st.session_state["assignment_id"] = pick
            st.rerun()
