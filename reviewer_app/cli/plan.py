"""``blind-review plan``: before a study, how many samples per scenario separate a gap with the report's own
test, at each number of reviewers per output, from a pilot batch or stated variance components. And during
it, ``blind-review allocation``: where an adaptive batch's pool sends reviewers next, and why."""

from __future__ import annotations

import argparse
import json

from reviewer_app.cli._common import Subparsers, add_command, names_list, open_engine
from reviewer_app.domain.plans import CurvePoint, Plan, PlanRow

PLAN_HELP = """\
Plan a study: the samples per scenario that give the report's own decision (sign-flip test, Holm over every
pair) the power to separate the best model from the worst when they differ by --gap, for each number of
reviewers per output (--k), by simulation (2,000 panels per step; a fixed seed: the same plan every time),
with the power curve behind it and what each k costs in judgements.

The variance components (a sample's effect, an output's own quality, a reviewer's leniency, a rating's
noise) come from a pilot batch's ratings (--pilot BATCH, per scenario, on --dimension: a numeric question or
"overall", the 0-1 mean the report ranks), or are stated (--assume, in squared score units).

examples:
  blind-review plan --pilot support-pilot --gap 0.1 --k 1,2,3
  blind-review plan --pilot support-pilot --dimension correctness --gap 0.3 --models 6
  blind-review plan --assume output=0.4,reviewer=0.1,residual=0.6 --models 6 --gap 0.2 --scenarios qa,code
"""


def _lines(plan: Plan) -> list[str]:
    out = [
        f"Plan for {plan.models} models, a gap of {plan.gap:g}, {plan.power:.0%} power; components from {plan.source}."
    ]
    out += [f"  {s}" for s in plan.sentences]
    out += [
        "",
        _table(PlanRow.COLUMNS, plan.rows),
        "",
        "Power curve (first k):",
        _table(CurvePoint.COLUMNS, plan.curve),
    ]
    out += ["", "Variance components (squared score units):"]
    for scenario, parts in plan.components.items():
        out.append(f"  {scenario}: " + ", ".join(f"{k} {v:.3g}" for k, v in parts.items()))
    return out


def _table(columns: tuple[object, ...], rows: tuple[object, ...]) -> str:
    from reviewer_app.domain.report_fields import Column

    cols = [c for c in columns if isinstance(c, Column) and c.brief_header is not None]
    cells = [[_cell(c.cell(r)) for c in cols] for r in rows]
    widths = [max([len(c.brief_header or "")] + [len(row[i]) for row in cells]) for i, c in enumerate(cols)]
    head = "  ".join((c.brief_header or "").ljust(w) for c, w in zip(cols, widths, strict=True))
    return "\n".join([head] + ["  ".join(v.rjust(w) for v, w in zip(row, widths, strict=True)) for row in cells])


def _cell(value: object) -> str:
    if value is None:
        return "more than the limit"
    if isinstance(value, float):
        return f"{value:.3g}"
    return f"{value:,}" if isinstance(value, int) else str(value)


def cmd_plan(args: argparse.Namespace) -> int:
    """Make the plan and print it (or its JSON)."""
    from dataclasses import asdict

    from reviewer_app.errors import ReportError
    from reviewer_app.results.plans import parse_components, parse_ks, plan_from_assumptions, plan_from_pilot

    ks = parse_ks(args.k)
    if (args.pilot is None) == (args.assume is None):
        raise ReportError("give either --pilot BATCH or --assume output=...,reviewer=...,residual=...")
    if args.pilot is not None:
        plan = plan_from_pilot(
            open_engine(), args.pilot, gap=args.gap, ks=ks, target=args.power, dimension=args.dimension,
            models=args.models,
        )  # fmt: skip
    else:
        if args.models is None:
            raise ReportError("--assume needs --models (how many models the study compares)")
        plan = plan_from_assumptions(
            parse_components(args.assume), scenarios=names_list(args.scenarios), models=args.models, gap=args.gap,
            ks=ks, target=args.power,
        )  # fmt: skip
    if args.format == "json":
        print(json.dumps(asdict(plan), indent=2))
    else:
        print("\n".join(_lines(plan)))
    return 0


ALLOCATION_HELP = """\
Refresh an adaptive batch's pool (a rubric with allocation = "adaptive") from its ratings now and print each
scenario's state: in burn-in (first in line), open (how many samples to its nearest decision: the nearest
first, per judgement), settled or not settling (released only by the uniform share), or closed. The served app
refreshes the same states every BLIND_REVIEW_ALLOCATION_SECONDS (default 30) when ratings changed; --show
prints the last ones without computing.

examples:
  blind-review allocation support-v2
  blind-review allocation support-v2 --show
"""


def cmd_allocation(args: argparse.Namespace) -> int:
    """Refresh (or with --show read) the batch's pool states and print them."""
    from reviewer_app.results.allocation import pool_state, refresh_allocation

    engine = open_engine()
    state = pool_state(engine, args.batch) if args.show else refresh_allocation(engine, args.batch)
    print("\n".join(state.lines()))
    return 0


def register(subparsers: Subparsers) -> None:
    """Add ``plan`` and ``allocation``."""
    p = add_command(
        subparsers,
        "plan",
        cmd_plan,
        help="how many samples and reviewers a study needs, by simulation of the report's own test",
        description=PLAN_HELP,
    )
    p.add_argument("--pilot", metavar="BATCH", help="measure the variance components on this batch's ratings")
    p.add_argument(
        "--assume",
        metavar="output=V,reviewer=V,residual=V[,sample=V]",
        help="state the variance components instead (squared score units)",
    )
    p.add_argument("--gap", type=float, required=True, help="best minus worst model to separate, in score points")
    p.add_argument("--models", type=int, help="models in the study (default: the pilot's)")
    p.add_argument("--k", default="1,2,3", help="reviewers per output to compare (default 1,2,3)")
    p.add_argument("--power", type=float, default=0.8, help="the power wanted (default 0.8)")
    p.add_argument("--dimension", default="overall", help="with --pilot: the question measured (default overall)")
    p.add_argument("--scenarios", help="with --assume: the scenarios' names, comma-separated (default: one)")
    p.add_argument("--format", choices=("text", "json"), default="text")
    a = add_command(
        subparsers,
        "allocation",
        cmd_allocation,
        help="an adaptive batch's pool: each scenario's state and where the next samples go",
        description=ALLOCATION_HELP,
    )
    a.add_argument("batch", help="the batch's name")
    a.add_argument("--show", action="store_true", help="print the states of the last refresh without computing")
