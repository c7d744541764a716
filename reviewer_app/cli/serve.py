"""The commands that run the web app: ``serve`` it, or set up the ``demo`` (its batches and people) and serve
that.

Together because the demo ends by serving, with the same ``--port`` and ``--host``."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from reviewer_app.cli._common import Subparsers, add_command, open_engine, with_examples


def cmd_serve(args: argparse.Namespace) -> int:
    """Become the Streamlit server for the review app (this process is replaced; it never returns).

    A bad upload setting stops here, before anything starts; a database that is down does not (see below)."""
    from sqlalchemy.exc import InterfaceError, OperationalError

    from reviewer_app.settings import max_upload_mb

    upload_mb = max_upload_mb()  # a bad setting stops here, with its name, before anything starts
    try:
        open_engine()
    except (OperationalError, InterfaceError) as exc:
        # A database that is down now may be up in a minute: serve anyway (pages say "try again" and log the
        # details) rather than exit, which a supervisor would only restart in a loop.
        print(f"warning: the database is not reachable ({type(exc).__name__}); serving anyway", file=sys.stderr)
    # server.py serves app.py through Streamlit's st.App with our guard in front (reviewer_app.ui.http_guard).
    server = Path(__file__).resolve().parents[1] / "ui" / "server.py"
    cmd = [
        sys.executable,
        "-m",
        "streamlit",
        "run",
        str(server),
        "--server.port",
        str(args.port),
        "--server.address",
        args.host,
        "--server.headless",
        "true",
        "--browser.gatherUsageStats",
        "false",
        "--server.fileWatcherType",
        "none",
        "--client.toolbarMode",
        "viewer",
        "--server.showEmailPrompt",
        "false",
        # Never a traceback on a page: pages show one clear message and log the details.
        "--client.showErrorDetails",
        "none",
        "--server.maxUploadSize",
        str(upload_mb),
        "--server.enableXsrfProtection",
        "true",
        # The agent API drives sessions without the browser cookie sign-ins are bound to, and past the upload
        # guard: off, whatever a config file or environment variable says.
        "--server.enableAgentApi",
        "false",
    ]
    os.environ.setdefault(
        "BLIND_REVIEW_PUBLIC_URL", f"http://{args.host if args.host != '0.0.0.0' else 'localhost'}:{args.port}"
    )
    sys.stdout.flush()
    # Become Streamlit rather than wait for a child: a supervisor's SIGTERM (systemd, Docker, a load balancer's
    # orchestrator) then reaches the server itself instead of leaving an orphan behind.
    from storage.engine import dispose_engines

    dispose_engines()
    os.execv(sys.executable, cmd)


def cmd_demo(args: argparse.Namespace) -> int:
    """Load the demo batches, create the demo people, print their sign-in links, then serve (unless
    ``--no-serve``). The links carry the public URL, so it is set before the people are made."""
    from reviewer_app.demo.seed import seed_demo

    host = args.host if args.host != "0.0.0.0" else "localhost"
    os.environ.setdefault("BLIND_REVIEW_PUBLIC_URL", f"http://{host}:{args.port}")
    people = seed_demo(open_engine())
    print(
        "Demo batches 'demo' (rating), 'demo-pairwise' and 'demo-v2' (a follow-up round of 'demo': leads compare "
        "the two under Compare versions) are loaded, and 'demo-judged', where a recorded LLM judge rated every "
        "answer and the panel half the samples (its results have a Judge vs panel tab). Sign-in links (new on "
        "every run):"
    )
    for person in people:
        print(f"  {person.role:<8} {person.name:<17} {person.link}")
    if args.no_serve:
        return 0
    print(f"Serving on http://{host}:{args.port} (Ctrl-C to stop)", flush=True)
    return cmd_serve(args)


def register(subparsers: Subparsers) -> None:
    """Add ``serve`` and ``demo``, in that order."""
    help_text = "Serve the review app (Streamlit)."
    p = add_command(
        subparsers,
        "serve",
        cmd_serve,
        help=help_text,
        description=with_examples(help_text, "blind-review serve --port 8501"),
    )
    p.add_argument("--port", type=int, default=8501)
    p.add_argument("--host", default="127.0.0.1")

    help_text = "Load the demo batch, create demo people, print their sign-in links and serve."
    p = add_command(
        subparsers,
        "demo",
        cmd_demo,
        help=help_text,
        description=with_examples(help_text, "blind-review demo --port 8501"),
    )
    p.add_argument("--port", type=int, default=8501)
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--no-serve", action="store_true", help="set up the demo and print the links, but do not serve")
