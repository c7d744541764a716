"""Rankings that use an LLM judge without trusting it: prediction-powered inference for rating mode (issue 29,
section 3).

The setting: a judge rated every output of a scenario's samples on one dimension, and the panel rated the
outputs of a *random* subset of the samples. The judge's mean alone is biased by whatever the judge gets wrong
(a favourite model, long answers); the panel's mean on the subset alone is unbiased but wastes the judge's
ratings. Prediction-powered inference (PPI; Angelopoulos, Bates, Fannjiang, Jordan & Zrnic, "Prediction-powered
inference", *Science* 382, 2023) keeps the judge's mean and corrects it by the judge-vs-panel gap measured on
the subset; PPI++ (Angelopoulos, Duchi & Zrnic, "PPI++: Efficient prediction-powered inference", 2023) weighs
the judge by a power-tuning factor lambda. Per model, over the samples A where the judge rated it and the
subset L of those where the panel did (N and n of them):

    theta = lambda * mean_A(judge) + mean_L(human - lambda * judge)

Whatever lambda and however biased the judge, theta is unbiased for the mean the panel would give over all the
samples, because the subset is random: the judge's error on L estimates its error on A. lambda = 0 is the
panel's mean on L alone, lambda = 1 the original PPI. Since L is part of A (the judge rated every output), the
variance is

    Var(theta) = var(H) / n - (1/n - 1/N) (2 lambda cov(H, J) - lambda^2 var(J)),

least at lambda = cov(H, J) / var(J), the slope of the panel's ratings on the judge's (the regression estimator
of double sampling, Cochran 1977, *Sampling Techniques*, ch. 12; PPI++'s factor 1 / (1 + n / N) is for
disjoint sets and drops out here). It is estimated on L and clipped to [0, 1], as ``ppi_py``'s ``clip`` option does:
a judge never counts for more than the panel's own ratings (so a judge whose scale is compressed is not
stretched on a dozen samples) and never negatively. A useless judge gets lambda near 0 and the panel's width;
a judge as good as the panel gets Var near var(H) / N, as if every sample had been rated. Estimating lambda on
the same samples keeps the intervals valid asymptotically (PPI++ tunes it on the same data).

The ranking is the panel's own. Whole samples are the unit, as in every ranking of the report: theta is a
sum of per-sample terms,

    c_s = lambda (J_s - mean_A(J)) / N + [s in L] (mean_L(D) + lambda mean_A(J) + k (D_s - mean_L(D))) / n,

with D = H - lambda J and k = 1 (but see below): the judge's deviation from its mean on every sample, and on
each rated sample its share of the corrected mean. Within the rated and the judge-only samples (strata) their
spread estimates the variance above (its expectation is exactly that formula). A sample's *pseudo-value* is N
c_s, whose mean over A is theta. An :class:`~reviewer_app.analysis.ranking.Estimate` of the pseudo-values (one
per sample and model, as ``reviewer_effects.adjust_for_reviewers`` does for reviewer-adjusted scores), its
strata the sets of models the panel rated on a sample, is ranked by
:func:`~reviewer_app.analysis.decisions.ranking_rows` itself: the same cluster bootstrap (within strata, so each
replicate has the design's rated samples), the same sign-flip test of every pair's difference over samples, the
same Holm adjustment, ranks, tiers and letters as the panel's ranking. lambda and the means are estimated once
and held fixed in the bootstrap.

Why the corrected mean sits on the rated samples rather than spread over all N: under the null a pair's terms
are then about 0 on every sample, and its sign-flip statistic, sum c / sqrt(sum c^2), is self-normalised over
the rated samples as the panel's own test is over its samples. Spread evenly, the statistic was a t statistic
with about n degrees of freedom read against the normal: equal models were separated in 7.5% of panels at 20
rated samples of 100 (now 0.8-4.5% in every case of ``scripts/validate_ppi.py``, per pair at most 0.9%). Three
small-sample corrections: k = sqrt((n - 1) / (n - 2)) inside the clip, which with the cluster-robust n / (n - 1)
of the rated stratum counts the rated residuals n / (n - 2) in variance, as mean_L(D) and lambda were fitted on
them (Cochran 1977, ch. 7: n - 2 for the regression estimator); each model's interval takes Student's t at the
Satterthwaite degrees of freedom of its rated and judge-only parts (Satterthwaite 1946) instead of those of all
N samples; and its bootstrap replicates are stretched for the rated stratum's n / (n - 1), which the bootstrap
within strata misses (:func:`_widen`). With a noisy judge and 20 rated samples of 100 these took coverage from
89.9% to 94.2% (1,000 panels), the panel's own interval's 94.2% on the same panels.

lambda is tuned per model, not per pair: a pair's difference is then the difference of the two scores shown,
and a judge that is good on one model and poor on another is weighed accordingly on each. Pairs stay valid
whatever the lambdas; a per-pair lambda would only narrow some differences a little.

The *effective number of human-rated samples* says what the judge was worth: the panel-only variance divided
by the PPI variance, times the labelled samples n (at most about N).

Assumptions, stated: the panel's subset is random (a panel that chose the hard samples makes the correction
wrong, as it would make the panel's own mean wrong); one scenario and dimension per call; the means are tested
(an ordinal dimension's rank-based comparison does not apply); reviewers are not adjusted for leniency
(``reviewer_effects``) here. Not yet wired into the report.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from reviewer_app.analysis.inference import CONFIDENCE, t_quantile
from reviewer_app.analysis.model_intervals import active_samples
from reviewer_app.analysis.prepare import bootstrap_weights
from reviewer_app.analysis.ranking import Estimate, rating_estimate

__all__ = [
    "MIN_LABELLED",
    "JudgeAssisted",
    "judge_assisted_estimate",
    "power_tuned_lambda",
    "stratified_weights",
]

MIN_LABELLED = 3  # panel-rated samples a model needs: 2 give one degree of freedom for lambda and none to spare
_TINY = 1e-12


@dataclass(frozen=True)
class JudgeAssisted:
    """A judge-assisted estimate of one dimension, per model (arrays in the order of ``estimate.models``).

    ``estimate`` holds each sample's pseudo-value (``ranking_rows(estimate, dimension)`` ranks it); its
    ``point`` are the PPI scores. ``lam`` is each model's power-tuning factor; ``judged`` and ``labelled`` the
    samples the judge and the panel rated; ``se`` the scores' cluster-robust standard errors; ``panel_point``
    and ``panel_se`` the panel's mean on its subset alone and its standard error; ``effective`` the number of
    panel-rated samples the panel alone would need for the PPI score's precision, ``effective_ratings`` the
    same in ratings (at the panel's ratings per sample)."""

    estimate: Estimate
    lam: np.ndarray
    judged: np.ndarray
    labelled: np.ndarray
    se: np.ndarray
    panel_point: np.ndarray
    panel_se: np.ndarray
    effective: np.ndarray
    effective_ratings: np.ndarray
    df: np.ndarray  # degrees of freedom of each score's variance (Satterthwaite): its interval's t reference

    @property
    def models(self) -> list[str]:
        return self.estimate.models


def power_tuned_lambda(human: np.ndarray, judge: np.ndarray) -> float:
    """PPI++'s power-tuning factor for a mean when the labelled samples are part of the judged ones:
    cov(human, judge) / var(judge) over the labelled samples, clipped to [0, 1] (0 where the judge's ratings
    do not vary: they carry no information). See the module docstring for why this ratio and the clip."""
    h, j = np.asarray(human, dtype=float), np.asarray(judge, dtype=float)
    if len(h) < 2:
        return 0.0
    jc = j - j.mean()
    var = float(jc @ jc)
    if var <= _TINY * max(1.0, float(j @ j)):
        return 0.0
    return float(np.clip(float(jc @ (h - h.mean())) / var, 0.0, 1.0))


def _model_column(frame: pd.DataFrame, name: str) -> str:
    for column in ("model", "model_a"):
        if column in frame.columns:
            return column
    raise ValueError(f"The {name} ratings have no 'model' column.")


def _cell_means(frame: pd.DataFrame, name: str) -> tuple[pd.Series, pd.Series]:
    """Each output's mean score (a judge run several times, or several reviewers, count once per output)
    and its number of ratings, indexed by (sample_id, model)."""
    column = _model_column(frame, name)
    rated = frame.dropna(subset=["score"])
    grouped = rated.groupby([rated["sample_id"], rated[column].rename("model")], sort=False)["score"]
    return grouped.mean(), grouped.size()


def judge_assisted_estimate(
    judge: pd.DataFrame,
    panel: pd.DataFrame,
    models: list[str],
    samples: Sequence[Any],
    rng: np.random.Generator,
    *,
    rounds: int = 1000,
    higher_is_better: bool = True,
) -> JudgeAssisted:
    """The PPI++ score of each model in ``models`` from the judge's ratings of every output (``judge``:
    ``sample_id``, ``model``, ``score``) and the panel's ratings of a random subset of the samples
    (``panel``: ``sample_id``, ``model``, ``reviewer``, ``score``; ``model_a`` is accepted for ``model``), as
    an :class:`~reviewer_app.analysis.ranking.Estimate` of per-sample pseudo-values that ``ranking_rows``
    ranks (see the module docstring): ``samples`` are the ranking's samples (its clusters, in order); ``rng``
    draws ``rounds`` cluster-bootstrap replicates within the strata of samples the panel rated alike
    (``estimate.strata``), so every replicate has as many rated samples as the design.

    Raises ValueError (analysis stands on domain alone; the caller that wires it in turns it into a
    ``ReportError``) when the panel rated no sample, when a model has fewer
    than ``MIN_LABELLED`` panel-rated samples (its correction cannot be measured), or when the panel rated an
    output the judge did not (the judge's ratings must cover every output for the correction to hold)."""
    j_mean, _ = _cell_means(judge, "judge's")
    h_mean, h_count = _cell_means(panel, "panel's")
    if h_mean.empty:
        raise ValueError(
            "The panel rated none of the samples: a judge-assisted score needs the panel's ratings of a random "
            "subset of them to measure the judge's error."
        )
    seen = j_mean.index.get_level_values(0).union(h_mean.index.get_level_values(0))
    unknown = seen[pd.Index(samples).get_indexer(seen) < 0]
    if len(unknown):
        shown = ", ".join(str(s) for s in unknown[:5])
        raise ValueError(f"{len(unknown)} rated sample(s) are not among the ranking's samples: {shown}.")
    uncovered = h_mean.index.difference(j_mean.index)
    if len(uncovered):
        shown = ", ".join(f"{m} on sample {s}" for s, m in list(uncovered)[:5])
        raise ValueError(
            f"The panel rated {len(uncovered)} output(s) the judge did not ({shown}): the judge must rate every "
            "output for its correction to hold. Rerun the judge on them."
        )
    m = len(models)
    lam, judged, labelled, df = np.zeros(m), np.zeros(m), np.zeros(m), np.full(m, np.nan)
    boot_var = np.full(m, np.nan)
    se, panel_point, panel_se = np.full(m, np.nan), np.full(m, np.nan), np.full(m, np.nan)
    effective, effective_ratings = np.full(m, np.nan), np.full(m, np.nan)
    pieces = []
    short = []
    for k, model in enumerate(models):
        j = j_mean.xs(model, level="model") if model in j_mean.index.get_level_values(1) else j_mean.iloc[:0]
        h = h_mean.xs(model, level="model") if model in h_mean.index.get_level_values(1) else h_mean.iloc[:0]
        if j.empty and h.empty:
            continue  # a model of the ranking neither rated: no score, as in the panel's ranking
        if len(h) < MIN_LABELLED:
            short.append(f"{model} ({len(h)})")
            continue
        j_all = j.to_numpy(dtype=float)
        in_l = j.index.isin(h.index)
        j_l = j[h.index].to_numpy(dtype=float)
        h_l = h.to_numpy(dtype=float)
        big_n, n = len(j_all), len(h_l)
        lam[k] = power_tuned_lambda(h_l, j_l)
        d = h_l - lam[k] * j_l
        # The rated samples' residuals are stretched (k in the module docstring) so that, with the
        # cluster-robust g / (g - 1) of their stratum, their sum of squares is unbiased for the variance:
        # inside the clip, lambda was fitted on them too (Cochran 1977, ch. 7: n - 2 for the regression
        # estimator's residual variance). Their sum stays 0, so the pseudo-values' mean stays theta.
        lost = 2 if 0.0 < lam[k] < 1.0 else 1
        share = d.mean() + lam[k] * j_all.mean() + np.sqrt((n - 1) / max(n - lost, 1)) * (d - d.mean())
        pseudo = lam[k] * (j_all - j_all.mean())
        pseudo[in_l] += (big_n / n) * share[pd.Index(h.index).get_indexer(j.index[in_l])]
        v_l, v_u = _centred_ss(pseudo[in_l] / big_n), _centred_ss(pseudo[~in_l] / big_n)
        var_ppi = v_l + v_u
        # What the bootstrap within strata sees of it: each stratum's spread without its g / (g - 1).
        boot_var[k] = v_l * (n - 1) / n + (v_u * (big_n - n - 1) / (big_n - n) if big_n > n else 0.0)
        df[k] = _satterthwaite(v_l, n - lost, v_u, big_n - n - 1)
        hc = h_l - h_l.mean()
        var_panel = float(hc @ hc) / (n * (n - 1))
        judged[k], labelled[k] = big_n, n
        se[k], panel_point[k], panel_se[k] = np.sqrt(var_ppi), h_l.mean(), np.sqrt(var_panel)
        effective[k] = n * var_panel / var_ppi if var_ppi > _TINY * max(var_panel, 1e-300) else float(n)
        per_sample = float(h_count.xs(model, level="model").sum()) / n
        effective_ratings[k] = effective[k] * per_sample
        pieces.append(pd.DataFrame({"sample_id": j.index, "model_a": model, "score": pseudo}))
    if short:
        raise ValueError(
            f"Too few panel-rated samples to measure the judge's error on {', '.join(short)}: each model needs "
            f"at least {MIN_LABELLED}."
        )
    frame = (
        pd.concat(pieces, ignore_index=True) if pieces else pd.DataFrame({"sample_id": [], "model_a": [], "score": []})
    )
    strata = _label_patterns(h_mean, samples)
    est = rating_estimate(
        frame, models, list(samples), stratified_weights(strata, rounds, rng), higher_is_better=higher_is_better
    )
    est.strata = strata
    _widen(est, df, se, boot_var)
    return JudgeAssisted(
        estimate=est,
        lam=lam,
        judged=judged,
        labelled=labelled,
        se=se,
        panel_point=panel_point,
        panel_se=panel_se,
        effective=effective,
        effective_ratings=effective_ratings,
        df=df,
    )


def _centred_ss(u: np.ndarray) -> float:
    """The cluster-robust (CR1) variance of a sum of the contributions ``u`` of one stratum, as
    ``inference.cluster_test`` computes it: g / (g - 1) times their sum of squares about their mean."""
    g = len(u)
    if g < 2:
        return 0.0
    c = u - u.mean()
    return g / (g - 1) * float(c @ c)


def _label_patterns(h_mean: pd.Series, samples: Sequence[Any]) -> np.ndarray:
    """Each sample's stratum: which models the panel rated on it (0: none). Within a stratum every model is
    either rated on every sample or on none, so centring within strata removes the offset between rated and
    judged-only samples' pseudo-values, and the bootstrap keeps the number rated fixed, as the design did."""
    rated = h_mean.index.to_frame(index=False).groupby("sample_id", sort=False)["model"]
    pattern = rated.agg(lambda x: "\x1f".join(sorted(str(v) for v in x)))
    codes = {p: k + 1 for k, p in enumerate(sorted(set(pattern)))}
    out = np.zeros(len(samples), dtype=int)
    where = pd.Index(samples).get_indexer(pattern.index)
    out[where] = [codes[p] for p in pattern]
    return out


def stratified_weights(strata: np.ndarray, rounds: int, rng: np.random.Generator) -> np.ndarray:
    """(rounds x samples) cluster-bootstrap resampling counts drawn within each stratum (as
    :func:`~reviewer_app.analysis.prepare.bootstrap_weights` does for one)."""
    out = np.zeros((rounds, len(strata)))
    for h in np.unique(strata):
        cols = np.flatnonzero(strata == h)
        out[:, cols] = bootstrap_weights(len(cols), rounds, rng)
    return out


def _satterthwaite(v_a: float, df_a: int, v_b: float, df_b: int) -> float:
    """Welch-Satterthwaite degrees of freedom of a sum of two independent variance estimates (Satterthwaite
    1946): the labelled samples' part, with few degrees of freedom, and the judged-only samples' part."""
    den = (v_a**2 / df_a if df_a > 0 else 0.0) + (v_b**2 / df_b if df_b > 0 else 0.0)
    return (v_a + v_b) ** 2 / den if den > 0 else float(max(df_a, 1))


def _widen(est: Estimate, df: np.ndarray, se: np.ndarray, boot_var: np.ndarray) -> None:
    """Stretch each model's bootstrap replicates about its score so that its expanded percentile interval
    (``model_intervals.intervals``: about sqrt(G / (G - H)) t(G - H) bootstrap standard deviations for G
    samples in H strata) becomes the score -/+ t(df) standard errors, df the Satterthwaite degrees of freedom.

    Two things the house interval cannot know here: the variance of a judge-assisted score comes mostly from
    the few rated samples where the judge is poor, so G - H (all judged samples) overstates the degrees of
    freedom of its spread; and the bootstrap within strata misses the rated stratum's n / (n - 1), which
    sqrt(G / (G - H)) restores only for G. ``boot_var`` is the variance the bootstrap sees, ``se`` the
    cluster-robust standard error. Never narrows: the factor is at least 1."""
    g_all, h_all = active_samples(est)
    usable = np.isfinite(df) & (g_all - h_all >= 1) & np.isfinite(boot_var) & (np.nan_to_num(boot_var) > 0)
    for k in np.flatnonzero(usable):
        g, h = float(g_all[k]), float(h_all[k])
        plain = float(np.sqrt(g / (g - h)) * t_quantile(1 - (1 - CONFIDENCE) / 2, np.array([g - h]))[0])
        wanted = float(t_quantile(1 - (1 - CONFIDENCE) / 2, np.array([max(df[k], 1.0)]))[0])
        factor = max(1.0, wanted * float(se[k]) / (plain * float(np.sqrt(boot_var[k]))))
        est.boot[:, k] = est.point[k] + factor * (est.boot[:, k] - est.point[k])
        if est.num is not None and est.den is not None:
            est.num[:, k] = est.boot[:, k] * est.den[:, k]
