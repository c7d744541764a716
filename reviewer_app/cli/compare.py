"""``blind-review compare``: did the new version of a batch (a follow-up round) regress against its baseline?

Its own group: it reads two batches, where ``report`` reads one and ``history`` a model across many. It calls
``reviewer_app.versions`` and says in one line what it found (or writes the comparison to ``--out -``)."""

from __future__ import annotations

import argparse

from reviewer_app.batches.output_files import file_stem
from reviewer_app.cli._common import Subparsers, add_command, open_engine, with_examples, write_or_print
from reviewer_app.reporting.compare import FORMATS, headline, render_comparison

EXAMPLE = "blind-review compare support-v1 support-v2 --format html --out reports/v1-v2.html"


def cmd_compare(args: argparse.Namespace) -> int:
    """Compare the candidate batch with the baseline and write the verdicts and drift in the chosen format."""
    from reviewer_app.versions.batch_compare import compare_batches, write_comparison

    engine = open_engine()
    result = compare_batches(
        engine,
        args.baseline,
        args.candidate,
        match=args.match or (),
        tolerance=args.tolerance,
        tolerance_share=args.tolerance_share,
        rounds=args.rounds,
        seed=args.seed,
    )
    out = write_or_print(
        args.out,
        f"{file_stem(result.baseline, result.candidate)}.{args.format}",
        lambda: render_comparison(result, args.format),
        lambda path: write_comparison(result, args.format, path),
    )
    if out is None:
        return 0
    print(f"Wrote {out} ({args.format}): {headline(result)}")
    if not result.has_anchors:
        print(
            "No anchors: verdicts allow for a new panel by the variance between reviewers (or are inconclusive "
            "where it cannot be estimated); only anchors measure a whole panel's shift."
        )
    return 0


def register(subparsers: Subparsers) -> None:
    """Add ``compare``."""
    help_text = (
        "Per scenario, dimension and model: did the new version regress? Verdicts with 95% CIs, the panel "
        "shift measured on anchors, and behaviour drift (leads)"
    )
    parser = add_command(
        subparsers,
        "compare",
        cmd_compare,
        help=help_text,
        description=with_examples(
            f"{help_text}.\n\nModels pair by name, or by --match for renamed versions. Verdicts: "
            "regression / improvement (beyond the tolerance, Holm-adjusted across the rows) / no change / "
            "inconclusive (with the samples that would settle it), and a significant change of any size.\n"
            "Model names are unblinded in the output.",
            EXAMPLE,
            "blind-review compare support-v1 support-v2 --match gpt-x=gpt-x-2 --format json --out - | jq .drift",
        ),
    )
    parser.add_argument("baseline", help="the baseline batch's name (see `blind-review list-batches`)")
    parser.add_argument("candidate", help="the candidate batch's name: the new version's outputs")
    parser.add_argument("--format", choices=FORMATS, default="html", help="output format (default: html)")
    parser.add_argument("--out", help="file to write, or - for standard output (default: BASELINE-vs-CANDIDATE.FORMAT)")
    parser.add_argument(
        "--match",
        action="append",
        metavar="OLD=NEW",
        help="pair a renamed version: baseline model OLD with candidate model NEW (repeatable)",
    )
    parser.add_argument(
        "--tolerance",
        type=float,
        default=0.25,
        help="a change smaller than this is 'no change', in each dimension's own points (default: 0.25)",
    )
    parser.add_argument(
        "--tolerance-share",
        type=float,
        default=0.05,
        help="the same for overall (0-1) and pairwise win rates (default: 0.05)",
    )
    parser.add_argument("--rounds", type=int, default=1000, help="bootstrap rounds for the shown CIs (default: 1000)")
    parser.add_argument("--seed", type=int, help="bootstrap seed (default: the candidate batch's seed)")
