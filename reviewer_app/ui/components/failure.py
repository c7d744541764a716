"""One clear message for anything that goes wrong on our side, with the details in the server's log.

A page never shows a traceback, a database address or an exception's text to the person using it: they
cannot act on it, and it tells an outsider how the server is built. They get one sentence and an error id;
the log has the same id with the whole traceback, so an admin can find it.
"""

from __future__ import annotations

import logging
import secrets

import streamlit as st

log = logging.getLogger("reviewer_app.errors")

MESSAGE = (
    "Something went wrong on our side; your saved answers are safe. Try again in a minute; if it keeps "
    "happening, tell your admin (error id {error_id})."
)


def show_unexpected_error(exc: BaseException) -> str:
    """Log ``exc`` with a new error id and show the clear message; returns the id."""
    error_id = secrets.token_hex(4)
    log.error("unexpected error %s: %s", error_id, type(exc).__name__, exc_info=exc)
    st.error(MESSAGE.format(error_id=error_id), icon=":material/error:")
    return error_id
