"""The commands that move ratings in and out of the database as files: import ratings collected elsewhere,
export the raw, unblinded ratings, and the panel's verdicts as preference records for training (for leads).

They call ``reviewer_app.ratings`` and print what came of it; a summary the service writes is printed as
written."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from reviewer_app.cli._common import Subparsers, add_command, open_engine, print_lines, with_examples


def cmd_import_ratings(args: argparse.Namespace) -> int:
    """Import the ratings file into the batch (checked row by row) and print the import's summary."""
    from reviewer_app.ratings.files import import_ratings

    print_lines(import_ratings(open_engine(), args.batch, Path(args.file)).lines())
    return 0


def cmd_export_ratings(args: argparse.Namespace) -> int:
    """Write the batch's ratings to ``--out`` or standard output; the count goes to stderr, out of the data."""
    from reviewer_app.ratings.export import export_ratings

    n = export_ratings(
        open_engine(),
        args.batch,
        args.format,
        Path(args.out) if args.out else None,
        stream=sys.stdout if not args.out else None,
        with_judges=args.with_judges,
    )
    if args.out:
        print(f"Wrote {n} rows (ratings and can't-judge answers) to {args.out}", file=sys.stderr)
    return 0


def cmd_export_preferences(args: argparse.Namespace) -> int:
    """Write the batch's preference records to ``--out`` and print what went in and what was left out."""
    from reviewer_app.exports import export_preferences

    summary = export_preferences(
        open_engine(),
        args.batch,
        Path(args.out),
        fmt=args.format,
        ties=args.ties,
        source=args.source,
        min_agreement=args.min_agreement,
        adjudicated=args.adjudicated,
    )
    print_lines(summary.lines())
    return 0


def register(subparsers: Subparsers) -> None:
    """Add ``import-ratings``, ``export-ratings`` and ``export-preferences``, in that order."""
    from reviewer_app.exports import PREFERENCE_FORMATS, PREFERENCE_SOURCES, TIE_RULES

    help_text = "Import ratings collected elsewhere (CSV, or JSONL as export-ratings writes it)."
    p = add_command(
        subparsers,
        "import-ratings",
        cmd_import_ratings,
        help=help_text,
        description=with_examples(
            help_text,
            "blind-review import-ratings support-v1 ratings.csv",
            "blind-review import-ratings support-v2 ratings.jsonl  # an export-ratings --format jsonl file",
        ),
    )
    p.add_argument("batch")
    p.add_argument("file")

    help_text = "Export raw, unblinded ratings (for leads)."
    p = add_command(
        subparsers,
        "export-ratings",
        cmd_export_ratings,
        help=help_text,
        description=with_examples(
            help_text,
            "blind-review export-ratings support-v1 --format csv --out ratings.csv",
            "blind-review export-ratings support-v1 --format parquet --out ratings.parquet",
        ),
    )
    p.add_argument("batch")
    p.add_argument("--format", default="csv", choices=["csv", "jsonl", "parquet"])
    p.add_argument("--out", help="file to write (default: standard output; Parquet needs a file)")
    p.add_argument(
        "--with-judges",
        action="store_true",
        help="add the LLM judges' ratings after the panel's, every row marked by a last column rater_kind",
    )

    help_text = "Export the panel's verdicts as DPO-style preference records: prompt, chosen, rejected (unblinded)."
    p = add_command(
        subparsers,
        "export-preferences",
        cmd_export_preferences,
        help=help_text,
        description=with_examples(
            help_text,
            "blind-review export-preferences demo-pairwise --out prefs.jsonl",
            "blind-review export-preferences support-v1 --format hf --out support-prefs/ --min-agreement 0.75",
            "blind-review export-preferences demo-pairwise --out prefs.jsonl --adjudicated  # rulings decide disputes",
        ),
    )
    p.add_argument("batch")
    p.add_argument("--out", required=True, help="file to write; for --format hf, a new or empty folder")
    p.add_argument("--format", default="jsonl", choices=PREFERENCE_FORMATS, help="(default: jsonl)")
    p.add_argument(
        "--ties",
        default="leave-out",
        choices=TIE_RULES,
        help="a pair the panel did not prefer either of: left out (default), or kept with tie: true",
    )
    p.add_argument(
        "--from",
        dest="source",
        default="auto",
        choices=PREFERENCE_SOURCES,
        help="pairwise verdicts, or rating means (each output's mean overall score); auto: the batch's mode",
    )
    p.add_argument(
        "--min-agreement",
        type=float,
        default=0.0,
        metavar="SHARE",
        help="leave out preferences fewer of the panel agreed with (0-1; default 0: keep all)",
    )
    p.add_argument(
        "--adjudicated",
        action="store_true",
        help="an adjudicator's ruling takes the panel's place on the items it rules, as in report --adjudicated "
        "(those records say adjudicated: true); default: the panel as it answered",
    )
