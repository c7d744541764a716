"""``blind-review report``: a batch's report as leads read it (agreement, rankings, composite, diagnostics),
written in the format asked for.

Its own group: one batch's results, where ``compare`` and ``history`` read across batches. It calls
``reviewer_app.results`` and says in one line what it wrote (or writes the report itself to ``--out -``)."""

from __future__ import annotations

import argparse
from pathlib import Path

from reviewer_app.batches.output_files import file_stem
from reviewer_app.cli._common import Subparsers, add_command, open_engine, with_examples, write_or_print
from reviewer_app.errors import ReportError
from reviewer_app.reporting.formats import FORMATS, render

EXAMPLE = "blind-review report pilot-2024-06 --format html --out reports/pilot.html"


def cmd_report(args: argparse.Namespace) -> int:
    """Compute the batch's report and write it in the chosen format."""
    from reviewer_app.results.batch_reports import batch_report, parse_weights, write_report
    from reviewer_app.results.benchmark_scores import check_margin, read_benchmark_scores

    if args.format == "parquet" and args.out == "-":
        raise ReportError("--out -: Parquet is a binary file, not for standard output; give a file name")
    margin = check_margin(args.benchmark_margin)
    benchmarks = read_benchmark_scores(Path(args.benchmarks), margin=margin) if args.benchmarks else None
    engine = open_engine()
    report = batch_report(
        engine,
        batch=args.batch,
        rounds=args.rounds,
        weights=parse_weights(args.weights),
        seed=args.seed,
        benchmarks=benchmarks,
        judge=args.judge,
        adjudicated=args.adjudicated,
    )
    out = write_or_print(
        args.out,
        f"{file_stem(report.batch)}-report.{args.format}",
        lambda: render(report, args.format),
        lambda path: write_report(report, args.format, path),
    )
    if out is None:
        return 0
    flagged = sum(1 for r in report.reviewers if r.flag)
    print(
        f"Wrote {out} ({args.format}): {len(report.scenarios)} scenario(s), {len(report.models)} model(s), "
        f"{report.methods.bootstrap_rounds} bootstrap rounds" + (f"; {flagged} reviewer(s) flagged" if flagged else "")
    )
    return 0


def cmd_disputes(args: argparse.Namespace) -> int:
    """List the batch's disputes and their rulings (unblinded), or write them as CSV."""
    from reviewer_app.adjudication import dispute_table

    table, rule = dispute_table(open_engine(), args.batch)
    ruled = int((table["ruling"] != "").sum())
    if args.out:
        path = Path(args.out)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            table.to_csv(path, index=False)
        except OSError as exc:
            raise ReportError(f"cannot write {path} ({exc.strerror}); check the path and permissions") from exc
        print(f"Wrote {path}: {len(table)} disagreement(s), {ruled} ruled.")
        return 0
    print(f"Disputed when: {rule}.")
    if table.empty:
        print(f"No disagreement beyond the threshold in {args.batch!r}.")
        return 0
    for r in table.to_dict(orient="records"):
        ruling = f"ruled {r['ruling']} by {r['adjudicator']}: {r['reason']}" if r["ruling"] else "open"
        print(f"{r['scenario']} / {r['sample_id']} / {r['models']} / {r['dimension']}: panel {r['panel']}; {ruling}")
    print(f"{len(table)} disagreement(s), {ruled} ruled, {len(table) - ruled} open (rule on the Adjudicate page).")
    return 0


def register(subparsers: Subparsers) -> None:
    """Add ``report`` and ``disputes``."""
    help_text = "Agreement, rankings with 95% CIs, composite and diagnostics for a batch (leads)"
    parser = add_command(
        subparsers,
        "report",
        cmd_report,
        help=help_text,
        description=with_examples(
            f"{help_text}.\n\nModel names are unblinded in the report.",
            EXAMPLE,
            "blind-review report pilot-2024-06 --format json --out - | jq .overall.composite",
            "blind-review report pilot-2024-06 --benchmarks scores.csv  # columns model,benchmark,score",
            "blind-review report pilot-2024-06 --format parquet --out pilot-tables.parquet  # the csv's table, typed",
            "blind-review report pilot-2024-06 --adjudicated  # rank with the adjudicators' rulings (stated)",
        ),
    )
    parser.add_argument("batch", help="the batch name (see `blind-review list-batches`)")
    parser.add_argument(
        "--format",
        choices=[*FORMATS, "parquet"],
        default="html",
        help="output format (default: html; parquet: the csv's table, typed)",
    )
    parser.add_argument("--out", help="file to write, or - for standard output (default: BATCH-report.FORMAT)")
    parser.add_argument("--rounds", type=int, default=1000, help="bootstrap rounds (default: 1000)")
    parser.add_argument("--seed", type=int, help="bootstrap seed (default: the batch's seed)")
    parser.add_argument(
        "--weights",
        help="composite weights per scenario, e.g. extraction=2,summary=1 (default: the rubric's; missing = 1)",
    )
    parser.add_argument(
        "--benchmarks",
        metavar="FILE",
        help="public benchmark scores to show beside the blind ranking: a CSV with columns model,benchmark,score "
        "(one row per model and benchmark; optional higher_is_better true/false; higher is better by default)",
    )
    parser.add_argument(
        "--benchmark-margin",
        type=float,
        default=2.0,
        metavar="POINTS",
        help="pairs a benchmark separates by this many of its own points or less get a sentence (default: 2)",
    )
    parser.add_argument(
        "--judge",
        metavar="NAME",
        help="the LLM judge the 'Judge vs panel' section is about (its model name, or judge:MODEL@TEMPLATE; "
        "default: the one that rated the batch last)",
    )
    parser.add_argument(
        "--adjudicated",
        action="store_true",
        help="rank with the adjudicators' rulings on disputed items in place of the panel's answers there (the "
        "report says so); default: the panel as it answered, the rulings only listed",
    )
    disputes_help = "The items reviewers disagreed on beyond the rubric's threshold, and their rulings (leads)"
    disputes = add_command(
        subparsers,
        "disputes",
        cmd_disputes,
        help=disputes_help,
        description=with_examples(
            f"{disputes_help}.\n\nModel names are unblinded here; ruling is done blind on the Adjudicate page.",
            "blind-review disputes pilot-2024-06",
            "blind-review disputes pilot-2024-06 --out disputes.csv",
        ),
    )
    disputes.add_argument("batch", help="the batch name (see `blind-review list-batches`)")
    disputes.add_argument("--out", help="write the list as CSV to this file instead of printing it")
