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


def cmd_api_token(args: argparse.Namespace) -> int:
    """Make (and print once), revoke or list a person's API tokens."""
    from reviewer_app.people import issue_api_token, list_api_tokens, revoke_api_tokens

    engine = open_engine()
    if args.list:
        tokens = list_api_tokens(engine, args.name)
        print("\n".join(t.line() for t in tokens) if tokens else f"{args.name!r} has no API tokens.")
    elif args.revoke:
        n = revoke_api_tokens(engine, args.name, label=args.label)
        which = f"labelled {args.label!r}" if args.label else "of theirs"
        print(f"Revoked {n} API token(s) {which}; requests with them are refused from now on.")
    else:
        info, token = issue_api_token(engine, args.name, label=args.label or "default", days=args.days)
        expiry = f"expires {info.expires_at:%Y-%m-%d}" if info.expires_at else "no expiry"
        print(
            f"API token {info.label!r} for {info.person!r} ({expiry}; shown once, keep it secret; send it as "
            f"'Authorization: Bearer <token>'):\n{token}"
        )
    return 0


def register(subparsers: Subparsers) -> None:
    """Add ``add-reviewer``, ``new-link``, ``revoke`` and ``api-token``, in that order."""
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

    help_text = (
        "Make an API token for a lead or admin (printed once; only its hash is kept), or revoke or list their "
        "tokens. A token acts with its person's role at each request, and dies with the person's revocation."
    )
    p = add_command(
        subparsers,
        "api-token",
        cmd_api_token,
        help="make, revoke or list a lead's or admin's API tokens",
        description=with_examples(
            help_text,
            "blind-review api-token lee --label ci-nightly --days 90",
            "blind-review api-token lee --revoke --label ci-nightly",
            "blind-review api-token lee --list",
        ),
    )
    p.add_argument("name")
    p.add_argument("--label", help="the token's name, one per pipeline (default: default)")
    p.add_argument("--days", type=int, help="expire this many days from now (default: never)")
    p.add_argument("--revoke", action="store_true", help="revoke their tokens (only --label's, when given)")
    p.add_argument("--list", action="store_true", help="list their tokens (never the tokens themselves)")
