"""What someone who is not signed in sees: how to sign in, and nothing else."""

from __future__ import annotations

import streamlit as st


def render(message: str | None = None, *, signed_out: bool = False) -> None:
    """The sign-in screen; ``message`` is why the last attempt failed (a wrong or revoked link)."""
    st.title("Blind Review")
    if signed_out:
        st.success("You are signed out. Open your sign-in link to sign in again.")
    if message:
        st.error(message)
    st.markdown(
        "Sign in by opening the personal link your admin sent you "
        "(it looks like `https://…/?token=…`). Keep the link private: it signs you in."
    )
