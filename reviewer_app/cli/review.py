"""The commands that run a batch's review: plan who reviews what (``assign``), and open or close the batch
for ratings.

They are apart from ``cli.batches`` because they change what reviewers are asked to do, not the batch's
content; they call ``reviewer_app.review`` and ``reviewer_app.batches`` and print what came of it."""

from __future__ import annotations

import argparse

from reviewer_app.cli._common import Subparsers, add_command, names_list, open_engine, print_lines, with_examples


def cmd_assign(args: argparse.Namespace) -> int:
    """Plan the batch's items for the named reviewers (default: every active reviewer) and print the plan."""
    from reviewer_app.review.assignment import assign

    names = names_list(args.reviewers) or None
    print_lines(assign(open_engine(), args.batch, names, rebalance=args.rebalance).lines())
    return 0


def cmd_open_batch(args: argparse.Namespace) -> int:
    """Open the batch for reviewing and print its status."""
    return _set_open(args.batch, True)


def cmd_close_batch(args: argparse.Namespace) -> int:
    """Close the batch to new and revised ratings and print its status."""
    return _set_open(args.batch, False)


def _set_open(name: str, is_open: bool) -> int:
    from reviewer_app.batches.audience import batch_audience
    from reviewer_app.batches.catalog import set_batch_open

    engine = open_engine()
    batch = set_batch_open(engine, name, is_open)
    print(batch_audience(engine, batch.name).line())
    return 0


def cmd_batch_reviewers(args: argparse.Namespace) -> int:
    """Add or take off the batch's own reviewers, then print who the batch is open to."""
    from reviewer_app.batches.audience import set_batch_reviewers

    engine = open_engine()
    audience = set_batch_reviewers(engine, args.batch, add=names_list(args.add), remove=names_list(args.remove))
    print(audience.line())
    return 0


def register(subparsers: Subparsers) -> None:
    """Add ``assign``, ``batch-reviewers``, ``open-batch`` and ``close-batch``, in that order."""
    help_text = "Plan who reviews what: k distinct reviewers per item, balanced loads."
    p = add_command(
        subparsers,
        "assign",
        cmd_assign,
        help=help_text,
        description=with_examples(help_text, "blind-review assign support-v1 --reviewers alice,bob,carol"),
    )
    p.add_argument("batch")
    p.add_argument(
        "--reviewers",
        help="comma-separated names, who become the batch's reviewers (default: the batch's reviewers, or every "
        "active person with the reviewer role when it has none); a lead or an admin takes slots only when named "
        "here, and the report marks their ratings",
    )
    p.add_argument(
        "--rebalance", action="store_true", help="re-plan items nobody has opened yet, e.g. after adding reviewers"
    )

    help_text = "Choose a batch's own reviewers: the only people it is shown to and who take its free items."
    p = add_command(
        subparsers,
        "batch-reviewers",
        cmd_batch_reviewers,
        help=help_text,
        description=with_examples(
            help_text,
            "blind-review batch-reviewers support-v1 --add ana,ben",
            "blind-review batch-reviewers support-v1 --remove ben",
            "blind-review batch-reviewers support-v1",
        ),
    )
    p.add_argument("batch")
    p.add_argument("--add", default=None, metavar="NAMES", help="comma-separated names to add")
    p.add_argument(
        "--remove",
        default=None,
        metavar="NAMES",
        help="comma-separated names to take off (their answers and planned items stay); with nobody left, the "
        "batch is open to every active reviewer",
    )

    for name, handler, help_text in (
        ("open-batch", cmd_open_batch, "Open a batch for reviewing."),
        ("close-batch", cmd_close_batch, "Close a batch: no new or revised ratings."),
    ):
        p = add_command(
            subparsers,
            name,
            handler,
            help=help_text,
            description=with_examples(help_text, f"blind-review {name} support-v1"),
        )
        p.add_argument("batch")
