"""``blind-review history``: one model over its follow-up rounds, with the regression verdict of each round.

Its own group: it reads a model across every batch it is in, where ``report`` reads one batch and
``compare`` two. It calls ``reviewer_app.versions`` and says in one line what it found (or writes the
history to ``--out -``)."""

from __future__ import annotations

import argparse

from reviewer_app.batches.output_files import file_stem
from reviewer_app.cli._common import Subparsers, add_command, open_engine, with_examples, write_or_print
from reviewer_app.reporting.history import FORMATS, headline, render_history

EXAMPLE = "blind-review history gpt-x-2 --also gpt-x --format html --out reports/gpt-x-history.html"


def cmd_history(args: argparse.Namespace) -> int:
    """Write the model's score per batch and scenario over its follow-up chains, with regression verdicts."""
    from reviewer_app.versions.history import model_history, write_history

    engine = open_engine()
    result = model_history(engine, args.model, also=args.also or (), rounds=args.rounds)
    out = write_or_print(
        args.out,
        f"{file_stem(result.model, fallback='model')}-history.{args.format}",
        lambda: render_history(result, args.format),
        lambda path: write_history(result, args.format, path),
    )
    if out is None:
        return 0
    print(f"Wrote {out} ({args.format}): {headline(result)}")
    return 0


def register(subparsers: Subparsers) -> None:
    """Add ``history``."""
    help_text = (
        "A model over follow-up rounds: per batch and scenario its score with the 95% CI, and the regression "
        "verdict against the batch each round follows up (leads)"
    )
    parser = add_command(
        subparsers,
        "history",
        cmd_history,
        help=help_text,
        description=with_examples(
            f"{help_text}.\n\nEvery batch with outputs of MODEL (or of an --also name), in load order; "
            "scores are each batch's own report's, verdicts those of `blind-review compare` between a follow-up "
            "and its baseline.\nModel names are unblinded in the output.",
            EXAMPLE,
            "blind-review history gpt-x --format csv --out - > gpt-x.csv",
        ),
    )
    parser.add_argument("model", help="the model's name as in its batches (see `blind-review list-batches`)")
    parser.add_argument(
        "--also",
        action="append",
        metavar="OLD",
        help="an earlier name of the same model (a renamed version, as compare's --match OLD=NEW); repeatable",
    )
    parser.add_argument("--format", choices=FORMATS, default="html", help="output format (default: html)")
    parser.add_argument("--out", help="file to write, or - for standard output (default: MODEL-history.FORMAT)")
    parser.add_argument(
        "--rounds", type=int, default=1000, help="bootstrap rounds of each batch's report (default: 1000)"
    )
