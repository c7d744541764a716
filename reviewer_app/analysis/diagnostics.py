"""Per-reviewer diagnostics: leniency, influence on agreement, gold accuracy, self-consistency, speed, and flags.

Thresholds for a flag (documented in the methods appendix): leniency of at least 0.10 of the scale
(over at least 10 shared ratings), agreement rising by at least 0.05 alpha without the reviewer, gold
accuracy under 70% (at least 3 gold answers), self-consistency under 60% (at least 3 repeats), or a median
time per item under a third of the rest of the panel's (see :func:`fast_reference`).

Speed: the app times every item it shows (``seconds_spent``, from showing to submit); imported ratings have
no time and never count. A reviewer's speed is the median over their timed items (at least 10), so a few
quick answers or a long pause do not move it. The panel's speed is the median of the *other* reviewers'
medians (each over at least 10 timed items): the reviewer's own speed never lowers the bar, one slow
colleague does not raise it much, and a reviewer with no timed colleague is not judged. A third is far
outside the two-fold spread of reading speeds among careful experts. The rule is relative: a panel in which
everyone rushes flags no one (the table still shows each reviewer's median seconds per item).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd

from reviewer_app.analysis.agreement import (
    alpha_from_coincidences,
    alpha_many_values,
    coincidences,
    dimension_values,
)
from reviewer_app.analysis.prepare import RatingParts, add_scores, canonical_outcome, numeric_values
from reviewer_app.domain.enums import Level, Mode
from reviewer_app.domain.report_panel import ReviewerRow
from reviewer_app.domain.rubric import Rubric

LENIENCY_FLAG = 0.10
ALPHA_GAIN_FLAG = 0.05
GOLD_FLAG = 0.70
CONSISTENCY_FLAG = 0.60
FAST_SHARE = 1 / 3  # a median time per item below this share of the rest of the panel's is implausibly fast
MIN_TIMED = 10  # timed items behind a reviewer's median before it counts (for the reviewer and for the panel)


def _comparable(frame: pd.DataFrame, rubric: Rubric) -> pd.DataFrame:
    """A ``key`` column comparable across reviewers: the canonical pairwise outcome or the value text."""
    out = frame.copy(deep=False)  # copy-on-write: the new column never reaches the caller's frame
    out["key"] = canonical_outcome(out) if rubric.mode == Mode.PAIRWISE else out["value"].astype(str)
    return out


def leniency(scored: pd.DataFrame) -> pd.DataFrame:
    """Each reviewer's mean difference (share of the scale) from the other reviewers of the same items.

    ``scored`` needs ``item_id, dimension, reviewer, norm``. Returns ``reviewer, leniency, n_shared``.
    """
    s = scored.dropna(subset=["norm"])
    grp = s.groupby(["item_id", "dimension"])["norm"]
    total, count = grp.transform("sum"), grp.transform("count")
    shared = count >= 2
    others = (total - s["norm"]) / (count - 1).where(shared)
    diff = (s["norm"] - others)[shared]
    res = diff.groupby(s.loc[shared, "reviewer"]).agg(["mean", "count"])
    return res.rename(columns={"mean": "leniency", "count": "n_shared"}).reset_index()


def disagreement(frame: pd.DataFrame) -> pd.Series:
    """Per reviewer: on items others also rated, the share of other reviewers' answers that differ."""
    grp = frame.groupby(["item_id", "dimension"])
    count = grp["key"].transform("count")
    same = frame.groupby(["item_id", "dimension", "key"])["key"].transform("count")
    shared = count >= 2
    share_diff = ((count - same) / (count - 1).where(shared))[shared]
    return share_diff.groupby(frame.loc[shared, "reviewer"]).mean()


def alpha_changes(main: pd.DataFrame, rubric: Rubric, reviewers: list[str]) -> dict[str, float | None]:
    """Mean over dimensions of (alpha without the reviewer - alpha with everyone); positive means the
    panel agrees more without them. Uses the coincidence-matrix formula (tested equal to the package)."""
    deltas: dict[str, list[float]] = {r: [] for r in reviewers}
    for dim in rubric.dimensions:
        part = main[main["dimension"] == dim.name]
        level, domain = dimension_values(dim, rubric.mode)
        if domain is None:  # a continuous scale: alpha from per-unit sums, without coincidence matrices
            _continuous_changes(part, level, reviewers, deltas)
            continue
        values = (
            part["key"] if rubric.mode == Mode.PAIRWISE or not dim.numeric() else numeric_values(part["value"], "raise")
        )
        codes = values.map({v: i for i, v in enumerate(domain)})
        ok = codes.notna().to_numpy()
        if not ok.any():
            continue
        _, unit = np.unique(part["item_id"].to_numpy()[ok], return_inverse=True)
        code = codes.to_numpy()[ok].astype(int)
        who = part["reviewer"].to_numpy()[ok]
        counts = np.zeros((unit.max() + 1, len(domain)))
        np.add.at(counts, (unit, code), 1)
        dom = np.asarray(domain if level in ("interval", "ratio") else range(len(domain)), dtype=float)
        base = alpha_from_coincidences(coincidences(counts)[None], level, dom)[0]
        if np.isnan(base):
            continue
        m = counts.sum(axis=1)
        parts = _coincidence_parts(counts, m, 1.0)
        who_code, who_names = pd.factorize(who)
        for r in reviewers:
            found = np.flatnonzero(who_names == r) if len(who_names) else np.empty(0, dtype=np.intp)
            if not len(found):
                continue
            mine = who_code == found[0]
            # Only the units this reviewer rated change: swap their integer contributions, then divide and
            # add up in the same order as ``coincidences(without)`` (exact, so the same alpha to the bit).
            touched = np.unique(unit[mine])
            before = counts[touched]
            after = before.copy()
            np.subtract.at(after, (np.searchsorted(touched, unit[mine]), code[mine]), 1)
            changed = dict(parts)
            for k, block in _coincidence_parts(before, m[touched], -1.0).items():
                changed[k] = changed[k] + block
            for k, block in _coincidence_parts(after, after.sum(axis=1), 1.0).items():
                changed[k] = changed[k] + block if k in changed else block
            total = np.zeros((len(domain), len(domain)))
            for k in sorted(changed):
                total += changed[k] / (k - 1)
            a = alpha_from_coincidences(total[None], level, dom)[0]
            if not np.isnan(a):
                deltas[r].append(float(a - base))
    return {r: (float(np.mean(d)) if d else None) for r, d in deltas.items()}


def _continuous_changes(part: pd.DataFrame, level: Level, reviewers: list[str], deltas: dict[str, list[float]]) -> None:
    values = numeric_values(part["value"]).to_numpy()
    ok = np.isfinite(values)
    units, vals, who = part["item_id"].to_numpy()[ok], values[ok], part["reviewer"].to_numpy()[ok]
    base = _many_values_alpha(units, vals, level)
    if np.isnan(base):
        return
    for r in reviewers:
        keep = who != r
        if keep.all():
            continue
        a = _many_values_alpha(units[keep], vals[keep], level)
        if not np.isnan(a):
            deltas[r].append(a - base)


def _many_values_alpha(units: np.ndarray, values: np.ndarray, level: Level) -> float:
    """Point alpha of a continuous dimension (NaN when undefined)."""
    _, unit = np.unique(units, return_inverse=True)
    pairable = np.bincount(unit)[unit] >= 2
    if len(np.unique(values[pairable])) < 2:
        return float("nan")
    _, unit = np.unique(unit[pairable], return_inverse=True)
    return alpha_many_values(unit, values[pairable], level, 0, np.random.default_rng(0))[0]


def _coincidence_parts(counts: np.ndarray, m: np.ndarray, sign: float) -> dict[float, np.ndarray]:
    """Per number of ratings k >= 2: ``sign`` x the sum over units rated k times of (c c' - diag(c)), the
    integer part of :func:`~reviewer_app.analysis.agreement.coincidences` before dividing by k - 1."""
    out = {}
    for k in np.unique(m[m >= 2]):
        block = counts[m == k]
        out[float(k)] = sign * (block.T @ block - np.diag(block.sum(axis=0)))
    return out


def gold_accuracy(gold: pd.DataFrame, rubric: Rubric) -> pd.DataFrame:
    """Share of gold answers equal to the rubric's expected answer, per reviewer (``gold_n, gold_accuracy``).

    Pairwise gold answers are compared by the winning model's name, so the blind swap does not matter.
    """
    rows = []
    for g in rubric.gold:
        for r in gold[gold["sample_id"].astype(str) == g.sample_id].to_dict("records"):
            expected = g.expected.get(str(r["dimension"]))
            if expected is None:
                continue
            if rubric.mode == Mode.PAIRWISE:
                if {r["model_a"], r["model_b"]} != set(g.models):
                    continue
                want = {"left": g.models[0], "right": g.models[1]}.get(expected, expected)
                got_side = canonical_outcome(pd.DataFrame([r])).iloc[0]
                got = {"a": r["model_a"], "b": r["model_b"]}.get(got_side, got_side)
                ok = got == want
            else:
                if r["model_a"] != g.models[0]:
                    continue
                ok = _same_answer(str(r["value"]), expected)
            rows.append((r["reviewer"], ok))
    frame = pd.DataFrame(rows, columns=["reviewer", "ok"])
    res = frame.groupby("reviewer")["ok"].agg(["count", "mean"])
    return res.rename(columns={"count": "gold_n", "mean": "gold_accuracy"}).reset_index()


def _same_answer(given: str, expected: str) -> bool:
    """Equal as text, or as numbers ("12.50" is "12.5" on a continuous scale)."""
    if given == expected:
        return True
    try:
        return float(given) == float(expected)
    except ValueError:
        return False


def self_consistency(parts: RatingParts, rubric: Rubric) -> pd.DataFrame:
    """Share of repeated answers equal to the same reviewer's first answer on the same item and dimension."""
    first = _comparable(pd.concat([parts.main, parts.gold]), rubric)
    again = _comparable(parts.repeats, rubric)
    cols = ["item_id", "reviewer", "dimension"]
    both = again[cols + ["key"]].merge(first[cols + ["key"]], on=cols, suffixes=("_again", "_first"))
    both["same"] = both["key_again"] == both["key_first"]
    res = both.groupby("reviewer")["same"].agg(["count", "mean"])
    return res.rename(columns={"count": "repeat_n", "mean": "self_consistency"}).reset_index()


def seconds_per_item(parts: RatingParts) -> pd.DataFrame:
    """Per reviewer: the median seconds spent per timed item (``median_seconds``) and how many were timed
    (``timed_n``), over every showing answered in the app (ordinary items, gold checks and repeats alike).

    ``seconds_spent`` repeats on each dimension's row of a showing, so each showing (item, reviewer,
    occurrence) counts once. Imported ratings have no time (NaN) and are left out; a reviewer with none timed
    has no row."""
    keys = ["item_id", "reviewer", "occurrence"]
    frames = [p[[*keys, "seconds_spent"]] for p in (parts.main, parts.gold, parts.repeats) if "seconds_spent" in p]
    if not frames:  # a frame from elsewhere, without times
        return pd.DataFrame({"reviewer": pd.Series([], dtype=object), "median_seconds": [], "timed_n": []})
    showings = pd.concat(frames).drop_duplicates(keys)
    seconds = pd.to_numeric(showings["seconds_spent"], errors="coerce")
    timed = showings.assign(seconds_spent=seconds)[seconds.notna()]
    res = timed.groupby("reviewer")["seconds_spent"].agg(["median", "count"])
    return res.rename(columns={"median": "median_seconds", "count": "timed_n"}).reset_index()


def fast_reference(speeds: pd.DataFrame) -> dict[str, float]:
    """Per reviewer with at least ``MIN_TIMED`` timed items, the panel's speed they are compared with: the
    median of the other reviewers' median seconds per item, over those with at least ``MIN_TIMED`` timed
    items too. Reviewers without such a colleague are left out (nothing to compare with).

    ``speeds`` is :func:`seconds_per_item`."""
    enough = speeds[speeds["timed_n"] >= MIN_TIMED]
    names = [str(r) for r in enough["reviewer"]]
    medians = enough["median_seconds"].to_numpy(dtype=float)
    out = {}
    for k, name in enumerate(names):
        others = np.delete(medians, k)
        if len(others):
            out[name] = float(np.median(others))
    return out


def reviewer_diagnostics(parts: RatingParts, rubric: Rubric, scored: pd.DataFrame | None = None) -> list[ReviewerRow]:
    """One row per reviewer with the diagnostics above and ``flag`` plus the ``reasons`` for it.

    ``scored`` is ``add_scores(parts.main, rubric)`` when the caller has it already (rating mode)."""
    main = _comparable(parts.main, rubric)
    reviewers = sorted(set(main["reviewer"]) | set(parts.gold["reviewer"]) | set(parts.repeats["reviewer"]))
    if not reviewers:
        return []
    table = pd.DataFrame({"reviewer": reviewers})
    table = table.merge(main.groupby("reviewer").size().rename("n_ratings").reset_index(), how="left")
    if rubric.mode == Mode.RATING:
        table = table.merge(leniency(add_scores(parts.main, rubric) if scored is None else scored), how="left")
    table = table.merge(disagreement(main).rename("disagreement").reset_index(), how="left")
    table = table.merge(gold_accuracy(parts.gold, rubric), how="left")
    table = table.merge(self_consistency(parts, rubric), how="left")
    speeds = seconds_per_item(parts)
    table = table.merge(speeds, how="left")
    panel_seconds = fast_reference(speeds)
    changes = alpha_changes(main, rubric, reviewers)
    rows = []
    for rec in table.to_dict("records"):
        row = ReviewerRow(
            reviewer=str(rec["reviewer"]),
            n_ratings=_int(rec.get("n_ratings")),
            leniency=_float(rec.get("leniency")),
            n_shared=_int(rec.get("n_shared")),
            disagreement=_float(rec.get("disagreement")),
            alpha_change_without=changes.get(str(rec["reviewer"])),
            gold_n=_int(rec.get("gold_n")),
            gold_accuracy=_float(rec.get("gold_accuracy")),
            repeat_n=_int(rec.get("repeat_n")),
            self_consistency=_float(rec.get("self_consistency")),
            median_seconds=_float(rec.get("median_seconds")),
            timed_n=_int(rec.get("timed_n")),
            reasons=(),
            flag=False,
        )
        reasons = _reasons(row, panel_seconds.get(row.reviewer))
        rows.append(replace(row, reasons=tuple(reasons), flag=bool(reasons)))
    return rows


def _reasons(row: ReviewerRow, panel_seconds: float | None = None) -> list[str]:
    """Why ``row`` is flagged (empty: it is not); ``panel_seconds`` is :func:`fast_reference`'s value for it."""
    reasons = []
    len_ = row.leniency
    if len_ is not None and (row.n_shared or 0) >= 10 and abs(len_) >= LENIENCY_FLAG:
        word = "higher" if len_ > 0 else "lower"
        reasons.append(f"scores {abs(len_):.0%} of the scale {word} than the others on the same items")
    gain = row.alpha_change_without
    if gain is not None and gain >= ALPHA_GAIN_FLAG:
        reasons.append(f"agreement (alpha) rises by {gain:.2f} without this reviewer")
    if row.gold_accuracy is not None and (row.gold_n or 0) >= 3 and row.gold_accuracy < GOLD_FLAG:
        reasons.append(f"got {row.gold_accuracy:.0%} of {row.gold_n} gold checks right")
    sc = row.self_consistency
    if sc is not None and (row.repeat_n or 0) >= 3 and sc < CONSISTENCY_FLAG:
        reasons.append(f"gave the same answer to {sc:.0%} of {row.repeat_n} repeated items")
    secs = row.median_seconds
    if secs is not None and panel_seconds is not None and (row.timed_n or 0) >= MIN_TIMED:
        if secs < FAST_SHARE * panel_seconds:
            reasons.append(
                f"answers implausibly fast: median {_seconds(secs)} s per item against {_seconds(panel_seconds)} s "
                f"for the rest of the panel ({row.timed_n} timed items)"
            )
    return reasons


def _seconds(x: float) -> str:
    """Seconds to two or three significant digits: "4.2", "45", "130"."""
    return f"{x:.1f}" if x < 10 else f"{x:.0f}"


def _float(x: Any) -> float | None:
    return None if x is None or pd.isna(x) else float(x)


def _int(x: Any) -> int | None:
    return None if x is None or pd.isna(x) else int(x)
