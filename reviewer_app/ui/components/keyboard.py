"""Keys for the review form; each new item starts scrolled to its top.

Streamlit has no key bindings for radio buttons, so a tiny same-origin component listens on the page and
clicks the matching option, the submit button for Enter, the "can't judge" box for X and the "Previous
item" button for B. Keys typed into a text box are text, not commands (Enter in the one-line "why not?"
box submits). The arrow keys, Page Up/Down and the space bar are left to the browser: they scroll the page,
as everywhere else (they used to move a highlight, and the first ↓ jumped to the form). The highlighted
question is outlined from the start, clicking into a question moves the highlight there, and a submit refused
for an unanswered question moves it to the first one missing. Streamlit's
own button shortcut is not used for Enter: it does not fire while a radio button has the focus, which is
exactly when a keyboard user presses it.
"""

from __future__ import annotations

import json

import streamlit as st

from reviewer_app.ui.components.rating_form import FORM_KEY, SUBMIT_KEY

PREVIOUS_KEY = "previous_item"  # the page's "Previous item" button

KEYS_HELP = (
    "Keyboard: **1–9** answer the outlined question and move to the next · **J / K** next / previous "
    "question · **X** can't judge · **C** comment · **B** previous item · **Enter** submits · arrow keys "
    "scroll · keys are ignored while you type in a text box."
)

_SCRIPT = """
<script>
(function () {
  const P = window.parent, D = P.document, ITEM = %(item)s, REFUSAL = %(refusal)d, MISSING = %(missing)d;
  const FORM = ".st-key-%(form)s", SUBMIT = ".st-key-%(submit)s button", PREVIOUS = ".st-key-%(previous)s button";
  if (P.__brKeys) { D.removeEventListener("keydown", P.__brKeys, true); }
  if (P.__brClick) { D.removeEventListener("click", P.__brClick, true); }
  const groups = () => Array.from(D.querySelectorAll(FORM + ' [role="radiogroup"]'));
  const firstOpen = (gs) => { const i = gs.findIndex(g => !g.querySelector("input:checked")); return i < 0 ? 0 : i; };
  const mark = () => groups().forEach((g, i) => {
    g.classList.toggle("br-active", i === P.__brActive);
  });
  const visible = (el) => { const r = el.getBoundingClientRect(); return r.top >= 0 && r.bottom <= P.innerHeight; };
  if (P.__brItem !== undefined && P.__brItem !== ITEM) {
    // A new item (after Submit, or a revised one opened) starts at its top, prompt in view: otherwise the
    // page keeps the old scroll position and the reviewer sees a new answer under an identical-looking form.
    // Not on the page's first load: it starts at the top anyway, and this script may load a moment after a
    // reviewer has begun to scroll.
    [P.document.scrollingElement, D.querySelector('[data-testid="stMain"]'),
     D.querySelector('[data-testid="stAppViewContainer"]')].forEach(el => { if (el) el.scrollTop = 0; });
  }
  if (P.__brItem !== ITEM) {
    P.__brActive = null;
    // A new item after the batch picker was used: the focus would stay in the picker's box, where keys are
    // typed text (issue 27). Hand them back to the page.
    const a = D.activeElement;
    if (a && a.closest && a.closest('[data-testid="stSelectbox"]')) a.blur();
  }
  P.__brItem = ITEM;
  // Phones: the "Go to your judgement" button hides while the form is in view (it would cover it).
  if (P.__brSeen) P.__brSeen.disconnect();
  if (P.IntersectionObserver) {
    P.__brSeen = new P.IntersectionObserver((es) => es.forEach(e => D.body.classList.toggle("br-form-in-view",
      e.isIntersecting)));
    const watch = () => { const f = D.querySelector(FORM); if (f) P.__brSeen.observe(f); else setTimeout(watch, 100); };
    watch();
  }
  // A submit refused for a question left unanswered: the outline moves to the first one missing, once per
  // refusal (this script runs again only when its text changes; the refusal's number changes it).
  const fresh = REFUSAL > 0 && P.__brRefusal !== REFUSAL, jump = fresh && MISSING >= 0;
  if (REFUSAL > 0) P.__brRefusal = REFUSAL;
  const start = () => {
    // Outline a question from the start: the first unanswered one.
    const gs = groups();
    if (!gs.length) { setTimeout(start, 100); return; }
    if (jump && MISSING < gs.length) P.__brActive = MISSING;
    if (P.__brActive === null || P.__brActive >= gs.length) P.__brActive = firstOpen(gs);
    mark();
    if (jump && !visible(gs[P.__brActive])) gs[P.__brActive].scrollIntoView({block: "nearest"});
    // ... and the refusal's "Please answer: ..." (just above the button) is brought into view, last.
    const refused = D.querySelector(FORM + " .st-key-form_error");
    if (fresh && refused) refused.scrollIntoView({block: "nearest"});
  };
  start();
  P.__brClick = function (e) {
    const link = e.target && e.target.closest && e.target.closest("a.br-jump, a.br-back");
    if (link) {  // the phone's jump to the form and back: scroll there without touching the address
      const to = D.getElementById(link.getAttribute("href").slice(1));
      if (to) { e.preventDefault(); to.scrollIntoView({block: "start"}); }
      return;
    }
    const g = e.target && e.target.closest && e.target.closest(FORM + ' [role="radiogroup"]');
    if (!g) return;
    const i = groups().indexOf(g);
    if (i >= 0) { P.__brActive = i; mark(); }
  };
  D.addEventListener("click", P.__brClick, true);
  const press = (selector, delay) => {
    const button = D.querySelector(selector);
    if (!button || button.disabled) return false;
    // Let Streamlit record an answer chosen by a key a moment ago before the button is sent.
    setTimeout(() => button.click(), delay);
    return true;
  };
  P.__brKeys = function (e) {
    const t = e.target, tag = ((t && t.tagName) || "").toLowerCase();
    const typing = tag === "textarea" || tag === "select"
      || (tag === "input" && t.type !== "radio" && t.type !== "checkbox");
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    if (typing || (t && t.isContentEditable)) {
      if (e.key === "Enter" && tag === "input" && t.type === "text" && t.closest(FORM)) press(SUBMIT, 300);
      return;
    }
    if ((e.key === "ArrowDown" || e.key === "ArrowUp") && tag === "input" && t.type === "radio") {
      // A radio button has the focus after a click: ↑/↓ would silently change that answer. Scroll instead.
      e.preventDefault(); e.stopPropagation();
      const dy = e.key === "ArrowDown" ? 40 : -40;
      [D.querySelector('[data-testid="stMain"]'), D.scrollingElement].forEach(el => { if (el) el.scrollBy(0, dy); });
      return;
    }
    const gs = groups();
    if (P.__brActive === null || P.__brActive >= gs.length) P.__brActive = firstOpen(gs);
    const k = e.key.length === 1 ? e.key.toLowerCase() : e.key;
    if (/^[1-9]$/.test(k) && gs.length) {
      const options = gs[P.__brActive].querySelectorAll("label");
      const n = parseInt(k, 10);
      if (n > options.length) return;
      e.preventDefault(); e.stopPropagation();
      options[n - 1].click();
      if (P.__brActive < gs.length - 1) P.__brActive += 1;
      mark();
      if (!visible(gs[P.__brActive])) gs[P.__brActive].scrollIntoView({block: "nearest"});
    } else if ((k === "j" || k === "k") && gs.length) {
      e.preventDefault(); e.stopPropagation();
      P.__brActive = Math.max(0, Math.min(gs.length - 1, P.__brActive + (k === "j" ? 1 : -1)));
      mark();
      if (!visible(gs[P.__brActive])) gs[P.__brActive].scrollIntoView({block: "nearest"});
    } else if (k === "Enter" && !(tag === "button" || tag === "a")) {
      if (press(SUBMIT, 150)) { e.preventDefault(); e.stopPropagation(); }
    } else if (k === "x") {
      const box = D.querySelector(FORM + ' [data-testid="stCheckbox"] input');
      if (!box || box.disabled) return;
      e.preventDefault(); e.stopPropagation();
      if (!box.checked) box.click();
      // The reason box appears once Streamlit has seen the tick: wait for it (at most a few seconds).
      let tries = 0;
      const focusReason = () => {
        const reason = D.querySelector(FORM + ' [data-testid="stTextInput"] input');
        if (reason) reason.focus(); else if (tries++ < 60) setTimeout(focusReason, 50);
      };
      focusReason();
    } else if (k === "c") {
      const comment = D.querySelector(FORM + " textarea");
      if (!comment || comment.disabled) return;
      e.preventDefault(); e.stopPropagation();
      comment.focus();
    } else if (k === "b") {
      if (press(PREVIOUS, 0)) { e.preventDefault(); e.stopPropagation(); }
    }
  };
  D.addEventListener("keydown", P.__brKeys, true);
})();
</script>
"""

# The outline of the highlighted question, in the page's styles (a class survives Streamlit redrawing the
# question, where an inline style set from the script could be lost).
STYLES = (
    f'<style>.st-key-{FORM_KEY} [role="radiogroup"].br-active '
    "{ outline: 2px solid #4a78b5; outline-offset: 4px; border-radius: 4px; }</style>"
)


def install_keys(item: str, *, refusal: int = 0, missing: int | None = None) -> None:
    """Install (or re-install for a new item) the key handler on the page.

    After a submit refused for unanswered questions, ``refusal`` numbers that refusal (a new number for each
    one) and ``missing`` is the place of the first unanswered question among the form's choice questions
    (:func:`reviewer_app.ui.components.rating_form.first_missing_choice`): the outline moves there."""
    script = _SCRIPT % {
        "item": json.dumps(item),  # the item's opaque key (components.item_keys), never its id
        "refusal": refusal,
        "missing": -1 if missing is None else missing,
        "form": FORM_KEY,
        "submit": SUBMIT_KEY,
        "previous": PREVIOUS_KEY,
    }
    st.iframe(script, height=1)
