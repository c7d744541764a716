"""`blind-review`: build the parser from the command groups, parse the arguments, run the command's handler.

Every command lives in one group module (:data:`COMMAND_GROUPS`), whose ``register`` adds it with
``_common.add_command``; this module defines none, so a new command goes in its group, and the order of the
groups here is the order of ``blind-review --help``. Every error a user can cause is a
:class:`~reviewer_app.errors.BlindReviewError`: it is printed as its message (one line, or a list of located
problems for a bad file; a bad argument named by its ``--flag``, see :func:`._common.flag_for`) and the command exits 1
(``_common.guarded``). Anything else is a bug and shows a trace. Logging goes to standard error at
``BLIND_REVIEW_LOG_LEVEL`` (see ``settings``).
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
from collections.abc import Sequence
from typing import Protocol

from reviewer_app.cli import (
    batches,
    compare,
    database,
    feedback,
    generation,
    history,
    judge,
    people,
    plan,
    ratings,
    report,
    review,
    serve,
    webhooks,
)
from reviewer_app.cli._common import Handler, Subparsers, guarded
from reviewer_app.settings import configure_logging

__all__ = ["COMMAND_GROUPS", "build_parser", "main"]


class CommandGroup(Protocol):
    """A module of ``cli/`` with its commands: ``register`` adds them, in the order ``--help`` lists them."""

    def register(self, subparsers: Subparsers) -> None: ...


# The order of `blind-review --help`: setting up, batches, people, running a review, ratings files, the app,
# the leads' reading (one batch, two, a model over many, production), and making batch files with models.
COMMAND_GROUPS: tuple[CommandGroup, ...] = (
    database,
    batches,
    people,
    review,
    ratings,
    serve,
    report,
    plan,
    compare,
    history,
    feedback,
    webhooks,
    generation,
    judge,
)


def build_parser() -> argparse.ArgumentParser:
    """The ``blind-review`` parser: each command group's commands, group after group."""
    parser = argparse.ArgumentParser(
        prog="blind-review",
        description="Blind expert review of LLM outputs. The database is BLIND_REVIEW_DATABASE_URL "
        "(default: SQLite in BLIND_REVIEW_DATA_DIR, ./data).",
    )
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for group in COMMAND_GROUPS:
        group.register(subparsers)
    return parser


def _run(args: argparse.Namespace) -> int:
    """Set up logging, then run the command: a bad ``BLIND_REVIEW_LOG_LEVEL`` is a user's error like any other."""
    configure_logging()
    handler: Handler = args.handler
    return handler(args)


SIGPIPE_STATUS = 128 + signal.SIGPIPE if hasattr(signal, "SIGPIPE") else 1
"""The exit status of a command whose reader went away (``blind-review export-ratings b | head``): what a shell
reports for a Unix tool ended by SIGPIPE (141)."""


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``blind-review ARGV`` and return its exit status; the database's connections are closed after.

    A reader that stops early (``| head``) ends the command quietly, as it ends a Unix tool: no trace, the
    rest of the output dropped, exit status :data:`SIGPIPE_STATUS`. Standard output is flushed here, so
    that a reader gone is found while it can still be answered, not by Python's flush at exit."""
    try:
        try:
            args = build_parser().parse_args(argv)
        except SystemExit:  # --help printed (or a usage error): its text must reach the reader too
            sys.stdout.flush()
            raise
        try:
            status = guarded(_run)(args)
        finally:
            from storage.engine import dispose_engines

            dispose_engines()
        sys.stdout.flush()
    except BrokenPipeError:
        _drop_stdout()
        return SIGPIPE_STATUS
    return status


def _drop_stdout() -> None:
    """Point standard output at the null device, so that what is still buffered for the reader that left is
    not written again (and failed again, with a trace) when Python flushes at exit."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):  # not a file (a test's capture): nothing is flushed at exit
        pass
