"""The commands for production feedback (leads): ``import-feedback`` reads events from production into the
database, ``monitor`` says per model and window how they went and what changed.

Together because the monitor reads only what the import wrote; they call ``reviewer_app.production`` and say
in a few lines what came of it (or write the monitor to ``--out -``)."""

from __future__ import annotations

import argparse
from pathlib import Path

from reviewer_app.cli._common import Subparsers, add_command, open_engine, print_lines, with_examples, write_or_print
from reviewer_app.domain.production import WINDOWS
from reviewer_app.reporting.monitor import FORMATS, change_sentence, headline, render_monitor

IMPORT_EXAMPLE = "blind-review import-feedback feedback-2026-03.jsonl --scale=-1,1"
MONITOR_EXAMPLE = "blind-review monitor --format html --out reports/production.html --window 7d --canary gpt-x-2=gpt-x"


def cmd_import_feedback(args: argparse.Namespace) -> int:
    """Import a JSONL or CSV file of production feedback events; idempotent on request_id."""
    from reviewer_app.production.feedback import import_feedback, parse_scale

    scale = parse_scale(args.scale)
    engine = open_engine()
    result = import_feedback(engine, Path(args.file), scale=scale, fmt=args.format, progress=args.progress or None)
    print_lines(result.lines())
    return 0


def cmd_monitor(args: argparse.Namespace) -> int:
    """Write the production monitor: per model and window, feedback with CI, latency, flagged changes."""
    from reviewer_app.production.feedback import monitor, parse_canary, write_monitor

    canaries = [parse_canary(c) for c in args.canary or ()]
    engine = open_engine()
    result = monitor(engine, window=args.window, models=args.model or None, canaries=canaries)
    out = write_or_print(
        args.out,
        f"production-monitor.{args.format}",
        lambda: render_monitor(result, args.format),
        lambda path: write_monitor(result, args.format, path),
    )
    if out is None:
        return 0
    print(f"Wrote {out} ({args.format}): {headline(result)}")
    for change in result.flagged[:10]:
        print(f"  {change_sentence(change)}")
    if len(result.flagged) > 10:
        print(f"  ... and {len(result.flagged) - 10} more (see the file)")
    return 0


def register(subparsers: Subparsers) -> None:
    """Add ``import-feedback`` and ``monitor``, in that order."""
    help_text = "Import production feedback events (JSONL or CSV) for the monitor; a re-import adds nothing (leads)"
    parser = add_command(
        subparsers,
        "import-feedback",
        cmd_import_feedback,
        help=help_text,
        description=with_examples(
            f"{help_text}.\n\nOne event per JSON line or CSV row: model, timestamp (ISO 8601 with Z or an "
            "offset, or epoch seconds/ms), feedback (+1/-1, or a number on --scale); optional scenario, latency_ms, "
            "ttft_ms, request_id. Every problem is listed with its line; if there is any, nothing is written.",
            IMPORT_EXAMPLE,
            "blind-review import-feedback ratings.csv --scale 1-5",
        ),
    )
    parser.add_argument("file", help="the feedback file (.jsonl or .csv)")
    parser.add_argument(
        "--scale",
        default="-1,1",
        help="the feedback scale as MIN,MAX or MIN-MAX: -1,1 for thumbs (default; only +1 and -1 allowed), 1-5 "
        "for ratings",
    )
    parser.add_argument("--format", choices=("jsonl", "csv"), help="the file's format (default: from its suffix)")
    parser.add_argument(
        "--progress", action="store_true", help="show a progress bar on stderr (default: only on a terminal)"
    )

    help_text = (
        "Production monitor: per model (and scenario) and time window, feedback with its 95% CI, latency and "
        "TTFT median and p95, volume; significant changes flagged with the test named (leads)"
    )
    parser = add_command(
        subparsers,
        "monitor",
        cmd_monitor,
        help=help_text,
        description=with_examples(
            f"{help_text}.\n\nA window is tested against the model's previous window, a canary "
            "(--canary NEW=CURRENT) against its current model; all p-values Holm-adjusted together.\nModel names "
            "are unblinded in the output.",
            MONITOR_EXAMPLE,
            "blind-review monitor --format json --out - > production.json",
        ),
    )
    parser.add_argument("--format", choices=FORMATS, default="html", help="output format (default: html)")
    parser.add_argument("--out", help="file to write, or - for standard output (default: production-monitor.FORMAT)")
    parser.add_argument("--window", choices=WINDOWS, default="1d", help="UTC days or ISO weeks (default: 1d)")
    parser.add_argument("--model", action="append", metavar="MODEL", help="only this model (repeatable)")
    parser.add_argument(
        "--canary",
        action="append",
        metavar="NEW=CURRENT",
        help="compare a canary model with the current one, window by window and overall (repeatable)",
    )
