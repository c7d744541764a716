"""`blind-review`: parse arguments, call one service, print the result.

Every error a user can cause is a :class:`BlindReviewError`: it is printed as its message (one line, or a
list of located problems for a bad file) and the command exits 1. Anything else is a bug and shows a trace.
Services word a bad argument by its parameter (``on_leak``); :func:`main` names it by its flag
(``--on-leak``). Logging goes to standard error at ``BLIND_REVIEW_LOG_LEVEL`` (see ``settings``).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from reviewer_app.cli._common import open_engine
from reviewer_app.cli.generation import register as register_generation_commands
from reviewer_app.domain.enums import OnLeak, Role
from reviewer_app.errors import BlindReviewError, ConflictError, Problem, ValidationError
from reviewer_app.settings import configure_logging

if TYPE_CHECKING:
    pass

Handler = Callable[[argparse.Namespace], int]

# Service parameters that are positional arguments here, not --flags.
_POSITIONAL = {"paths": "PATH", "batch": "BATCH", "file": "FILE"}


class _Formatter(argparse.RawDescriptionHelpFormatter):
    pass


def _command(
    sub: argparse._SubParsersAction[argparse.ArgumentParser], name: str, help_text: str, example: str, handler: Handler
) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = sub.add_parser(
        name, help=help_text, description=f"{help_text}\n\nExample:\n  {example}", formatter_class=_Formatter
    )
    parser.set_defaults(handler=handler)
    return parser


def cmd_init(args: argparse.Namespace) -> int:
    from reviewer_app.settings import database_url

    open_engine()
    print(f"Database ready: {_safe_url(database_url())}")
    return 0


def _safe_url(url: str) -> str:
    from sqlalchemy.engine import make_url

    return make_url(url).render_as_string(hide_password=True)


def cmd_load_batch(args: argparse.Namespace) -> int:
    from reviewer_app.batches.loading import load_batch

    summary = load_batch(
        open_engine(),
        [Path(p) for p in args.paths],
        None if args.rubric is None else Path(args.rubric),
        name=args.name,
        on_leak=args.on_leak,
        progress=sys.stderr.isatty() or args.progress,
        follow_up=args.follow_up,
        anchor_share=args.anchor_share,
    )
    print("\n".join(summary.lines()))
    return 0


def cmd_list_batches(args: argparse.Namespace) -> int:
    from reviewer_app.batches.admin import batch_table

    rows = batch_table(open_engine(), archived=args.archived)
    if not rows:
        print("No archived batches." if args.archived else "No batches yet. Load one with `blind-review load-batch`.")
        return 0
    print(
        f"{'id':>4}  {'name':<24} {'mode':<9} {'status':<7} {'k':>2} {'samples':>8} {'outputs':>8} "
        f"{'items':>7} {'done':>7} {'ratings':>8}  models (outputs)  follow-up of"
    )
    for row in rows:
        b, c = row.batch, row.counts
        print(
            f"{b.id:>4}  {b.name:<24} {b.mode:<9} {b.status:<7} {b.overlap:>2} {c.samples:>8} {c.outputs:>8} "
            f"{c.items:>7} {c.done:>7} {c.ratings:>8}  {row.models_text}  {row.follow_up_of or '-'}"
        )
    return 0


def cmd_leaks(args: argparse.Namespace) -> int:
    from reviewer_app.batches.leak_list import batch_leaks, write_leaks

    entries = batch_leaks(open_engine(), args.batch)
    write_leaks(entries, args.format, sys.stdout)
    print(f"{len(entries)} output(s) of {args.batch!r} name a model or vendor", file=sys.stderr)
    return 0


def cmd_archive_batch(args: argparse.Namespace) -> int:
    from reviewer_app.batches.admin import archive_batch, restore_batch

    if args.command == "archive-batch":
        batch = archive_batch(open_engine(), args.batch)
        print(f"Batch {batch.name!r} is archived: closed and out of every list (restore-batch brings it back).")
    else:
        batch = restore_batch(open_engine(), args.batch)
        print(f"Batch {batch.name!r} is back in the lists, closed (open-batch {batch.name} opens it).")
    return 0


def cmd_set_titles(args: argparse.Namespace) -> int:
    from reviewer_app.batches.admin import batch_titles, set_titles

    engine = open_engine()
    scenarios: dict[str, str] = {}
    for pair in args.scenario:
        scenario, sep, title = pair.partition("=")
        if not sep or not scenario:
            raise ValidationError(
                [Problem.argument("scenario", f"write NAME=TITLE (NAME= clears a title), not {pair!r}")]
            )
        scenarios[scenario] = title
    if args.display_name is None and not scenarios:
        rows = batch_titles(engine, args.batch)
    else:
        rows = set_titles(engine, args.batch, display_name=args.display_name, scenarios=scenarios)
    print(f"Titles reviewers see for batch {rows[0].name!r} (leads, reports and exports keep the names):")
    width = max(len(r.name) for r in rows)
    shown = max(len(r.shown) for r in rows)
    for r in rows:
        print(f"  {r.kind:<8}  {r.name:<{width}}  ->  {r.shown:<{shown}}  ({r.why})")
    return 0


def cmd_delete_batch(args: argparse.Namespace) -> int:
    from reviewer_app.batches.admin import delete_batch
    from reviewer_app.batches.loading import find_batch

    engine = open_engine()
    name = find_batch(engine, args.batch).name
    if args.yes:
        confirm = name
    elif args.confirm is not None:
        confirm = args.confirm
    elif sys.stdin.isatty():
        confirm = input(f"This deletes batch {name!r} with all its ratings, for good. Type its name to go on: ")
    else:
        raise ConflictError(
            f"deleting batch {name!r} removes its ratings for good: add --confirm {name} (or --yes) to go on"
        )
    print("\n".join(delete_batch(engine, args.batch, confirm=confirm).lines()))
    return 0


def cmd_add_reviewer(args: argparse.Namespace) -> int:
    from reviewer_app.people.people import add_reviewer

    person, link = add_reviewer(open_engine(), args.name, args.role)
    print(f"Added {person.role} {person.name!r}. Sign-in link (shown once; keep it private):\n{link}")
    return 0


def cmd_new_link(args: argparse.Namespace) -> int:
    from reviewer_app.people.people import new_link

    print(f"New sign-in link for {args.name!r} (the old one no longer works):\n{new_link(open_engine(), args.name)}")
    return 0


def cmd_revoke(args: argparse.Namespace) -> int:
    from reviewer_app.people.people import revoke

    released = revoke(open_engine(), args.name)
    print(f"Revoked {args.name!r}'s sign-in link; {released} unfinished item(s) went back to the pool.")
    return 0


def cmd_assign(args: argparse.Namespace) -> int:
    from reviewer_app.review.assignment import assign

    names = [n for n in args.reviewers.split(",") if n.strip()] if args.reviewers else None
    print("\n".join(assign(open_engine(), args.batch, names, rebalance=args.rebalance).lines()))
    return 0


def cmd_open_close(args: argparse.Namespace) -> int:
    from reviewer_app.batches.loading import set_batch_open

    batch = set_batch_open(open_engine(), args.batch, args.command == "open-batch")
    print(f"Batch {batch.name!r} is now {batch.status}.")
    return 0


def cmd_import_ratings(args: argparse.Namespace) -> int:
    from reviewer_app.ratings.files import import_ratings

    print("\n".join(import_ratings(open_engine(), args.batch, Path(args.file)).lines()))
    return 0


def cmd_export_ratings(args: argparse.Namespace) -> int:
    from reviewer_app.ratings.files import export_ratings

    n = export_ratings(
        open_engine(),
        args.batch,
        args.format,
        Path(args.out) if args.out else None,
        stream=sys.stdout if not args.out else None,
    )
    if args.out:
        print(f"Wrote {n} rows (ratings and can't-judge answers) to {args.out}", file=sys.stderr)
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
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
    from reviewer_app.demo.seed import seed_demo

    host = args.host if args.host != "0.0.0.0" else "localhost"
    os.environ.setdefault("BLIND_REVIEW_PUBLIC_URL", f"http://{host}:{args.port}")
    people = seed_demo(open_engine())
    print(
        "Demo batches 'demo' (rating), 'demo-pairwise' and 'demo-v2' (a follow-up round of 'demo': leads compare "
        "the two under Compare versions) are loaded. Sign-in links (new on every run):"
    )
    for person in people:
        print(f"  {person.role:<8} {person.name:<17} {person.link}")
    if args.no_serve:
        return 0
    print(f"Serving on http://{host}:{args.port} (Ctrl-C to stop)", flush=True)
    return cmd_serve(args)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="blind-review",
        description="Blind expert review of LLM outputs. The database is BLIND_REVIEW_DATABASE_URL "
        "(default: SQLite in BLIND_REVIEW_DATA_DIR, ./data).",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    _command(sub, "init", "Create or upgrade the database schema.", "blind-review init", cmd_init)

    p = _command(
        sub,
        "load-batch",
        "Check and load a batch of model outputs with its rubric (or as a follow-up of an earlier batch).",
        "blind-review load-batch outputs.jsonl --rubric rubric.toml --name support-v1\n"
        "  blind-review load-batch new.jsonl --follow-up support-v1 --name support-v2 --anchor-share 0.2",
        cmd_load_batch,
    )
    p.add_argument("paths", nargs="+", metavar="PATH", help="batch files: .jsonl, .csv, or AlpacaEval .json files")
    p.add_argument("--rubric", default=None, help="rubric TOML file (required unless --follow-up)")
    p.add_argument("--name", required=True, help="a name for the batch")
    p.add_argument(
        "--on-leak",
        default=OnLeak.MASK,
        choices=list(OnLeak),
        help="outputs that name a model or vendor: mask the names for reviewers (default), flag them (shown as "
        "written), exclude them from review, or fail the load",
    )
    p.add_argument("--progress", action="store_true", help="show a progress bar even when not on a terminal")
    p.add_argument(
        "--follow-up",
        default=None,
        metavar="BASELINE",
        help="a new round of the batch BASELINE: its rubric and samples, plus anchor items (the baseline's own "
        "outputs shown again blind, to measure a shift of the panel); see `blind-review compare`",
    )
    p.add_argument(
        "--anchor-share",
        type=float,
        default=0.2,
        help="with --follow-up: the share of each scenario's samples whose baseline outputs are shown again "
        "(default 0.2; 0 for none)",
    )

    p = _command(
        sub,
        "list-batches",
        "List batches with their counts and the outputs of each model.",
        "blind-review list-batches",
        cmd_list_batches,
    )
    p.add_argument("--archived", action="store_true", help="list the archived batches instead")

    p = _command(
        sub,
        "leaks",
        "List every output that names a model or vendor, as the load's scan found it.",
        "blind-review leaks support-v1 --format csv > leaks.csv",
        cmd_leaks,
    )
    p.add_argument("batch")
    p.add_argument("--format", default="csv", choices=["csv", "jsonl"])

    for name, verb in (
        ("archive-batch", "Archive a batch: closed, out of every list, every row kept."),
        ("restore-batch", "Bring an archived batch back into the lists (closed)."),
    ):
        p = _command(sub, name, verb, f"blind-review {name} support-v1", cmd_archive_batch)
        p.add_argument("batch")

    p = _command(
        sub,
        "set-titles",
        "Show or set the titles reviewers see for a batch and its scenarios (leads and reports keep the names).",
        "blind-review set-titles alpaca-claude-vicuna --display-name 'Helpfulness, round 1' "
        "--scenario vicuna='Open questions'",
        cmd_set_titles,
    )
    p.add_argument("batch")
    p.add_argument(
        "--display-name",
        metavar="TITLE",
        help="the batch's title for reviewers ('' clears it). Without a title, reviewers see the name, or "
        "'Batch <id>' when it names one of the batch's models (scenarios: 'Scenario <n>'); a title that names "
        "a model is refused",
    )
    p.add_argument(
        "--scenario",
        action="append",
        default=[],
        metavar="NAME=TITLE",
        help="a scenario's title for reviewers (NAME= clears it); repeat for several scenarios",
    )

    p = _command(
        sub,
        "delete-batch",
        "Delete a batch with its ratings, assignments, outputs and images, for good.",
        "blind-review delete-batch support-v1 --confirm support-v1",
        cmd_delete_batch,
    )
    p.add_argument("batch")
    p.add_argument("--confirm", metavar="NAME", help="the batch's name again, instead of typing it at the prompt")
    p.add_argument("--yes", action="store_true", help="delete without asking for the batch's name")

    p = _command(
        sub,
        "add-reviewer",
        "Add a person and print their one-time sign-in link.",
        "blind-review add-reviewer alice --role reviewer",
        cmd_add_reviewer,
    )
    p.add_argument("name")
    p.add_argument("--role", default=Role.REVIEWER, choices=list(Role))

    p = _command(
        sub,
        "new-link",
        "Replace a person's sign-in link (the old one stops working).",
        "blind-review new-link alice",
        cmd_new_link,
    )
    p.add_argument("name")
    p = _command(
        sub,
        "revoke",
        "Revoke a person's sign-in link and return their unfinished items to the pool.",
        "blind-review revoke alice",
        cmd_revoke,
    )
    p.add_argument("name")

    p = _command(
        sub,
        "assign",
        "Plan who reviews what: k distinct reviewers per item, balanced loads.",
        "blind-review assign support-v1 --reviewers alice,bob,carol",
        cmd_assign,
    )
    p.add_argument("batch")
    p.add_argument(
        "--reviewers",
        help="comma-separated names (default: every active person with the reviewer role); a lead or an admin "
        "takes slots only when named here, and the report marks their ratings",
    )
    p.add_argument(
        "--rebalance", action="store_true", help="re-plan items nobody has opened yet, e.g. after adding reviewers"
    )

    for name, verb in (
        ("open-batch", "Open a batch for reviewing."),
        ("close-batch", "Close a batch: no new or revised ratings."),
    ):
        p = _command(sub, name, verb, f"blind-review {name} support-v1", cmd_open_close)
        p.add_argument("batch")

    p = _command(
        sub,
        "import-ratings",
        "Import ratings collected elsewhere (CSV).",
        "blind-review import-ratings support-v1 ratings.csv",
        cmd_import_ratings,
    )
    p.add_argument("batch")
    p.add_argument("file")

    p = _command(
        sub,
        "export-ratings",
        "Export raw, unblinded ratings (for leads).",
        "blind-review export-ratings support-v1 --format csv --out ratings.csv",
        cmd_export_ratings,
    )
    p.add_argument("batch")
    p.add_argument("--format", default="csv", choices=["csv", "jsonl"])
    p.add_argument("--out", help="file to write (default: standard output)")

    p = _command(sub, "serve", "Serve the review app (Streamlit).", "blind-review serve --port 8501", cmd_serve)
    p.add_argument("--port", type=int, default=8501)
    p.add_argument("--host", default="127.0.0.1")

    p = _command(
        sub,
        "demo",
        "Load the demo batch, create demo people, print their sign-in links and serve.",
        "blind-review demo --port 8501",
        cmd_demo,
    )
    p.add_argument("--port", type=int, default=8501)
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--no-serve", action="store_true", help="set up the demo and print the links, but do not serve")

    # command modules register here
    from reviewer_app.cli.compare import register as register_compare_command
    from reviewer_app.cli.feedback import register as register_feedback_commands
    from reviewer_app.cli.history import register as register_history_command
    from reviewer_app.cli.report import register as register_report_command

    register_report_command(sub)
    register_compare_command(sub)
    register_history_command(sub)
    register_feedback_commands(sub)
    register_generation_commands(sub)
    return parser


def flag_for(parameter: str) -> str:
    """How the CLI names a service parameter in messages: ``on_leak`` is ``--on-leak``."""
    return _POSITIONAL.get(parameter) or "--" + parameter.replace("_", "-")


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        configure_logging()
        return int(args.handler(args))
    except ValidationError as exc:
        print(f"error: {exc.worded(flag_for)}", file=sys.stderr)
        return 1
    except BlindReviewError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    finally:
        from storage.engine import dispose_engines

        dispose_engines()
