"""Adjudication against a known truth: does ranking with rulings bring a model gap back to the truth?

Each simulated study: 40 samples, models m1 (true score 4) and m2 (3) on a 1-5 scale, three reviewers per
output answering the truth plus a little noise, except that the third reviewer answers at random on a quarter
of the items (an erratic reviewer). The disputes are found with the report's own rule
(``analysis.disputes.find_disputes``) at a spread of 2 and at the default 3; an adjudicator rules the true score
on each; ``overrule`` gives the answers a report made with rulings ranks. Prints, per spread, the mean measured
gap as the panel answered and with rulings, the disputes per study (and how many of them are erratic items),
and the share of studies where the rulings moved the gap closer to the truth.

    .venv/bin/python scripts/validate_adjudication.py [--studies 200]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from reviewer_app.analysis.disputes import find_disputes, overrule  # noqa: E402
from reviewer_app.domain.enums import Mode  # noqa: E402
from reviewer_app.domain.rubric import Adjudication, Rubric  # noqa: E402
from tests.support.simulated_panels import ERRATIC_TRUTH as TRUTH  # noqa: E402
from tests.support.simulated_panels import erratic_reviewer_study as study  # noqa: E402
from tests.support.simulated_panels import likert, model_gap  # noqa: E402

CORRECTNESS = likert("c")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--studies", type=int, default=200)
    args = parser.parse_args()
    rows = []
    for seed in range(args.studies):
        frame, erratic = study(seed)
        for spread in (2, 3):
            rubric = Rubric(mode=Mode.RATING, overlap=3, dimensions=(CORRECTNESS,), adjudication=Adjudication(spread))
            disputes = find_disputes(frame, rubric)
            values = [str(TRUTH[m]) for m in disputes["model_a"]]
            rulings = pd.DataFrame({"item_id": disputes["item_id"], "dimension": "c", "value": values})
            ruled = model_gap(overrule(frame, rulings, pairwise=False))
            rows.append((spread, model_gap(frame), ruled, len(disputes), len(set(disputes["item_id"]) & erratic)))
    table = pd.DataFrame(rows, columns=["spread", "panel", "ruled", "disputes", "erratic"])
    print(f"{args.studies} studies; true gap m1 - m2 = 1.00 point\n")
    print("| spread | gap as answered | gap with rulings | disputes per study | of them erratic | rulings closer |")
    print("|---|---|---|---|---|---|")
    for spread, part in table.groupby("spread"):
        closer = float((abs(part["ruled"] - 1) < abs(part["panel"] - 1)).mean())
        print(f"| {spread} | {part['panel'].mean():.3f} | {part['ruled'].mean():.3f} | {part['disputes'].mean():.1f} "
              f"| {part['erratic'].mean():.1f} | {closer:.0%} |")  # fmt: skip


if __name__ == "__main__":
    main()
