"""The webhook commands: register a URL for events (its secret printed once), list hooks and the delivery
log, remove a hook, send it a test event, and send the outbox now (for a cron or CI job; ``serve`` sends it
every ``BLIND_REVIEW_WEBHOOK_SECONDS`` on its own)."""

from __future__ import annotations

import argparse

from reviewer_app.cli._common import Subparsers, add_command, names_list, open_engine, with_examples


def cmd_add_webhook(args: argparse.Namespace) -> int:
    """Register the URL and print its secret, the one time it is shown."""
    from reviewer_app.webhooks import add_webhook

    info, secret = add_webhook(open_engine(), args.url, names_list(args.events), label=args.label or "")
    print(
        f"Added webhook {info.line()}.\n"
        f"Signing secret (shown once; the receiver verifies deliveries with it):\n{secret}"
    )
    return 0


def cmd_webhooks(args: argparse.Namespace) -> int:
    """List the hooks, or with ``--log`` the newest deliveries."""
    from reviewer_app.webhooks import delivery_log, list_webhooks

    engine = open_engine()
    if args.log:
        rows, total = delivery_log(engine, limit=args.limit)
        if not rows:
            print("No deliveries yet.")
        for r in rows:
            answer = r.last_error or (f"HTTP {r.last_status}" if r.last_status else "not sent yet")
            due = f", next try {r.next_attempt_at:%Y-%m-%d %H:%M:%S}" if r.next_attempt_at else ""
            print(f"{r.created_at:%Y-%m-%d %H:%M:%S}  {r.kind:<25} -> {r.webhook_id} {r.url}: {r.status} "
                  f"after {r.attempts} attempt(s) ({answer}){due}  [{r.event_id}]")  # fmt: skip
        if total > len(rows):
            print(f"... {total - len(rows)} older (--limit)")
        return 0
    hooks = list_webhooks(engine, include_removed=args.all)
    print("\n".join(h.line() for h in hooks) if hooks else "No webhooks. Add one with `blind-review add-webhook URL`.")
    return 0


def cmd_remove_webhook(args: argparse.Namespace) -> int:
    from reviewer_app.webhooks import remove_webhook

    remove_webhook(open_engine(), args.id)
    print(f"Removed webhook {args.id}: nothing more is sent to it (its log stays).")
    return 0


def cmd_test_webhook(args: argparse.Namespace) -> int:
    """Send the hook a ping now and say how it went."""
    from reviewer_app.webhooks import ping

    row = ping(open_engine(), args.id)
    if row is not None and row.status == "delivered":
        print(f"Delivered a ping to webhook {args.id} (HTTP {row.last_status}).")
    else:
        why = "" if row is None else f": {row.last_error or row.status}"
        print(
            f"The ping to webhook {args.id} did not go through{why}; it is retried (see `blind-review webhooks --log`)."
        )
    return 0


def cmd_deliver_webhooks(args: argparse.Namespace) -> int:
    """Look for new events once and send every due delivery."""
    from reviewer_app.results import watch_and_deliver

    print(watch_and_deliver(open_engine()).line())
    return 0


def register(subparsers: Subparsers) -> None:
    """Add ``add-webhook``, ``webhooks``, ``remove-webhook``, ``test-webhook`` and ``deliver-webhooks``."""
    from reviewer_app.webhooks import EVENT_KINDS

    kinds = ", ".join(EVENT_KINDS)
    help_text = "Register a URL for webhook events; prints the signing secret once (admins)"
    p = add_command(
        subparsers,
        "add-webhook",
        cmd_add_webhook,
        help=help_text,
        description=with_examples(
            f"{help_text}. Events: {kinds} (or * for all). Deliveries are JSON, signed (Standard Webhooks: "
            "webhook-id, webhook-timestamp, webhook-signature), retried with backoff for about 11 hours.",
            "blind-review add-webhook https://ci.example.org/hooks/review --events batch.complete,compare.regression",
        ),
    )
    p.add_argument("url")
    p.add_argument("--events", default="*", help=f"comma-separated: {kinds}; * for all (default)")
    p.add_argument("--label", help="what it is for, shown in lists")

    help_text = "List webhooks, or the delivery log with --log"
    p = add_command(subparsers, "webhooks", cmd_webhooks, help=help_text,
                    description=with_examples(help_text, "blind-review webhooks --log --limit 20"))  # fmt: skip
    p.add_argument("--log", action="store_true", help="the newest deliveries: status, attempts, last answer")
    p.add_argument("--limit", type=int, default=50, help="deliveries shown with --log (default: 50)")
    p.add_argument("--all", action="store_true", help="also removed webhooks")

    help_text = "Remove a webhook: nothing more is sent to it; its pending deliveries are given up"
    p = add_command(subparsers, "remove-webhook", cmd_remove_webhook, help=help_text,
                    description=with_examples(help_text, "blind-review remove-webhook 3"))  # fmt: skip
    p.add_argument("id", type=int)

    help_text = "Send a webhook a test event (ping) now and say whether it was delivered"
    p = add_command(subparsers, "test-webhook", cmd_test_webhook, help=help_text,
                    description=with_examples(help_text, "blind-review test-webhook 3"))  # fmt: skip
    p.add_argument("id", type=int)

    help_text = "Look for new webhook events and send every due delivery once (serve does it on its own)"
    example = "blind-review deliver-webhooks  # from cron, every minute"
    add_command(subparsers, "deliver-webhooks", cmd_deliver_webhooks, help=help_text,
                description=with_examples(help_text, example))  # fmt: skip
