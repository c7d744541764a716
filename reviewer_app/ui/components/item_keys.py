"""Per-session opaque names for the items on a reviewer's page.

Widget keys reach the browser (as element ids and CSS classes, and in the websocket's frames), and so does
the key handler's script. An assignment id there would count rows: it tells a reviewer their rank in the
plan and how many showings were made before theirs. Instead every item is named by an HMAC of its id under
a random key made for this browser session, kept in the session state: stable while the session lives (the
widgets keep their values across reruns), different in every session, and saying nothing about the id.
"""

from __future__ import annotations

import hmac
import secrets

import streamlit as st

_SESSION_KEY = "item_key_salt"


def item_key(assignment_id: int) -> str:
    """This session's opaque name for an item (``"i"`` and 16 hex digits)."""
    salt = st.session_state.get(_SESSION_KEY)
    if not isinstance(salt, bytes):
        salt = secrets.token_bytes(16)
        st.session_state[_SESSION_KEY] = salt
    return "i" + hmac.digest(salt, str(assignment_id).encode(), "sha256")[:8].hex()
