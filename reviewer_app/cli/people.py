"""The commands for people: add a reviewer, lead or admin, replace their sign-in link, revoke it.

A sign-in link is printed once and never stored in the clear, so these commands are the only place an admin
without the web app sees one. They call ``reviewer_app.people`` and print what came of it."""

from __future__ import annotations

import argparse

from reviewer_app.cli._common import Subparsers, add_command, open_engine, with_examples
from reviewer_app.domain.enums import Role


def cmd_add_reviewer(args: argparse.Namespace) -> int:
    """Add the person and print their sign-in link, the one time it can be shown."""
    from reviewer_app.people.people import add_reviewer

    person, link = add_reviewer(open_engine(), args.name, args.role)
    print(f"Added {person.role} {person.name!r}. Sign-in link (shown once; keep it private):\n{link}")
    return 0


def cmd_new_link(args: argparse.Namespace) -> int:
    """Print the person's new sign-in link (the old one stops working)."""
    from reviewer_app.people.people import new_link

    print(f"New sign-in link for {args.name!r} (the old one no longer works):\n{new_link(open_engine(), args.name)}")
    return 0


def cmd_revoke(args: argparse.Namespace) -> int:
    """Revoke the person's link and say how many of their unfinished items went back to the pool."""
    from reviewer_app.people.people import revoke

    released = revoke(open_engine(), args.name)
    print(f"Revoked {args.name!r}'s sign-in link; {released} unfinished item(s) went back to the pool.")
    return 0


def register(subparsers: Subparsers) -> None:
    """Add ``add-reviewer``, ``new-link`` and ``revoke``, in that order."""
    help_text = "Add a person and print their one-time sign-in link."
    p = add_command(
        subparsers,
        "add-reviewer",
        cmd_add_reviewer,
        help=help_text,
        description=with_examples(help_text, "blind-review add-reviewer alice --role reviewer"),
    )
    p.add_argument("name")
    p.add_argument("--role", default=Role.REVIEWER, choices=list(Role))

    help_text = "Replace a person's sign-in link (the old one stops working)."
    p = add_command(
        subparsers,
        "new-link",
        cmd_new_link,
        help=help_text,
        description=with_examples(help_text, "blind-review new-link alice"),
    )
    p.add_argument("name")

    help_text = "Revoke a person's sign-in link and return their unfinished items to the pool."
    p = add_command(
        subparsers,
        "revoke",
        cmd_revoke,
        help=help_text,
        description=with_examples(help_text, "blind-review revoke alice"),
    )
    p.add_argument("name")
