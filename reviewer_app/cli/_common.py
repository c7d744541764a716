"""What every command group of the CLI shares, so that each group only says what its commands do.

- :func:`add_command` is the one way a command is added: its help and ``--help`` page formatted alike, and
  its handler wrapped in :func:`guarded`, the one error handling of the CLI.
- :func:`open_engine` is the one way a command opens the database.
- :func:`print_lines` and :func:`write_or_print` are how results reach the terminal or a file.

Imported by ``cli.main`` and by each command module, never the other way round: the command modules import
nothing of each other or of ``main``, so they form no circle and any of them can be registered on its own
(the generation tests register ``cli.generation`` into a parser of their own)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterable
from functools import wraps
from pathlib import Path
from typing import TYPE_CHECKING, TypeAlias

from reviewer_app.errors import BlindReviewError, ValidationError

if TYPE_CHECKING:
    from sqlalchemy.engine import Engine

Handler: TypeAlias = Callable[[argparse.Namespace], int]
"""A command: the parsed arguments in, the exit status out."""

Subparsers: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"
"""What ``add_subparsers()`` returns; each command group's ``register`` adds its commands to it."""

HelpFormatter = argparse.RawDescriptionHelpFormatter
"""Every ``--help`` page keeps its description's line breaks (the examples are laid out by hand)."""

# Service parameters that are positional arguments here, not --flags.
_POSITIONAL = {"paths": "PATH", "batch": "BATCH", "file": "FILE"}


def flag_for(parameter: str) -> str:
    """How the CLI names a service parameter in messages: ``on_leak`` is ``--on-leak``.

    Services word a bad argument by its parameter so that each front end can name it its own way."""
    return _POSITIONAL.get(parameter) or "--" + parameter.replace("_", "-")


def guarded(handler: Handler) -> Handler:
    """``handler``, with every error a user can cause printed as one message on stderr and exit status 1.

    A :class:`BlindReviewError` is the user's to fix, so it gets its message and no trace (a bad file gets
    its list of located problems, a bad argument its ``--flag``); anything else is a bug and shows a trace.
    Applied to every command by :func:`add_command`, so a command reports its errors the same way however it
    is run (by ``main``, or by a test that registers one command group into a parser of its own)."""

    @wraps(handler)
    def run(args: argparse.Namespace) -> int:
        try:
            return handler(args)
        except ValidationError as exc:
            print(f"error: {exc.worded(flag_for)}", file=sys.stderr)
            return 1
        except BlindReviewError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 1

    return run


def add_command(
    subparsers: Subparsers, name: str, handler: Handler, *, help: str, description: str
) -> argparse.ArgumentParser:
    """Add the command ``name``, run by ``handler`` (guarded), and return its parser for the arguments.

    ``help`` is the one line in ``blind-review --help`` (written as it reads: a ``%`` is escaped here, since
    argparse %-formats help strings); ``description`` heads ``blind-review NAME --help``, laid out as written,
    and shows an example (see :func:`with_examples`)."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        name, help=help.replace("%", "%%"), description=description, formatter_class=HelpFormatter
    )
    parser.set_defaults(handler=guarded(handler))
    return parser


def add_request_options(parser: argparse.ArgumentParser, *, in_flight: str) -> None:
    """The options of every command that calls model endpoints (``generate``, ``rerun``, ``judge``): requests
    in flight (``in_flight`` says per what), retries, the timeout of one attempt, and no progress bars."""
    parser.add_argument("--concurrency", type=int, default=8, help=f"requests in flight {in_flight}(default 8)")
    parser.add_argument("--retries", type=int, default=4, help="retries on 429, 5xx, dropped connections (default 4)")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds per request attempt (default 300)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bars (e.g. in CI logs)")


def with_examples(text: str, *examples: str) -> str:
    """A ``--help`` description: ``text``, then ``Example:`` and one indented command line per example."""
    return f"{text}\n\nExample:\n  " + "\n  ".join(examples)


def open_engine() -> Engine:
    """The configured database (``BLIND_REVIEW_DATABASE_URL``), migrated to the current schema.

    Every command that reads or writes the database opens it here, so every one of them migrates first.
    Imports lazily: ``blind-review --help`` must not pay for SQLAlchemy and the migrations."""
    from reviewer_app.settings import database_url
    from storage.engine import get_engine
    from storage.migrate import migrate

    engine = get_engine(database_url())
    migrate(engine)
    return engine


def names_list(text: str | None) -> list[str]:
    """The names of a comma-separated option (``--reviewers ana,ben``), blanks dropped."""
    return [n.strip() for n in (text or "").split(",") if n.strip()]


def print_lines(lines: Iterable[str]) -> None:
    """Print a service's summary (``result.lines()``) as it wrote it, one line each."""
    print("\n".join(lines))


def write_or_print(
    out: str | None, default: str, render: Callable[[], str], write: Callable[[Path], object]
) -> Path | None:
    """Where a report-like command's ``--out`` goes: ``-`` writes ``render()`` to standard output (and gives
    None: nothing more may be printed there), a path (or ``default`` without ``--out``) is written by
    ``write`` and returned, for the command's one line saying what it wrote."""
    if out == "-":
        sys.stdout.write(render())
        return None
    path = Path(out) if out else Path(default)
    write(path)
    return path
