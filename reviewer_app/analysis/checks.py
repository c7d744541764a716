"""Automatic checks in the report: per scenario and model, each check's pass rate (and that of passing every
check) with a cluster-bootstrap CI over samples, ranked and tiered like a rubric dimension; and how passing
goes with the panel's overall score.

Checks ran once at load on every output, reviewed or not, so a pass rate covers all of a model's outputs in
the scenario (repeats included; outputs excluded from review for naming a model included: the check is about
what the model wrote). A pass rate is the mean of 0/1 scores, so the estimate, the pair tests (sign flips over
samples, Holm-adjusted) and hence the ranks and tiers are those of any dimension: they do not depend on the
report's seed; only the CI ends move with it, by about their Monte Carlo error.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from reviewer_app.analysis.decisions import ranking_rows
from reviewer_app.analysis.inference import percentile_ci
from reviewer_app.analysis.prepare import bootstrap_weights, sub_rng
from reviewer_app.analysis.ranking import rating_estimate
from reviewer_app.domain.report_rankings import ALL_CHECKS, CheckPanelRow, CheckRow

MIN_CORRELATION_OUTPUTS = 5  # rated outputs a correlation needs before it is given
_KEY = ["sample_id", "model", "repeat"]


def check_names(checks: pd.DataFrame, scenario: str) -> list[str]:
    """The checks run in ``scenario``: "all" first (when there are any), then by name."""
    names = sorted(set(checks.loc[checks["scenario"] == scenario, "check"]))
    return [ALL_CHECKS, *names] if names else []


def _passes(part: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """Per check (and "all": every check of the output passed), one row per output: key columns + passed."""
    everything = part.groupby("output_id", sort=False).agg(
        sample_id=("sample_id", "first"), model=("model", "first"), repeat=("repeat", "first"), passed=("passed", "all")
    )
    out = {ALL_CHECKS: everything.reset_index(drop=True)}
    for name, rows in part.groupby("check", sort=True):
        out[str(name)] = rows[[*_KEY, "passed"]].reset_index(drop=True)
    return out


def check_rows(checks: pd.DataFrame, scenario: str, *, rounds: int, seed: int) -> tuple[CheckRow, ...]:
    """Every check's (and "all"'s) ranking of the models in ``scenario``: best first within each check."""
    part = checks[checks["scenario"] == scenario]
    if part.empty:
        return ()
    samples = sorted(set(part["sample_id"]))
    weights = bootstrap_weights(len(samples), rounds, sub_rng(seed, "checks", scenario))
    rows: list[CheckRow] = []
    passes = _passes(part)
    for name in check_names(checks, scenario):
        frame = passes[name]
        scored = pd.DataFrame(
            {"sample_id": frame["sample_id"], "model_a": frame["model"], "score": frame["passed"].astype(float)}
        )
        models = sorted(set(scored["model_a"]))
        ranking = ranking_rows(rating_estimate(scored, models, samples, weights), f"check {name}")
        rows += [
            CheckRow(
                model=r.model,
                check=name,
                pass_rate=r.score,
                ci_low=r.ci_low,
                ci_high=r.ci_high,
                n=r.n,
                rank=r.rank,
                tier=r.tier,
                letters=r.letters,
            )
            for r in ranking.rows
        ]
    return tuple(rows)


def check_panel_rows(
    checks: pd.DataFrame, overall: pd.DataFrame, scenario: str, *, rounds: int, seed: int
) -> tuple[CheckPanelRow, ...]:
    """Per check, Pearson's r between an output passing it and the output's mean overall score (0-1) over the
    outputs reviewers rated in ``scenario``, with a cluster-bootstrap CI over samples.

    ``overall`` is the report's rating-mode "overall" frame (one row per rating: ``sample_id``, ``model_a``,
    ``repeat_a``, ``score``). Each round reweighs whole samples, so the per-sample sums of x, y, x², y², xy
    and the count are all a round needs: (rounds x samples) @ (samples x 6), whatever the number of outputs."""
    part = checks[checks["scenario"] == scenario]
    if part.empty:
        return ()
    rated = overall[overall["scenario"] == scenario].dropna(subset=["score"])
    scores = (
        rated.groupby(["sample_id", "model_a", "repeat_a"], sort=False)["score"]
        .mean()
        .rename_axis(_KEY)
        .rename("y")
        .reset_index()
    )
    scores["repeat"] = scores["repeat"].astype(np.int64)
    passes = _passes(part)
    out = []
    for name in check_names(checks, scenario):
        frame = passes[name].assign(x=lambda f: f["passed"].astype(float)).merge(scores, on=_KEY, how="inner")
        out.append(_correlation_row(name, frame, rounds, sub_rng(seed, "check-panel", scenario, name)))
    return tuple(out)


def _correlation_row(name: str, frame: pd.DataFrame, rounds: int, rng: np.random.Generator) -> CheckPanelRow:
    n = len(frame)
    if n < MIN_CORRELATION_OUTPUTS:
        return CheckPanelRow(check=name, correlation=None, ci_low=None, ci_high=None, n=n,
                             note=f"{n} rated output(s); a correlation needs {MIN_CORRELATION_OUTPUTS}")  # fmt: skip
    x, y = frame["x"].to_numpy(), frame["y"].to_numpy(dtype=float)
    if x.min() == x.max():
        word = "passed" if x[0] else "failed"
        return CheckPanelRow(check=name, correlation=None, ci_low=None, ci_high=None, n=n,
                             note=f"every rated output {word}: nothing to correlate")  # fmt: skip
    if y.min() == y.max():
        return CheckPanelRow(check=name, correlation=None, ci_low=None, ci_high=None, n=n,
                             note="every rated output has the same overall score")  # fmt: skip
    codes, samples = pd.factorize(frame["sample_id"], sort=True)
    stats = np.stack([np.ones(n), x, y, x * x, y * y, x * y], axis=1)
    per_sample = np.zeros((len(samples), 6))
    np.add.at(per_sample, codes, stats)
    point = _pearson(per_sample.sum(axis=0)[None, :])[0]
    weights = bootstrap_weights(len(samples), rounds, rng)
    boot = _pearson(weights @ per_sample)
    lo, hi, _ = percentile_ci(boot[:, None])
    return CheckPanelRow(
        check=name,
        correlation=float(point),
        ci_low=None if not np.isfinite(lo[0]) else float(lo[0]),
        ci_high=None if not np.isfinite(hi[0]) else float(hi[0]),
        n=n,
        note=None,
    )


def _pearson(totals: np.ndarray) -> np.ndarray:
    """Pearson's r from (k x 6) totals of 1, x, y, x², y², xy; NaN where either side has no variance."""
    count, sx, sy, sxx, syy, sxy = totals.T
    with np.errstate(invalid="ignore", divide="ignore"):
        cov = sxy - sx * sy / count
        vx = sxx - sx * sx / count
        vy = syy - sy * sy / count
        r = cov / np.sqrt(vx * vy)
    r[(vx <= 1e-12) | (vy <= 1e-12)] = np.nan
    clipped: np.ndarray = np.clip(r, -1.0, 1.0)
    return clipped
