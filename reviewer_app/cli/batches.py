"""The commands that manage batches as a whole: load one, list them, list its leaks, archive, restore,
title and delete it.

They call the services of ``reviewer_app.batches`` and print what came of it. Running a batch's review
(``assign``, ``open-batch``, ``close-batch``) is ``cli.review``; its ratings are ``cli.ratings``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from reviewer_app.cli._common import Subparsers, add_command, names_list, open_engine, print_lines, with_examples
from reviewer_app.domain.enums import OnLeak
from reviewer_app.errors import ConflictError, Problem, ValidationError


def cmd_load_batch(args: argparse.Namespace) -> int:
    """Check and load the batch files (a progress bar on a terminal) and print the load's summary."""
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
        open_now=args.open,
        reviewers=names_list(args.reviewers),
    )
    print_lines(summary.lines())
    return 0


LIST_LEGEND = "answered: item showings answered (each item is shown to k reviewers: k x items when all are done)"


def cmd_list_batches(args: argparse.Namespace) -> int:
    """Print one row per batch (or per archived batch): its settings, counts and models."""
    from reviewer_app.batches.admin import batch_table

    rows = batch_table(open_engine(), archived=args.archived)
    if not rows:
        print("No archived batches." if args.archived else "No batches yet. Load one with `blind-review load-batch`.")
        return 0
    print(
        f"{'id':>4}  {'name':<24} {'mode':<9} {'status':<7} {'k':>2} {'samples':>8} {'outputs':>8} "
        f"{'items':>7} {'answered':>8} {'ratings':>8}  models (outputs)  follow-up of"
    )
    for row in rows:
        b, c = row.batch, row.counts
        print(
            f"{b.id:>4}  {b.name:<24} {b.mode:<9} {b.status:<7} {b.overlap:>2} {c.samples:>8} {c.outputs:>8} "
            f"{c.items:>7} {c.done:>8} {c.ratings:>8}  {row.models_text}  {row.follow_up_of or '-'}"
        )
    # "answered" counts showings, not items (issue 27); said on stderr, so the table on stdout stays parseable.
    print(LIST_LEGEND, file=sys.stderr)
    return 0


def cmd_leaks(args: argparse.Namespace) -> int:
    """Write the batch's leaking outputs to standard output; their count goes to stderr, out of the file."""
    from reviewer_app.batches.leak_list import batch_leaks, write_leaks

    entries = batch_leaks(open_engine(), args.batch)
    write_leaks(entries, args.format, sys.stdout)
    print(f"{len(entries)} output(s) of {args.batch!r} name a model or vendor", file=sys.stderr)
    return 0


def cmd_archive_batch(args: argparse.Namespace) -> int:
    """Archive the batch and say how to undo it."""
    from reviewer_app.batches.admin import archive_batch

    batch = archive_batch(open_engine(), args.batch)
    print(f"Batch {batch.name!r} is archived: closed and out of every list (restore-batch brings it back).")
    return 0


def cmd_restore_batch(args: argparse.Namespace) -> int:
    """Bring the batch back into the lists and say how to open it again."""
    from reviewer_app.batches.admin import restore_batch

    batch = restore_batch(open_engine(), args.batch)
    print(f"Batch {batch.name!r} is back in the lists, closed (open-batch {batch.name} opens it).")
    return 0


def cmd_set_titles(args: argparse.Namespace) -> int:
    """Set the titles given (none given: change nothing) and print every title reviewers now see, and why."""
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
    """Delete the batch once its name is confirmed: by ``--yes``, ``--confirm NAME``, or typed at a prompt.

    Without a terminal to ask on and without either flag, refuse: a script must say it means it."""
    from reviewer_app.batches.admin import delete_batch
    from reviewer_app.batches.catalog import find_batch

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
    print_lines(delete_batch(engine, args.batch, confirm=confirm).lines())
    return 0


def register(subparsers: Subparsers) -> None:
    """Add ``load-batch``, ``list-batches``, ``leaks``, ``archive-batch``, ``restore-batch``, ``set-titles``
    and ``delete-batch``, in that order."""
    help_text = "Check and load a batch of model outputs with its rubric (or as a follow-up of an earlier batch)."
    p = add_command(
        subparsers,
        "load-batch",
        cmd_load_batch,
        help=help_text,
        description=with_examples(
            help_text,
            "blind-review load-batch outputs.jsonl --rubric rubric.toml --name support-v1",
            "blind-review load-batch outputs.jsonl --rubric rubric.toml --name support-v1 --reviewers ana,ben --open",
            "blind-review load-batch new.jsonl --follow-up support-v1 --name support-v2 --anchor-share 0.2",
        ),
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
    p.add_argument(
        "--open",
        action="store_true",
        help="open the batch for reviewing at once (by default it is loaded closed: nobody sees it until "
        "`blind-review open-batch`, so you can choose its reviewers or `assign` it first)",
    )
    p.add_argument(
        "--reviewers",
        default=None,
        metavar="NAMES",
        help="comma-separated names: the batch's own reviewers, the only people it is shown to and who take its "
        "items (default: every active reviewer; change it later with `blind-review batch-reviewers`)",
    )

    help_text = "List batches with their counts and the outputs of each model."
    p = add_command(
        subparsers,
        "list-batches",
        cmd_list_batches,
        help=help_text,
        description=with_examples(help_text, "blind-review list-batches"),
    )
    p.add_argument("--archived", action="store_true", help="list the archived batches instead")

    help_text = "List every output that names a model or vendor, as the load's scan found it."
    p = add_command(
        subparsers,
        "leaks",
        cmd_leaks,
        help=help_text,
        description=with_examples(help_text, "blind-review leaks support-v1 --format csv > leaks.csv"),
    )
    p.add_argument("batch")
    p.add_argument("--format", default="csv", choices=["csv", "jsonl"])

    for name, handler, help_text in (
        ("archive-batch", cmd_archive_batch, "Archive a batch: closed, out of every list, every row kept."),
        ("restore-batch", cmd_restore_batch, "Bring an archived batch back into the lists (closed)."),
    ):
        p = add_command(
            subparsers,
            name,
            handler,
            help=help_text,
            description=with_examples(help_text, f"blind-review {name} support-v1"),
        )
        p.add_argument("batch")

    help_text = "Show or set the titles reviewers see for a batch and its scenarios (leads and reports keep the names)."
    p = add_command(
        subparsers,
        "set-titles",
        cmd_set_titles,
        help=help_text,
        description=with_examples(
            help_text,
            "blind-review set-titles alpaca-claude-vicuna --display-name 'Helpfulness, round 1' "
            "--scenario vicuna='Open questions'",
        ),
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

    help_text = "Delete a batch with its ratings, assignments, outputs and images, for good."
    p = add_command(
        subparsers,
        "delete-batch",
        cmd_delete_batch,
        help=help_text,
        description=with_examples(help_text, "blind-review delete-batch support-v1 --confirm support-v1"),
    )
    p.add_argument("batch")
    p.add_argument("--confirm", metavar="NAME", help="the batch's name again, instead of typing it at the prompt")
    p.add_argument("--yes", action="store_true", help="delete without asking for the batch's name")
