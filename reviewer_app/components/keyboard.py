"""Number keys for scores, arrows to move between questions; each new item starts scrolled to its top.

Streamlit has no key bindings for radio buttons, so a tiny same-origin component listens on the page and
clicks the matching option, or the form's submit button for Enter. Keys typed into a text box are ignored
(Enter in the one-line "why not?" box submits, as in any Streamlit form). Streamlit's own button shortcut
is not used for Enter: it does not fire while a radio button has the focus, which is exactly when a
keyboard user presses it.
"""

from __future__ import annotations

import streamlit as st

KEYS_HELP = (
    "Keyboard: **1–9** answer the highlighted question and move to the next · **↑ / ↓** change "
    "question · **Enter** submits · keys are ignored while you type in a text box."
)

_SCRIPT = """
<script>
(function () {
  const P = window.parent, D = P.document, ITEM = %(item)d;
  if (P.__brKeys) { D.removeEventListener("keydown", P.__brKeys, true); }
  const groups = () => Array.from(D.querySelectorAll('[data-testid="stForm"] [role="radiogroup"]'));
  const firstOpen = (gs) => { const i = gs.findIndex(g => !g.querySelector("input:checked")); return i < 0 ? 0 : i; };
  const mark = (gs) => gs.forEach((g, i) => {
    g.style.outline = i === P.__brActive ? "2px solid #4a78b5" : "";
    g.style.outlineOffset = "4px"; g.style.borderRadius = "4px";
  });
  if (P.__brItem !== ITEM) {
    // A new item (after Submit, or a revised one opened) starts at its top, prompt in view: otherwise the
    // page keeps the old scroll position and the reviewer sees a new answer under an identical-looking form.
    [P.document.scrollingElement, D.querySelector('[data-testid="stMain"]'),
     D.querySelector('[data-testid="stAppViewContainer"]')].forEach(el => { if (el) el.scrollTop = 0; });
  }
  P.__brItem = ITEM; P.__brActive = null;
  P.__brKeys = function (e) {
    const t = e.target, tag = ((t && t.tagName) || "").toLowerCase();
    const typing = tag === "textarea" || tag === "select" || (tag === "input" && t.type !== "radio");
    if (typing || (t && t.isContentEditable)) return;
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    const gs = groups();
    if (!gs.length) return;
    if (P.__brActive === null || P.__brActive >= gs.length) P.__brActive = firstOpen(gs);
    if (/^[1-9]$/.test(e.key)) {
      const options = gs[P.__brActive].querySelectorAll("label");
      const n = parseInt(e.key, 10);
      if (n > options.length) return;
      e.preventDefault(); e.stopPropagation();
      options[n - 1].click();
      if (P.__brActive < gs.length - 1) P.__brActive += 1;
      mark(gs);
    } else if (e.key === "Enter" && !(tag === "button" || tag === "a")) {
      const button = D.querySelector('[data-testid="stForm"] [data-testid="stBaseButton-primaryFormSubmit"]')
        || Array.from(D.querySelectorAll('[data-testid="stForm"] button')).pop();
      if (!button || button.disabled) return;
      e.preventDefault(); e.stopPropagation();
      // Let Streamlit record an answer chosen by a key a moment ago before the form is sent.
      setTimeout(() => button.click(), 150);
    } else if (e.key === "ArrowDown" || e.key === "ArrowUp") {
      e.preventDefault(); e.stopPropagation();
      P.__brActive = Math.max(0, Math.min(gs.length - 1, P.__brActive + (e.key === "ArrowDown" ? 1 : -1)));
      mark(gs);
      gs[P.__brActive].scrollIntoView({block: "center", behavior: "smooth"});
    }
  };
  D.addEventListener("keydown", P.__brKeys, true);
})();
</script>
"""


def install_keys(assignment_id: int) -> None:
    """Install (or re-install for a new item) the key handler on the page."""
    st.iframe(_SCRIPT % {"item": assignment_id}, height=1)
