"""The LLM judge's report card: the judge measured against the panel like one more reviewer, per scenario.

Everything is computed on the panel's counted ratings (first showings of non-gold items, anchors out, as for
the rankings) and the judge's ratings of the same items. The judge's pairwise verdict on an item combines its
two orders: the same verdict in both is the verdict, verdicts that flip with the order count as a tie. Its
repeats (``--repeats``) are averaged for scores; agreement uses its first.

- **Agreement.** Krippendorff's alpha of the reviewers (as in the report's agreement table), and for each
  reviewer the alpha of the panel with the judge's ratings in that reviewer's place, on the items the reviewer
  rated (with the report's bootstrap over items): a judge within the reviewers' spread leaves alpha where it was.
- **The Alternative Annotator Test** (Calderon, Reichart & Dror, "The Alternative Annotator Test for
  LLM-as-a-Judge", ACL 2025; as their reference code ``nitaytech/AltTest`` computes it). For each reviewer h and
  each item h rated with at least one other reviewer: the judge's alignment with the other reviewers and h's
  (minus the root mean squared distance to each of them for scores, the share giving the same answer for
  categories and pairwise verdicts); the judge wins the item if its alignment is at least h's, h wins if h's is
  at least the judge's (a tie is a win for both). With d = 1[h wins] - 1[judge wins], a one-sided t-test of
  H0: mean(d) >= epsilon, epsilon = 0.2 (the paper's margin on the probability of winning, for expert
  annotators), p-values adjusted across reviewers by Benjamini-Yekutieli; the winning rate is the share of
  reviewers for whom H0 is rejected, and the judge passes at 0.5 or more. With two reviewers per item "the
  others" is one reviewer; the test needs at least ``MIN_ITEMS`` items per reviewer (the paper's code: 30).
  (The first version tested the difference of the distances with 0.2 as a share of the scale: a judge 0.8
  points worse than a reviewer on every item passed, and one with twice a reviewer's noise stood in in 90% of
  simulated panels; with the paper's test, in none.)
- **Bias.** Per model, the judge's mean minus the panel's on the outputs both rated (pairwise: the share of
  its comparisons the model wins, ties half), with a 95% interval by Student's t over the samples (each
  sample's mean difference one observation: clustered by sample) and its two-sided p, Holm-adjusted across
  the models: "favours" a model below 5%.
  **Length bias**: the slope of the judge's excess over the panel (per output; pairwise, for the first
  model of the pair) on the outputs' length in hundreds of words (pairwise: the difference of the two), with
  the same bootstrap. **Position bias** (pairwise): the share of the judge's decisive verdicts (A or B) that
  pick the answer shown first, with a Wilson interval, and its position consistency (see above).
- **Decisions.** Kendall's tau between the judge's model means and the panel's on the same outputs, with the
  bootstrap's percentile interval; and the pairs of models that one of them separates (95% bootstrap interval
  of the mean per-sample difference excluding 0, unadjusted) and the other does not.

The verdict's rule is :data:`~reviewer_app.domain.report_judge_card.VERDICT_RULE`, stated in the report.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy import stats

from reviewer_app.analysis.agreement import alpha_with_ci, dimension_values
from reviewer_app.analysis.inference import holm
from reviewer_app.analysis.prepare import (
    bootstrap_weights,
    canonical_outcome,
    finite_or_none,
    numeric_values,
    split_ratings,
    sub_rng,
)
from reviewer_app.domain.enums import Mode
from reviewer_app.domain.report_judge_card import (
    JudgeAgreementRow,
    JudgeBiasRow,
    JudgeCard,
    JudgeDimensionCard,
    JudgeVerdict,
    LeaveOneOutRow,
)
from reviewer_app.domain.rubric import Dimension, Rubric

__all__ = ["EPSILON", "LOW_PANEL_ALPHA", "MIN_ITEMS", "judge_cards"]

EPSILON = 0.2  # the Alternative Annotator Test's margin (Calderon et al. 2025, for expert annotators)
MIN_ITEMS = 10  # items a reviewer shares with another reviewer and the judge, for the test against them
LOW_PANEL_ALPHA = 0.4  # below this the panel's own agreement cannot certify a judge
MIN_CONSISTENCY = 0.8  # pairwise: share of verdicts that stay when the answers are swapped
_WIN = {"a": 1.0, "b": 0.0, "tie": 0.5, "both_bad": 0.5}


def _combine_orders(judge: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Pairwise: the judge's verdict per (item, repeat, question) in canonical terms ("a", "b", "tie",
    "both_bad"), an order-flipped verdict a tie; and the per-order rows with their canonical verdict and
    whether it held in the other order."""
    rows = judge.assign(outcome=canonical_outcome(judge).to_numpy())
    keys = ["item_id", "occurrence", "dimension"]
    both = rows.groupby(keys, sort=False)["outcome"].agg(["nunique", "first", "size"]).reset_index()
    both["combined"] = np.where(both["nunique"] > 1, "tie", both["first"])
    combined = rows.drop_duplicates(keys).merge(both[[*keys, "combined", "size"]], on=keys)
    combined = combined.assign(outcome=combined["combined"], swapped=False)
    per_order = rows.merge(both[[*keys, "nunique", "size"]], on=keys)
    return combined.drop(columns=["combined", "size"]), per_order


def _answers(frame: pd.DataFrame, dim: Dimension, mode: Mode) -> pd.Series:
    """Each row's answer as compared: a canonical verdict, a number, or a category's text."""
    if mode == Mode.PAIRWISE:
        return frame["outcome"] if "outcome" in frame else canonical_outcome(frame)
    if dim.numeric():
        return numeric_values(frame["value"])
    return frame["value"].astype(str)


def _alignment(x: pd.Series, others: pd.DataFrame, dim: Dimension, mode: Mode) -> np.ndarray:
    """Alignment of each answer in ``x`` (indexed by item) with the other reviewers' answers to the item, the
    paper's scores: minus the root mean squared distance to each of them for numbers (``neg_rmse``), the share
    of them giving the same answer for categories and pairwise verdicts (``accuracy``)."""
    numeric = mode == Mode.RATING and dim.numeric()
    answers: dict[object, list[object]] = others.groupby("item_id")["answer"].agg(list).to_dict()
    out = []
    for item, v in x.items():
        theirs = answers[item]
        if numeric:
            out.append(-float(np.sqrt(np.mean((np.asarray(theirs, dtype=float) - float(v)) ** 2))))
        else:
            out.append(float(np.mean([str(t) == str(v) for t in theirs])))
    return np.asarray(out, dtype=float)


def _aat(
    panel: pd.DataFrame, judge: pd.Series, dim: Dimension, mode: Mode
) -> dict[str, tuple[float | None, float | None, int]]:
    """Per reviewer h: (the judge's advantage probability over h, the one-sided p before adjustment, items).

    On each item h rated with another reviewer, the judge wins if its alignment with the others is at least
    h's, and h wins if h's is at least the judge's (a tie is a win for both). With d = 1[h wins] - 1[judge
    wins], a one-sided t-test of H0: mean(d) >= epsilon against mean(d) < epsilon (Calderon et al. 2025, the
    alt-test: epsilon is a margin on the probability of winning, 0.2 for expert annotators). The advantage
    probability is the share of items the judge wins (their rho)."""
    out: dict[str, tuple[float | None, float | None, int]] = {}
    for reviewer in sorted(panel["reviewer"].unique().tolist()):
        mine = panel[panel["reviewer"] == reviewer].drop_duplicates("item_id").set_index("item_id")["answer"]
        others = panel[(panel["reviewer"] != reviewer) & panel["item_id"].isin(mine.index)]
        items = mine.index.intersection(pd.Index(others["item_id"].unique())).intersection(judge.index)
        if len(items) < MIN_ITEMS:
            out[reviewer] = (None, None, len(items))
            continue
        others = others[others["item_id"].isin(items)]
        score_judge = _alignment(judge.loc[items], others, dim, mode)
        score_human = _alignment(mine.loc[items], others, dim, mode)
        judge_wins = (score_judge >= score_human).astype(float)
        d = (score_human >= score_judge).astype(float) - judge_wins
        sd = float(np.std(d, ddof=1))
        mean = float(d.mean())
        if sd == 0.0:
            p = 0.0 if mean < EPSILON else 1.0
        else:
            p = float(stats.t.cdf((mean - EPSILON) / (sd / np.sqrt(len(d))), len(d) - 1))
        out[reviewer] = (float(judge_wins.mean()), p, len(items))
    return out


def _by_adjust(p: Sequence[float]) -> list[float]:
    """Benjamini-Yekutieli adjusted p-values (valid under any dependence between the tests)."""
    m = len(p)
    if not m:
        return []
    c = float(np.sum(1.0 / np.arange(1, m + 1)))
    order = np.argsort(p)
    ranked = np.asarray(p, dtype=float)[order] * m * c / np.arange(1, m + 1)
    adjusted = np.minimum.accumulate(ranked[::-1])[::-1].clip(max=1.0)
    out = np.empty(m)
    out[order] = adjusted
    return out.tolist()


def _wilson(k: int, n: int) -> tuple[float | None, float | None]:
    if n == 0:
        return None, None
    z = 1.959963984540054
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return float(centre - half), float(centre + half)


def _per_output(frame: pd.DataFrame, score: pd.Series, pairwise: bool) -> pd.DataFrame:
    """Mean score per output: (sample_id, model) -> score; pairwise, each model of a pair gets its win share."""
    if not pairwise:
        scored = pd.DataFrame({"sample_id": frame["sample_id"], "model": frame["model_a"], "score": score})
        return scored.dropna().groupby(["sample_id", "model"])["score"].mean().reset_index()
    win = score.map(_WIN)
    a = pd.DataFrame({"sample_id": frame["sample_id"], "model": frame["model_a"], "score": win})
    b = pd.DataFrame({"sample_id": frame["sample_id"], "model": frame["model_b"], "score": 1.0 - win})
    return pd.concat([a, b]).dropna().groupby(["sample_id", "model"])["score"].mean().reset_index()


class _Boot:
    """The cluster bootstrap over samples shared by a card's measures: weights per sample and replicate."""

    def __init__(self, samples: list[str], rounds: int, rng: np.random.Generator) -> None:
        self.index = {s: i for i, s in enumerate(samples)}
        self.w = bootstrap_weights(len(samples), rounds, rng).astype(float)  # (rounds, samples)

    def means(self, sample: pd.Series, values: np.ndarray) -> np.ndarray:
        """Weighted mean of ``values`` (one per row, rows grouped by ``sample``) in each replicate."""
        at = sample.map(self.index).to_numpy(dtype=int)
        w = self.w[:, at]
        total = w.sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.asarray((w @ values) / total)

    def slope(self, sample: pd.Series, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        at = sample.map(self.index).to_numpy(dtype=int)
        w = self.w[:, at]
        sw = w.sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            mx, my = (w @ x) / sw, (w @ y) / sw
            sxy = (w * (x[None, :] - mx[:, None]) * (y[None, :] - my[:, None])).sum(axis=1)
            sxx = (w * (x[None, :] - mx[:, None]) ** 2).sum(axis=1)
            return np.asarray(sxy / sxx)


def _interval(reps: np.ndarray) -> tuple[float | None, float | None]:
    valid = reps[np.isfinite(reps)]
    if len(valid) < 0.5 * len(reps) or not len(valid):
        return None, None
    low, high = np.percentile(valid, [2.5, 97.5])
    return float(low), float(high)


def _t_interval(per_sample: np.ndarray) -> tuple[float | None, float | None, float]:
    """The 95% interval of a mean over samples (one value per sample: the clusters) by Student's t, and the
    two-sided p of its being 0. Not the bootstrap: with a few dozen samples its percentile interval is too
    narrow (a judge as lenient as the panel was flagged in 10% of simulated panels, against 5% by t)."""
    n = len(per_sample)
    if n < 2:
        return None, None, 1.0
    mean, se = float(per_sample.mean()), float(per_sample.std(ddof=1) / np.sqrt(n))
    if se == 0.0:
        return mean, mean, 1.0 if mean == 0.0 else 0.0
    half = float(stats.t.ppf(0.975, n - 1)) * se
    return mean - half, mean + half, float(2 * stats.t.sf(abs(mean) / se, n - 1))


def judge_cards(
    ratings: pd.DataFrame,
    judge: pd.DataFrame,
    rubric: Rubric,
    lengths: pd.DataFrame,
    *,
    seed: int,
    rounds: int,
) -> list[JudgeCard]:
    """The judge's report card per scenario, from the panel's ratings frame and the judge's (both
    ``results.frames``' columns, anchors out) and the outputs' lengths (``sample_id``, ``model``,
    ``n_words``). Deterministic for ``seed``, whatever the order of scenarios."""
    mode = Mode(rubric.mode)
    panel = split_ratings(ratings).main
    judged = judge[~judge["is_gold"].astype(bool)]
    if mode == Mode.PAIRWISE and len(judged):
        combined, per_order = _combine_orders(judged)
    else:
        combined, per_order = judged, judged.iloc[0:0]
    words = lengths.groupby(["sample_id", "model"])["n_words"].mean()
    cards = []
    for scenario in sorted(panel["scenario"].unique().tolist()):
        j = combined[combined["scenario"] == scenario]
        if j.empty:
            continue
        p = panel[panel["scenario"] == scenario]
        dims = [d for d in rubric.dimensions_for(scenario) if mode == Mode.PAIRWISE or d.numeric() or d.choices]
        cards.append(
            _card(scenario, p, j, per_order[per_order["scenario"] == scenario], dims, mode, words, seed, rounds)
        )
    return cards


def _card(
    scenario: str,
    panel: pd.DataFrame,
    judge: pd.DataFrame,
    per_order: pd.DataFrame,
    dims: list[Dimension],
    mode: Mode,
    words: pd.Series,
    seed: int,
    rounds: int,
) -> JudgeCard:
    agreement, loo, bias, measures = [], [], [], []
    samples = sorted(set(panel["sample_id"]) | set(judge["sample_id"]))
    for dim in dims:
        p = panel[panel["dimension"] == dim.name]
        j = judge[judge["dimension"] == dim.name]
        if p.empty or j.empty:
            continue
        p = p.assign(answer=_answers(p, dim, mode).to_numpy())
        j = j.assign(answer=_answers(j, dim, mode).to_numpy())
        row, rows = _agreement(p, j, dim, mode, scenario, seed, rounds)
        agreement.append(row)
        loo += rows
        if mode == Mode.PAIRWISE or dim.numeric():
            boot = _Boot(samples, rounds, sub_rng(seed, "judge-card", scenario, dim.name))
            b, m = _bias_and_measures(p, j, per_order[per_order["dimension"] == dim.name], dim, mode, words, boot)
            bias += b
            measures.append(m)
    verdict, reasons = _verdict(agreement, bias, measures, mode)
    return JudgeCard(
        scenario=scenario,
        verdict=verdict,
        reasons=tuple(reasons),
        agreement=tuple(agreement),
        leave_one_out=tuple(loo),
        bias=tuple(bias),
        measures=tuple(measures),
    )


def _agreement(
    panel: pd.DataFrame, judge: pd.DataFrame, dim: Dimension, mode: Mode, scenario: str, seed: int, rounds: int
) -> tuple[JudgeAgreementRow, list[LeaveOneOutRow]]:
    level, domain = dimension_values(dim, mode)
    first = judge[judge["occurrence"] == judge["occurrence"].min()].drop_duplicates("item_id").set_index("item_id")
    judge_answer = first["answer"]

    def alpha(frame: pd.DataFrame, what: str) -> tuple[float | None, float | None, float | None]:
        data = pd.DataFrame({"unit": frame["item_id"], "reviewer": frame["reviewer"], "value": frame["answer"]})
        row = alpha_with_ci(
            data, level=level, domain=domain, rounds=rounds, rng=sub_rng(seed, "judge-alpha", scenario, dim.name, what)
        )
        return row.alpha, row.ci_low, row.ci_high

    panel_alpha = alpha(panel, "panel")
    reviewers = sorted(panel["reviewer"].unique().tolist())
    tested = _aat(panel, judge_answer, dim, mode)
    usable = [r for r in reviewers if tested[r][1] is not None]
    adjusted = dict(zip(usable, _by_adjust([tested[r][1] or 1.0 for r in usable]), strict=True))
    rows = []
    for reviewer in reviewers:
        theirs = panel[panel["reviewer"] == reviewer]
        stand_in = first.loc[first.index.intersection(pd.Index(theirs["item_id"].unique()))].reset_index()
        swapped = pd.concat([panel[panel["reviewer"] != reviewer], stand_in.assign(reviewer="(judge)")])
        a, low, high = alpha(swapped, f"without {reviewer}")
        advantage, _p, n = tested[reviewer]
        p_adj = adjusted.get(reviewer)
        rows.append(
            LeaveOneOutRow(
                dimension=dim.name,
                replaced=reviewer,
                alpha=a,
                ci_low=low,
                ci_high=high,
                advantage=finite_or_none(advantage),
                p_value=finite_or_none(p_adj),
                won=None if p_adj is None else bool(p_adj < 0.05),
                n_items=n,
            )
        )
    wins = [r.won for r in rows if r.won is not None]
    note = None
    if not wins:
        note = f"no reviewer shares {MIN_ITEMS} items with another reviewer and the judge: the test cannot be made"
    elif len(reviewers) < 3:
        note = "fewer than 3 reviewers: the test compares the judge with a single other reviewer, and has little power"
    alphas = [r.alpha for r in rows if r.alpha is not None]
    return (
        JudgeAgreementRow(
            dimension=dim.name,
            alpha_panel=panel_alpha[0],
            alpha_panel_low=panel_alpha[1],
            alpha_panel_high=panel_alpha[2],
            alpha_with_judge=float(np.mean(alphas)) if alphas else None,
            winning_rate=float(np.mean(wins)) if wins else None,
            passed=bool(np.mean(wins) >= 0.5) if wins else None,
            reviewers=len(reviewers),
            note=note,
        ),
        rows,
    )


def _bias_and_measures(
    panel: pd.DataFrame,
    judge: pd.DataFrame,
    per_order: pd.DataFrame,
    dim: Dimension,
    mode: Mode,
    words: pd.Series,
    boot: _Boot,
) -> tuple[list[JudgeBiasRow], JudgeDimensionCard]:
    pairwise = mode == Mode.PAIRWISE
    h = _per_output(panel, panel["answer"], pairwise)
    jd = _per_output(judge, judge["answer"], pairwise)
    both = h.merge(jd, on=["sample_id", "model"], suffixes=("_panel", "_judge"))
    both["excess"] = both["score_judge"] - both["score_panel"]
    models = sorted(both["model"].unique().tolist())
    rows, ps = [], []
    for model in models:
        part = both[both["model"] == model]
        low, high, p_value = _t_interval(part.groupby("sample_id")["excess"].mean().to_numpy(dtype=float))
        ps.append(p_value)
        rows.append((model, float(part["excess"].mean()), low, high, len(part)))
    adjusted = holm(np.asarray(ps)).tolist() if ps else []
    bias = [
        JudgeBiasRow(
            dimension=dim.name, model=m, bias=finite_or_none(b), ci_low=lo, ci_high=hi, favours=bool(q < 0.05), n=n
        )
        for (m, b, lo, hi, n), q in zip(rows, adjusted, strict=True)
    ]
    # Length: the judge's excess over the panel against length (pairwise: the first model's, against the
    # difference in length of the pair's two outputs).
    if pairwise:
        first = both.merge(
            panel.drop_duplicates("item_id")[["sample_id", "model_a", "model_b"]].rename(columns={"model_a": "model"}),
            on=["sample_id", "model"],
        )
        x = (
            words.reindex(pd.MultiIndex.from_frame(first[["sample_id", "model"]])).to_numpy(dtype=float)
            - words.reindex(pd.MultiIndex.from_arrays([first["sample_id"], first["model_b"]])).to_numpy(dtype=float)
        ) / 100
        sample, y = first["sample_id"], first["excess"].to_numpy(dtype=float)
    else:
        x = words.reindex(pd.MultiIndex.from_frame(both[["sample_id", "model"]])).to_numpy(dtype=float) / 100
        sample, y = both["sample_id"], both["excess"].to_numpy(dtype=float)
    keep = np.isfinite(x) & np.isfinite(y)
    slope = low = high = None
    if keep.sum() >= 3 and np.ptp(x[keep]) > 0:
        slope = float(np.polyfit(x[keep], y[keep], 1)[0])
        low, high = _interval(boot.slope(sample[keep].reset_index(drop=True), x[keep], y[keep]))
    tau, tau_low, tau_high, judge_only, panel_only = _decisions(both, models, boot)
    position: dict[str, float | None] = {}
    if pairwise and len(per_order):
        decisive = per_order[per_order["value"].isin(["left", "right"])]
        k, n = int((decisive["value"] == "left").sum()), len(decisive)
        lo, hi = _wilson(k, n)
        twice = per_order[per_order["size"] == 2]
        position = {
            "first_shown": k / n if n else None,
            "first_shown_low": lo,
            "first_shown_high": hi,
            "consistency": float((twice["nunique"] == 1).mean()) if len(twice) else None,
        }
    card = JudgeDimensionCard(
        dimension=dim.name,
        length_slope=slope,
        length_low=low,
        length_high=high,
        tau=tau,
        tau_low=tau_low,
        tau_high=tau_high,
        judge_only_pairs=tuple(judge_only),
        panel_only_pairs=tuple(panel_only),
        **position,
    )
    return bias, card


def _decisions(
    both: pd.DataFrame, models: list[str], boot: _Boot
) -> tuple[float | None, float | None, float | None, list[str], list[str]]:
    """Kendall's tau of the two orders of the models with its interval, and the pairs separated by one only."""
    if len(models) < 2:
        return None, None, None, [], []
    reps_j = np.column_stack(
        [
            boot.means(
                both.loc[both["model"] == m, "sample_id"],
                both.loc[both["model"] == m, "score_judge"].to_numpy(dtype=float),
            )
            for m in models
        ]
    )
    reps_h = np.column_stack(
        [
            boot.means(
                both.loc[both["model"] == m, "sample_id"],
                both.loc[both["model"] == m, "score_panel"].to_numpy(dtype=float),
            )
            for m in models
        ]
    )
    mean_j = both.groupby("model")["score_judge"].mean().reindex(models).to_numpy(dtype=float)
    mean_h = both.groupby("model")["score_panel"].mean().reindex(models).to_numpy(dtype=float)
    tau = float(_tau_b(mean_j[None, :], mean_h[None, :])[0])
    taus = _tau_b(reps_j, reps_h)
    low, high = _interval(taus)
    judge_only, panel_only = [], []
    for a, b in itertools.combinations(range(len(models)), 2):
        separated = []
        for reps in (reps_j, reps_h):
            lo, hi = _interval(reps[:, a] - reps[:, b])
            separated.append(lo is not None and hi is not None and (lo > 0 or hi < 0))
        pair = f"{models[a]} / {models[b]}"
        if separated[0] and not separated[1]:
            judge_only.append(pair)
        elif separated[1] and not separated[0]:
            panel_only.append(pair)
    return finite_or_none(tau), low, high, judge_only, panel_only


def _tau_b(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Kendall's tau-b of each row of ``x`` with the same row of ``y`` (rows: bootstrap replicates; columns:
    models), as ``scipy.stats.kendalltau`` gives for one pair of rows, for all rows at once; NaN where a row
    has a missing value or no untied pair."""
    a, b = np.triu_indices(x.shape[1], k=1)
    sx, sy = np.sign(x[:, a] - x[:, b]), np.sign(y[:, a] - y[:, b])
    pairs = len(a)
    with np.errstate(invalid="ignore", divide="ignore"):
        tau = (sx * sy).sum(axis=1) / np.sqrt((pairs - (sx == 0).sum(axis=1)) * (pairs - (sy == 0).sum(axis=1)))
    tau[~(np.isfinite(x).all(axis=1) & np.isfinite(y).all(axis=1))] = np.nan
    return np.asarray(tau)


def _verdict(
    agreement: list[JudgeAgreementRow], bias: list[JudgeBiasRow], measures: list[JudgeDimensionCard], mode: Mode
) -> tuple[JudgeVerdict, list[str]]:
    reasons: list[str] = []
    low_panel = [a.dimension for a in agreement if a.alpha_panel is None or a.alpha_panel < LOW_PANEL_ALPHA]
    tested = [a for a in agreement if a.passed is not None]
    failed = [a.dimension for a in tested if not a.passed]
    favoured = sorted({f"{b.model} ({b.dimension}, {b.bias:+.2f})" for b in bias if b.favours and b.bias is not None})
    inconsistent = [
        f"{m.dimension} ({m.consistency:.0%})"
        for m in measures
        if m.consistency is not None and m.consistency < MIN_CONSISTENCY
    ]
    if low_panel:
        reasons.append(
            f"The reviewers' own agreement is low on {', '.join(low_panel)} (alpha below {LOW_PANEL_ALPHA}), so no "
            "judge can be certified against them there."
        )
    if not tested:
        reasons.append("The Alternative Annotator Test could not be made: too few items shared by reviewers and judge.")
    if failed:
        reasons.append(f"It agrees with the reviewers less well than they do with each other on {', '.join(failed)}.")
    if favoured:
        reasons.append(f"It rates some models differently from the panel: {'; '.join(favoured)}.")
    if inconsistent:
        reasons.append(f"Its verdict changes when the answers are swapped too often: {', '.join(inconsistent)}.")
    if tested and not failed and not favoured and not inconsistent and not low_panel:
        return "stands_in", ["It agrees with the panel as well as a reviewer does, and favours no model."]
    taus = [m.tau_low for m in measures if m.tau_low is not None]
    if taus and max(taus) > 0:
        reasons.append("Its order of the models agrees with the panel's (Kendall's tau above 0).")
        return "triage_only", reasons
    reasons.append("Its ratings carry little of the panel's judgement here.")
    return "not_trusted", reasons
