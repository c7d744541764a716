"""The `blind-review history` subcommand."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from reviewer_app.batches.output_files import file_stem
from reviewer_app.cli._common import open_engine
from reviewer_app.reporting.history import FORMATS, headline, render_history

EXAMPLE = "blind-review history gpt-x-2 --also gpt-x --format html --out reports/gpt-x-history.html"


def cmd_history(args: argparse.Namespace) -> int:
    """Write the model's score per batch and scenario over its follow-up chains, with regression verdicts."""
    from reviewer_app.versions.history import model_history, write_history

    engine = open_engine()
    result = model_history(engine, args.model, also=args.also or (), rounds=args.rounds)
    if args.out == "-":
        sys.stdout.write(render_history(result, args.format))
        return 0
    out = Path(args.out) if args.out else Path(f"{file_stem(result.model, fallback='model')}-history.{args.format}")
    write_history(result, args.format, out)
    print(f"Wrote {out} ({args.format}): {headline(result)}")
    return 0


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``history`` to the main CLI."""
    help_text = (
        "A model over follow-up rounds: per batch and scenario its score with the 95% CI, and the regression "
        "verdict against the batch each round follows up (leads)"
    )
    parser = subparsers.add_parser(
        "history",
        help=help_text.replace("%", "%%"),
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description=f"{help_text}.\n\nEvery batch with outputs of MODEL (or of an --also name), in load order; "
        "scores are each batch's own report's, verdicts those of `blind-review compare` between a follow-up "
        "and its baseline.\nModel names are unblinded in the output.\n\nExample:\n"
        f"  {EXAMPLE}\n"
        "  blind-review history gpt-x --format csv --out - > gpt-x.csv",
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
    parser.set_defaults(handler=cmd_history)
