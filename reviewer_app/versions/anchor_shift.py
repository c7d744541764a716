"""Is the anchors' panel shift common to all models? (issue 28, point 1)

Anchors correct a follow-up's difference by one shift, the mean change of the anchored outputs' scores between
the rounds, whatever their model. That holds when the new panel moved every model alike; a panel that is
stricter with one model's style than another's would carry one model's shift into another's verdict. So the
shift is tested for an interaction with the model before it is used as one: per anchored output, ``d`` = its
mean score in the follow-up round minus its mean in the baseline round (the output's own quality cancels), and a
one-way analysis of variance of ``d`` by model (F test, Fisher 1925) over models with at least two anchored
outputs. When it differs (p < 0.05), each model is corrected by its own anchors' shift instead, or has no
verdict if it has too few of them.
"""

from __future__ import annotations

import numpy as np
from scipy import stats

INTERACTION_ALPHA = 0.05


def common_shift_p(
    first: tuple[np.ndarray, np.ndarray, np.ndarray], again: tuple[np.ndarray, np.ndarray, np.ndarray]
) -> float:
    """The p-value of "the anchor shift is the same for every model": ``first`` and ``again`` are (output key,
    model code, value) of the baseline round's ratings and of the anchors' ratings. NaN when fewer than two
    models have two anchored outputs each (nothing to compare)."""
    out1, model1, value1 = first
    out2, _, value2 = again
    if not len(out1) or not len(out2):
        return float("nan")
    keys, where = np.unique(np.concatenate([out2, out1]), return_inverse=True)
    i2, i1 = where[: len(out2)], where[len(out2) :]
    k = len(keys)
    n2, n1 = np.bincount(i2, minlength=k), np.bincount(i1, minlength=k)
    both = (n2 > 0) & (n1 > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        d = np.bincount(i2, weights=value2, minlength=k) / n2 - np.bincount(i1, weights=value1, minlength=k) / n1
    model = np.zeros(k, dtype=np.int64)
    model[i1] = model1
    d, model = d[both], model[both]
    groups = [d[model == m] for m in np.unique(model)]
    groups = [g for g in groups if len(g) >= 2]
    if len(groups) < 2:
        return float("nan")
    values = np.concatenate(groups)
    grand = values.mean()
    between = sum(len(g) * (g.mean() - grand) ** 2 for g in groups)
    within = sum(((g - g.mean()) ** 2).sum() for g in groups)
    df1, df2 = len(groups) - 1, len(values) - len(groups)
    if within <= 0:
        return 0.0 if between > 0 else 1.0
    return float(stats.f.sf((between / df1) / (within / df2), df1, df2))
