"""Agreement over time: is the panel agreeing less as the study goes on?

Per scenario, the completed samples (every item rated by its k reviewers) in the order they were completed are
cut into consecutive windows (up to :data:`MAX_WINDOWS`, each at least :data:`MIN_SAMPLES` samples), and
Krippendorff's alpha on the overall score (rating: the interval-level 0-1 overall; pairwise: the overall
question, nominal) is computed in each with its bootstrap interval over items (``agreement.alpha_with_ci``,
the report's own). The latest window is flagged when its whole 95% interval lies below the scenario's alpha over
all completed samples. Deterministic for the report's seed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from reviewer_app.analysis.agreement import alpha_with_ci
from reviewer_app.analysis.prepare import OVERALL, canonical_outcome, sub_rng
from reviewer_app.domain.enums import Level
from reviewer_app.domain.report_rankings import AgreementRow
from reviewer_app.domain.report_windows import AgreementTrend, AgreementWindow

__all__ = ["MAX_WINDOWS", "MIN_SAMPLES", "WINDOW_ROUNDS", "agreement_trends"]

MAX_WINDOWS = 5
MIN_SAMPLES = 10
WINDOW_ROUNDS = 500  # bootstrap rounds per window: a 95% interval's ends to about +-0.01 (windows are small)


def agreement_trends(
    overall: pd.DataFrame,
    pairwise_main: pd.DataFrame | None,
    completions: Sequence[str],
    *,
    rounds: int,
    seed: int,
) -> tuple[AgreementTrend, ...] | None:
    """Each scenario's :class:`AgreementTrend` (rating: ``overall`` rows, ``prepare.overall_rows``; pairwise:
    ``pairwise_main``, the overall question's answers); None when no scenario has two windows yet."""
    order = {sample: k for k, sample in enumerate(completions)}
    if pairwise_main is not None:
        frame = pairwise_main.assign(value=canonical_outcome(pairwise_main))
        level: Level = "nominal"
        domain: list[str] | None = ["a", "b", "tie", "both_bad"]
    else:
        frame = overall.assign(value=overall["norm"])
        level, domain = "interval", None
    out = []
    for scen in sorted(frame["scenario"].unique().tolist()):
        part = frame[frame["scenario"] == scen]
        done = sorted((s for s in part["sample_id"].unique() if s in order), key=order.__getitem__)
        windows = min(MAX_WINDOWS, len(done) // MIN_SAMPLES)
        if windows < 2:
            continue
        part = part[part["sample_id"].isin(done)]
        rank = part["sample_id"].map({s: k for k, s in enumerate(done)}).to_numpy()
        cuts = np.linspace(0, len(done), windows + 1).round().astype(int)
        # The scenario's level needs no interval (only the latest window's is compared with it): one round.
        level_row = _alpha(part, level, domain, 1, sub_rng(seed, "agreement-trend", scen, "all"))
        rows = []
        for w in range(windows):
            inside = (rank >= cuts[w]) & (rank < cuts[w + 1])
            row = _alpha(
                part[inside], level, domain, min(rounds, WINDOW_ROUNDS), sub_rng(seed, "agreement-trend", scen, str(w))
            )
            rows.append(
                AgreementWindow(
                    window=w + 1,
                    first=int(cuts[w]) + 1,
                    last=int(cuts[w + 1]),
                    alpha=row.alpha,
                    ci_low=row.ci_low,
                    ci_high=row.ci_high,
                    items=row.n_units,
                )  # fmt: skip
            )
        latest = rows[-1]
        flagged = level_row.alpha is not None and latest.ci_high is not None and latest.ci_high < level_row.alpha
        out.append(
            AgreementTrend(
                scenario=scen,
                dimension=OVERALL,
                alpha=level_row.alpha,
                windows=tuple(rows),
                flagged=flagged,
                sentence=_sentence(scen, level_row.alpha, latest, flagged, len(done)),
            )  # fmt: skip
        )
    return tuple(out) or None


def _alpha(
    part: pd.DataFrame, level: Level, domain: list[str] | None, rounds: int, rng: np.random.Generator
) -> AgreementRow:
    data = pd.DataFrame({"unit": part["item_id"], "reviewer": part["reviewer"], "value": part["value"]})
    seen: list[Any] = list(domain) if domain is not None else sorted(data["value"].unique().tolist()) or [0.0]
    return alpha_with_ci(data, level=level, domain=seen, rounds=rounds, rng=rng, dimension=OVERALL)


def _fmt(x: float | None) -> str:
    return "undefined" if x is None else f"{x:.2f}"


def _sentence(scen: str, alpha: float | None, latest: AgreementWindow, flagged: bool, samples: int) -> str:
    span = f"samples {latest.first}-{latest.last} of {samples} completed"
    interval = "" if latest.ci_low is None else f" ({_fmt(latest.ci_low)} to {_fmt(latest.ci_high)})"
    now = f"alpha {_fmt(latest.alpha)}{interval} in the latest window ({span})"
    if flagged:
        return (
            f"{scen}: agreement has dropped: {now}, below the scenario's {_fmt(alpha)} by more than its interval; "
            "look at who rated those samples."
        )
    return f"{scen}: agreement holds: {now}; the scenario's {_fmt(alpha)}."
