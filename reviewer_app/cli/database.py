"""``blind-review init``: create or upgrade the database, before anything else is run against it.

Its own group because it is about the database itself rather than any batch or person; every other command
migrates the database too when it opens it (``_common.open_engine``), so ``init`` is the explicit first step
and the way to check which database the settings point at."""

from __future__ import annotations

import argparse

from reviewer_app.cli._common import Subparsers, add_command, open_engine, with_examples


def cmd_init(args: argparse.Namespace) -> int:
    """Migrate the configured database and say which one it is (its password hidden)."""
    from reviewer_app.settings import database_url

    open_engine()
    print(f"Database ready: {_safe_url(database_url())}")
    return 0


def _safe_url(url: str) -> str:
    """``url`` without its password: the line is printed, and may be pasted into a ticket."""
    from sqlalchemy.engine import make_url

    return make_url(url).render_as_string(hide_password=True)


def register(subparsers: Subparsers) -> None:
    """Add ``init``."""
    help_text = "Create or upgrade the database schema."
    add_command(subparsers, "init", cmd_init, help=help_text, description=with_examples(help_text, "blind-review init"))
