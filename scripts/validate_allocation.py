"""Validate adaptive allocation (issue 30, section 2): uniform vs adaptive release of samples on simulated
studies with known truth, through the same code the pool runs (``analysis.anytime`` verdicts ->
``analysis.allocation`` states -> ``domain.allocation.pick_scenario``).

Each study: 4 scenarios, 6 models whose true means are drawn within 0.3 points of each other per scenario (on
a 1-5 scale), 200 samples per scenario, k = 3 reviewers of a panel of 6 per sample, reviewer leniency sd 0.3,
a sample effect sd 0.5, heavy-tailed rating noise (Student t, 3 df, scaled to sd 0.7), ratings rounded and
clipped to 1-5; the score is the 0-1 overall ((x - 1) / 4), the tolerance 0.05 (0.2 points). Samples are
released one at a time: uniform (a random order over all samples) or adaptive (20% uniform, else the
scenario ``pick_scenario`` chooses from the states, refreshed every 20 samples as the app's refresher would).
The lead looks every 20 samples with the anytime-valid sequences. Printed:

* decisions (pairs separated the right way or shown equivalent) and judgements: uniform's decisions at half the
  budget (at the whole budget both have rated every sample), and the judgements each strategy needed to first
  reach that many (ratio adaptive / uniform);
* family-wise false separation rate (any pair of a scenario separated the wrong way at any look; for equal
  models any separation), per scenario-family and per study, with all models equal: uniform and adaptive;
* coverage under adaptive allocation at the end: the fixed-sample 95% t-interval of each pair's mean
  difference (what the report's bootstrap interval approximates) and the sequences (simultaneous, all looks).

    .venv/bin/python scripts/validate_allocation.py [--studies 40] [--spreads 0.3,0.3,0.3,0.3]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from reviewer_app.analysis.allocation import allocation_states  # noqa: E402
from reviewer_app.analysis.anytime import anytime_scenario  # noqa: E402
from reviewer_app.analysis.decisions import ranking_rows  # noqa: E402
from reviewer_app.analysis.prepare import bootstrap_weights  # noqa: E402
from reviewer_app.analysis.ranking import rating_estimate  # noqa: E402
from reviewer_app.domain.allocation import pick_scenario  # noqa: E402

SCENARIOS, MODELS, SAMPLES, K, PANEL = 4, 6, 200, 3, 6
LOOK, REFRESH, SHARE, TOLERANCE = 20, 20, 0.2, 0.05
NAMES = [f"m{i}" for i in range(MODELS)]
PAIRS = [(i, j) for i in range(MODELS) for j in range(i + 1, MODELS)]


def _study(rng: np.random.Generator, spread: float | list[float], even: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """True 0-1 means (scenarios x models; within ``spread`` points of each other, per scenario if a list) and
    the observed per-sample model means (scenarios x samples x models), each the mean of K reviewers' rounded
    ratings."""
    spreads = np.broadcast_to(np.asarray(spread, dtype=float), (SCENARIOS,))
    place = np.tile(np.linspace(0, 1, MODELS), (SCENARIOS, 1)) if even else rng.uniform(0, 1, (SCENARIOS, MODELS))
    means = 3.0 + place * spreads[:, None]
    leniency = rng.normal(0, 0.3, PANEL)
    sample = rng.normal(0, 0.5, (SCENARIOS, SAMPLES, 1, 1))
    who = np.argsort(rng.random((SCENARIOS, SAMPLES, 1, PANEL)), axis=-1)[..., :K]
    noise = stats.t.rvs(3, size=(SCENARIOS, SAMPLES, MODELS, K), random_state=rng) * 0.7 / np.sqrt(3)
    ratings = np.clip(np.rint(means[:, None, :, None] + sample + leniency[who] + noise), 1, 5)
    observed = (ratings.mean(axis=-1) - 1) / 4
    # The truth the panel estimates: the expected 0-1 score after rounding and clipping, by simulation.
    big = 200_000
    truth = np.empty((SCENARIOS, MODELS))
    ref = (
        rng.normal(0, 0.5, big)
        + rng.normal(0, 0.3, big)
        + stats.t.rvs(3, size=big, random_state=rng) * 0.7 / np.sqrt(3)
    )
    for s in range(SCENARIOS):
        for m in range(MODELS):
            truth[s, m] = (np.clip(np.rint(means[s, m] + ref), 1, 5).mean() - 1) / 4
    return truth, observed


def _verdicts(observed: np.ndarray, counts: list[int]) -> list:  # type: ignore[type-arg]
    out = []
    for s, n in enumerate(counts):
        if n == 0:
            continue
        samples = [f"x{i}" for i in range(n)]
        frame = pd.DataFrame(
            {
                "sample_id": np.repeat(samples, MODELS),
                "model_a": NAMES * n,
                "score": observed[s, :n].ravel(),
            }
        )
        v = anytime_scenario(frame, f"s{s}", "overall", samples, (0.0, 1.0), SAMPLES, tolerance=TOLERANCE)
        if v is not None:
            out.append(v)
    return out


def _decisions(verdicts: list, truth: np.ndarray) -> tuple[int, list[bool]]:  # type: ignore[type-arg]
    """Correct decisions (separated the right way, or equivalent with the truth inside the tolerance), and per
    scenario whether a false separation was made."""
    right, wrong = 0, [False] * SCENARIOS
    for v in verdicts:
        s = int(v.scenario[1:])
        for p in v.pairs:
            a, b = int(p.model_a[1:]), int(p.model_b[1:])
            true = truth[s, a] - truth[s, b]
            if p.state == "separated":
                if true > 1e-9:
                    right += 1
                else:
                    wrong[s] = True
            elif p.state == "equivalent" and abs(true) < TOLERANCE:
                right += 1
    return right, wrong


def _run(rng: np.random.Generator, truth: np.ndarray, observed: np.ndarray, adaptive: bool) -> dict[str, object]:
    counts = [0] * SCENARIOS
    states: list = []  # type: ignore[type-arg]
    trace, wrong_any = [], [False] * SCENARIOS
    per_sample = {f"s{s}": MODELS * K for s in range(SCENARIOS)}
    for step in range(1, SCENARIOS * SAMPLES + 1):
        left = np.array([SAMPLES - c for c in counts], dtype=float)
        chosen = None
        if adaptive and states and rng.random() >= SHARE:
            name = pick_scenario(states)
            chosen = None if name is None else int(name[1:])
        if chosen is None:  # a uniform draw over the samples left: a scenario in proportion to what it has left
            if not left.sum():
                break
            chosen = int(rng.choice(SCENARIOS, p=left / left.sum()))
        counts[chosen] += 1
        states = [
            st if st.scenario != f"s{chosen}" else type(st)(**{**st.__dict__, "released": st.released + 1})
            for st in states
        ]
        if step % LOOK == 0 or step == SCENARIOS * SAMPLES:
            verdicts = _verdicts(observed, counts)
            right, wrong = _decisions(verdicts, truth)
            wrong_any = [w or x for w, x in zip(wrong_any, wrong, strict=True)]
            trace.append((step * MODELS * K, right))
            if adaptive and step % REFRESH == 0:
                held = {f"s{s}": SAMPLES - counts[s] for s in range(SCENARIOS)}
                states = allocation_states(verdicts, per_sample, held)
    return {"trace": trace, "wrong": wrong_any, "counts": counts}


def _first(trace: list[tuple[int, int]], target: int) -> int:
    return next((j for j, d in trace if d >= target), trace[-1][0])


def _report_intervals(observed: np.ndarray, n: int) -> dict[tuple[int, int], tuple[float, float]]:
    """The report's own 95% interval of each pair's difference on one scenario's first ``n`` samples: its
    cluster bootstrap over samples (``rating_estimate``, 400 rounds) read by ``ranking_rows`` as the report does."""
    samples = [f"x{i}" for i in range(n)]
    frame = pd.DataFrame(
        {"sample_id": np.repeat(samples, MODELS), "model_a": NAMES * n, "score": observed[:n].ravel(), "reviewer": "r"}
    )
    est = rating_estimate(frame, NAMES, samples, bootstrap_weights(n, 400, np.random.default_rng(n)))
    out = {}
    for p in ranking_rows(est, "overall").pairs:
        if p.ci_low is None or p.ci_high is None:
            continue
        a, b = int(p.model_a[1:]), int(p.model_b[1:])
        out[(a, b)] = (p.ci_low, p.ci_high)
    return out


def _coverage(rng: np.random.Generator, studies: int) -> tuple[float, float, float]:
    """Under adaptive allocation (models 0.3 apart at most): the share of pairs whose fixed-sample 95% t-interval
    and whose report interval (its cluster bootstrap) at the end hold the truth, and the share of studies where
    every sequence held it at every look."""
    fixed, report, held = [], [], []
    for _ in range(studies):
        truth, observed = _study(rng, 0.3)
        run = _run(rng, truth, observed, adaptive=True)
        counts = run["counts"]
        assert isinstance(counts, list)
        for s, n in enumerate(counts):
            if n < 3:
                continue
            for a, b in PAIRS:
                d = (observed[s, :n, a] - observed[s, :n, b]) * 1.0
                half = stats.t.ppf(0.975, n - 1) * d.std(ddof=1) / np.sqrt(n)
                fixed.append(abs(d.mean() - (truth[s, a] - truth[s, b])) <= half)
            for (a, b), (low, high) in _report_intervals(observed[s], n).items():
                report.append(low <= truth[s, a] - truth[s, b] <= high)
        held.append(_sequences_hold(observed, truth, counts))
    return float(np.mean(fixed)), float(np.mean(report)), float(np.mean(held))


def _sequences_hold(observed: np.ndarray, truth: np.ndarray, counts: list[int]) -> bool:
    from reviewer_app.analysis.anytime import asymptotic_sequence

    alpha = 0.05 / len(PAIRS)
    for s, n in enumerate(counts):
        for a, b in PAIRS:
            low, high = asymptotic_sequence(observed[s, :n, a] - observed[s, :n, b], alpha, SAMPLES)
            true = truth[s, a] - truth[s, b]
            if np.any(low > true) or np.any(high < true):
                return False
    return True


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--studies", type=int, default=40)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument(
        "--spreads", default="0.3,0.3,0.3,0.3", help="per scenario, the points the models' true means lie within"
    )
    parser.add_argument("--null-only", action="store_true", help="only the equal-models rows (more studies, faster)")
    parser.add_argument("--even", action="store_true", help="models evenly spaced within the spread, not at random")
    args = parser.parse_args()
    spreads = [float(x) for x in args.spreads.split(",")]
    assert len(spreads) == SCENARIOS, f"--spreads needs {SCENARIOS} numbers"
    rng = np.random.default_rng(args.seed)
    started = time.perf_counter()
    ratios, uni_need, ada_need, targets, half_budget = [], [], [], [], {"uniform": [], "adaptive": []}
    for _ in range(0 if args.null_only else args.studies):
        truth, observed = _study(rng, spreads, args.even)
        uni = _run(rng, truth, observed, adaptive=False)
        ada = _run(rng, truth, observed, adaptive=True)
        ut, at = uni["trace"], ada["trace"]
        assert isinstance(ut, list) and isinstance(at, list)
        half = len(ut) // 2
        target = ut[half - 1][1]  # at the whole budget both have rated every sample: the same data
        targets.append(target)
        u, a = _first(ut, target), _first(at, target)
        uni_need.append(u)
        ada_need.append(a)
        ratios.append(a / u)
        half_budget["uniform"].append(ut[half - 1][1])
        half_budget["adaptive"].append(at[half - 1][1])
    null = {"uniform": [], "adaptive": []}  # type: dict[str, list[tuple[bool, ...]]]
    for _ in range(args.studies):
        truth, observed = _study(rng, 0.0)
        for kind in null:
            run = _run(rng, truth, observed, adaptive=kind == "adaptive")
            wrong = run["wrong"]
            assert isinstance(wrong, list)
            null[kind].append(tuple(wrong))
    nan = float("nan")
    fixed_cov, report_cov, seq_cov = (nan, nan, nan) if args.null_only else _coverage(rng, max(args.studies // 2, 10))
    budget = SCENARIOS * SAMPLES * MODELS * K
    layout = "evenly spaced" if args.even else "at random"
    design = (
        f"{SCENARIOS} scenarios x {MODELS} models ({layout} within {args.spreads} points) x {SAMPLES} samples, k = {K}"
    )
    print(f"{args.studies} studies, {design}; budget {budget:,} judgements")
    print(f"{time.perf_counter() - started:.0f} s\n")
    print("| measure | uniform | adaptive |")
    print("|---|---|---|")
    if args.null_only:
        targets = ratios = uni_need = ada_need = [float("nan")]
        half_budget = {"uniform": [float("nan")], "adaptive": [float("nan")]}
    print(f"| correct decisions at half the budget (uniform's: the target) | {np.mean(targets):.1f} | |")
    print(f"| judgements to reach the target, median | {np.median(uni_need):,.0f} | {np.median(ada_need):,.0f} |")
    print(f"| judgements to reach the target, mean | {np.mean(uni_need):,.0f} | {np.mean(ada_need):,.0f} |")
    print(f"| adaptive / uniform judgements, median (mean) | | {np.median(ratios):.2f} ({np.mean(ratios):.2f}) |")
    print(
        f"| correct decisions at half the budget, mean | {np.mean(half_budget['uniform']):.1f} | "
        f"{np.mean(half_budget['adaptive']):.1f} |"
    )
    for kind in ("uniform", "adaptive"):
        flags = np.array(null[kind])
        null[kind] = [tuple(x) for x in flags]
    per_family = {k: float(np.mean(np.array(v))) for k, v in null.items()}
    per_study = {k: float(np.mean(np.array(v).any(axis=1))) for k, v in null.items()}
    print(
        f"| equal models: false separation at any look, per scenario (the report's family) | "
        f"{per_family['uniform']:.1%} | {per_family['adaptive']:.1%} |"
    )
    print(
        f"| equal models: false separation at any look, any of the 4 scenarios | {per_study['uniform']:.1%} | "
        f"{per_study['adaptive']:.1%} |"
    )
    print(f"| coverage at the end, fixed-sample 95% t-interval per pair | | {fixed_cov:.1%} |")
    print(f"| coverage at the end, the report's 95% interval per pair (cluster bootstrap) | | {report_cov:.1%} |")
    print(f"| coverage, every sequence at every look (simultaneous) | | {seq_cov:.1%} |")


if __name__ == "__main__":
    main()
