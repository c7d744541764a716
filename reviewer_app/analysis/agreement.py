"""Reviewer agreement: Krippendorff's alpha with a bootstrap CI over units, and the counts behind it.

The point estimate is the ``krippendorff`` package's computation, always with ``level_of_measurement``
passed explicitly; :func:`package_alpha` feeds it the units a block at a time so that a million units don't
need its (units x V x V) arrays, with the same bits as one call (tested). The bootstrap re-implements the
same coincidence-matrix formula vectorised over rounds (tested equal to the package): units with the same
value counts contribute the same coincidences, so resampling units is a multinomial draw over the distinct
count patterns, which keeps 1,000 rounds cheap on 100k units.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import krippendorff
import numpy as np
import pandas as pd

from reviewer_app.analysis.prepare import OVERALL, PAIRWISE_OUTCOMES, canonical_outcome, numeric_values, sub_rng
from reviewer_app.domain.enums import LEVELS, Level, Mode
from reviewer_app.domain.low_agreement import is_low_agreement
from reviewer_app.domain.report_rankings import AgreementRow
from reviewer_app.domain.rubric import Dimension, Rubric
from reviewer_app.domain.scales import spec_of


def value_counts(units: np.ndarray, codes: np.ndarray, n_values: int) -> np.ndarray:
    """(units x values) matrix: how many ratings of each unit took each value code."""
    _, unit_idx = np.unique(units, return_inverse=True)
    return _counts(unit_idx, codes, n_values)


def _counts(unit_idx: np.ndarray, codes: np.ndarray, n_values: int) -> np.ndarray:
    n_units = unit_idx.max() + 1 if len(unit_idx) else 0
    flat = np.bincount(unit_idx * n_values + codes, minlength=n_units * n_values)
    return flat.reshape(n_units, n_values).astype(float)


def _distances(level: Level, domain: np.ndarray, n_v: np.ndarray) -> np.ndarray:
    """Krippendorff's squared distances; ``n_v`` is (rounds x V) for ordinal, whose metric depends on it."""
    if level not in LEVELS:
        raise ValueError(f"unknown level of measurement {level!r}")
    v = domain.astype(float)
    out: np.ndarray
    if level == "nominal":
        out = (v[:, None] != v[None, :]).astype(float)
    elif level == "interval":
        out = (v[:, None] - v[None, :]) ** 2
    elif level == "ratio":
        total = v[:, None] + v[None, :]
        diff = v[:, None] - v[None, :]
        out = np.divide(diff, total, out=np.zeros_like(diff), where=total != 0) ** 2
    else:
        idx = np.arange(len(v))
        lo, hi = np.minimum.outer(idx, idx), np.maximum.outer(idx, idx)
        cum = np.cumsum(n_v, axis=-1)
        between = cum[..., hi] - cum[..., lo] + n_v[..., lo]
        out = (between - (n_v[..., lo] + n_v[..., hi]) / 2.0) ** 2
    return out


def alpha_from_coincidences(o: np.ndarray, level: Level, domain: np.ndarray) -> np.ndarray:
    """Alpha for a stack of coincidence matrices (rounds x V x V); NaN where there is no variation."""
    n_v = o.sum(axis=-1)
    n = n_v.sum(axis=-1)
    eye = np.eye(o.shape[-1])
    with np.errstate(divide="ignore", invalid="ignore"):
        e = (n_v[..., :, None] * n_v[..., None, :] - n_v[..., :, None] * eye) / (n - 1)[..., None, None]
        d = _distances(level, domain, n_v)
        observed = (o * d).sum(axis=(-2, -1))
        expected = (e * d).sum(axis=(-2, -1))
        result = 1.0 - observed / expected
    return np.where(expected > 0, result, np.nan)


def coincidences(counts: np.ndarray) -> np.ndarray:
    """The (V x V) coincidence matrix of a (units x V) count matrix, grouping units by their number of
    ratings m: sum over m of (N_m' N_m - diag(column sums)) / (m - 1). Same as summing
    :func:`unit_coincidences`, without the (units x V x V) array."""
    m = counts.sum(axis=1)
    total = np.zeros((counts.shape[1], counts.shape[1]))
    for k in np.unique(m[m >= 2]):
        block = counts[m == k]
        total += (block.T @ block - np.diag(block.sum(axis=0))) / (k - 1)
    return total


def unit_coincidences(counts: np.ndarray) -> np.ndarray:
    """Each unit's contribution to the coincidence matrix (units x V x V); zero for single-rated units."""
    m = counts.sum(axis=1)
    outer = counts[:, :, None] * counts[:, None, :] - counts[:, :, None] * np.eye(counts.shape[1])
    with np.errstate(divide="ignore", invalid="ignore"):
        contrib: np.ndarray = outer / (m - 1)[:, None, None]
    contrib[m < 2] = 0.0
    return contrib


PACKAGE_BLOCK = 65_536  # units per block of the coincidence sum: (block x V x V) float64, 13 MB at V = 5


def package_alpha(counts: np.ndarray, domain: np.ndarray, level: Level, *, block: int = PACKAGE_BLOCK) -> float:
    """``krippendorff.alpha(value_counts=counts, value_domain=domain, level_of_measurement=level)``, bit for bit,
    in memory that does not grow with the number of units (``counts``: pairable units only).

    The package holds every unit's (V x V) coincidences in one (units x V x V) array, several times over:
    about 1 GB at a million units on a 5-point scale. It then sums them over units, which numpy does one unit
    after another; so summing a block of units at a time, each block led by the running total, adds the same
    numbers in the same order (:func:`unit_coincidences` is the package's per-unit formula). The rest is the
    package's own code as ``alpha`` runs it. A test holds the result ``==`` to ``alpha``, so a release that
    changes these internals fails it instead of moving a published figure.
    """
    core: Any = krippendorff.krippendorff  # the module behind ``krippendorff.alpha``
    o = np.zeros((counts.shape[1], counts.shape[1]))
    for start in range(0, len(counts), block):
        units = unit_coincidences(counts[start : start + block])
        o = (np.concatenate([o[None], units]) if start else units).sum(axis=0)
    n_v = o.sum(axis=0)
    e = core._random_coincidences(n_v, dtype=np.float64)
    d = core._distances(domain, core._distance_metric(level), n_v, dtype=np.float64)
    return float(1 - (o * d).sum() / (e * d).sum())


def bootstrap_alpha(
    counts: np.ndarray, level: Level, domain: np.ndarray, rounds: int, rng: np.random.Generator
) -> np.ndarray:
    """Alpha in each of ``rounds`` resamples of the (pairable) units, with replacement."""
    pairable = counts[counts.sum(axis=1) >= 2].astype(np.int64)
    # Encode each unit's count vector as one integer (base = largest count + 1) to find the patterns fast.
    base = int(pairable.max()) + 1
    codes = pairable @ (base ** np.arange(pairable.shape[1], dtype=np.int64))
    _, first, freq = np.unique(codes, return_index=True, return_counts=True)
    patterns = pairable[first].astype(float)
    draws = rng.multinomial(len(pairable), freq / freq.sum(), size=rounds).astype(float)
    per_pattern = unit_coincidences(patterns).reshape(len(patterns), -1)
    v = counts.shape[1]
    o = (draws @ per_pattern).reshape(rounds, v, v)
    return alpha_from_coincidences(o, level, domain)


MANY_VALUES = 30  # beyond this many distinct values (continuous scales) alpha is computed from per-unit sums
RATIO_GRID = 200  # ratio-level alpha over many values: values rounded to 1/200 of the largest magnitude


def alpha_with_ci(
    frame: pd.DataFrame,
    *,
    level: Level,
    domain: list[Any] | None,
    rounds: int,
    rng: np.random.Generator,
    dimension: str = "",
) -> AgreementRow:
    """Krippendorff's alpha of ``frame`` (columns ``unit``, ``reviewer``, ``value``) with a 95% bootstrap CI.

    ``domain`` lists every possible value in order (the order matters for ordinal); None takes the values
    seen (a continuous scale). ``alpha`` is None with the reason in ``note`` when it is undefined (one
    reviewer, no unit rated twice, no variation); ``low_agreement`` applies
    :func:`~reviewer_app.domain.report.is_low_agreement`. Never raises for degenerate data; raises ValueError
    for a ``level`` krippendorff does not know.
    """
    row = _alpha_with_ci(frame, level=level, domain=domain, rounds=rounds, rng=rng, dimension=dimension)
    return replace(row, low_agreement=is_low_agreement(row.alpha, row.ci_low))


def _alpha_with_ci(
    frame: pd.DataFrame,
    *,
    level: Level,
    domain: list[Any] | None,
    rounds: int,
    rng: np.random.Generator,
    dimension: str,
) -> AgreementRow:
    if level not in LEVELS:
        raise ValueError(f"unknown level of measurement {level!r}; use one of {', '.join(LEVELS)}")
    row = AgreementRow(
        dimension=dimension,
        level=level,
        alpha=None,
        ci_low=None,
        ci_high=None,
        n_units=0,
        n_ratings=0,
        n_reviewers=0,
        note=None,
        low_agreement=False,
    )
    if domain is None:
        seen = pd.to_numeric(frame["value"], errors="coerce")
        domain = sorted(seen[np.isfinite(seen)].unique().tolist())
    many = level in ("interval", "ratio") and len(domain) > MANY_VALUES
    position = {v: i for i, v in enumerate(domain)}
    mapped = pd.to_numeric(frame["value"], errors="coerce") if many else frame["value"].map(position)
    usable = mapped.notna().to_numpy() & (np.isfinite(mapped.to_numpy(dtype=float)) if many else True)
    known = frame[usable]
    if len(known) == 0:
        return replace(row, note="no ratings")
    _, unit_idx = np.unique(known["unit"].to_numpy(), return_inverse=True)
    m = np.bincount(unit_idx)
    in_pairable = (m >= 2)[unit_idx]
    reviewer = known["reviewer"]
    row = replace(
        row,
        n_units=int((m >= 2).sum()),
        n_ratings=int(m[m >= 2].sum()),
        n_reviewers=int(reviewer[in_pairable].nunique()),
    )
    single = int((m == 1).sum())
    notes = []
    if reviewer.nunique() < 2:
        return replace(row, note="only one reviewer rated these items; agreement needs at least two")
    if row.n_units == 0:
        return replace(row, note="no item was rated by two or more reviewers, so there is nothing to compare")
    if many:
        values = mapped.to_numpy(dtype=float)[usable][in_pairable]
        compared = np.unique(values)
        if len(compared) < 2:
            return replace(row, note=f"no variation: every compared rating is {compared[0]!r}; alpha is undefined")
        _, pair_units = np.unique(unit_idx[in_pairable], return_inverse=True)
        value, boot = alpha_many_values(pair_units, values, level, rounds, rng)
        if level == "ratio":
            notes.append(f"values rounded to 1/{RATIO_GRID} of the largest for ratio-level alpha")
    else:
        codes = mapped[usable].astype(int).to_numpy()
        counts = _counts(unit_idx, codes, len(domain))
        seen_codes = np.flatnonzero(counts[m >= 2].sum(axis=0))
        if len(seen_codes) < 2:
            return replace(
                row,
                note=f"no variation: every compared rating is {domain[seen_codes[0]]!r}; alpha is undefined "
                "(perfect agreement cannot be told apart from a scale nobody varies on)",
            )
        dom = np.asarray(domain if level != "nominal" and level != "ordinal" else range(len(domain)), dtype=float)
        value = package_alpha(counts[m >= 2], dom, level)
        boot = bootstrap_alpha(counts, level, dom, rounds, rng) if rounds else np.zeros(0)
    row = replace(row, alpha=value)
    if rounds == 0:  # point estimate only (leave-one-reviewer-out diagnostics)
        return row
    valid = boot[~np.isnan(boot)]
    if row.n_units >= 2 and len(valid) >= 0.5 * rounds:
        ci_low, ci_high = (float(x) for x in np.percentile(valid, [2.5, 97.5]))
        row = replace(row, ci_low=ci_low, ci_high=ci_high)
        if len(valid) < rounds:
            notes.append(f"{rounds - len(valid)} of {rounds} bootstrap rounds had no variation")
    else:
        notes.append("too few compared items for a confidence interval")
    if single:
        notes.append(f"{single} item(s) rated once were left out")
    return replace(row, note="; ".join(notes) or None)


def alpha_many_values(
    unit: np.ndarray, values: np.ndarray, level: Level, rounds: int, rng: np.random.Generator
) -> tuple[float, np.ndarray]:
    """Interval or ratio alpha of pairable ratings (``unit`` 0..U-1, each unit rated at least twice) with
    many distinct values, and its bootstrap over units, without a (values x values) coincidence matrix.

    alpha = 1 - (n - 1) sum_u D_u / E, where D_u = sum over ordered pairs of the unit's ratings of
    delta^2 / (m_u - 1) and E = sum over ordered pairs of all ratings of delta^2. For interval delta^2 =
    (v - v')^2, so D_u and E follow from sums and sums of squares; for ratio values are first rounded to a
    grid of ``RATIO_GRID`` steps and E comes from their histogram.
    """
    n_units = int(unit.max()) + 1
    m = np.bincount(unit, minlength=n_units).astype(float)
    expected: Callable[[np.ndarray, np.ndarray], np.ndarray]
    if level == "ratio":
        step = float(np.abs(values).max()) / RATIO_GRID or 1.0
        values = np.round(values / step) * step
        grid, codes = np.unique(values, return_inverse=True)
        delta = _ratio_delta(grid[:, None], grid[None, :])
        per_unit = _pair_sums(unit, values, n_units, _ratio_delta) / (m - 1)

        def expected(w: np.ndarray, n: np.ndarray) -> np.ndarray:
            hist = np.stack([np.bincount(codes, weights=row[unit], minlength=len(grid)) for row in w])
            out: np.ndarray = np.einsum("rv,vw,rw->r", hist, delta, hist)
            return out

    else:
        s = np.bincount(unit, weights=values, minlength=n_units)
        q = np.bincount(unit, weights=values**2, minlength=n_units)
        per_unit = 2.0 * (m * q - s**2) / (m - 1)

        def expected(w: np.ndarray, n: np.ndarray) -> np.ndarray:
            out: np.ndarray = 2.0 * (n * (w @ q) - (w @ s) ** 2)
            return out

    def alpha_of(w: np.ndarray) -> np.ndarray:
        n = w @ m
        e = expected(w, n)
        with np.errstate(divide="ignore", invalid="ignore"):
            out: np.ndarray = np.where(e > 0, 1.0 - (n - 1) * (w @ per_unit) / e, np.nan)
        return out

    point = float(alpha_of(np.ones((1, n_units)))[0])
    boot = np.empty(rounds)
    for start in range(0, rounds, 64):
        k = min(64, rounds - start)
        idx = rng.integers(0, n_units, size=(k, n_units)) + np.arange(k)[:, None] * n_units
        w = np.bincount(idx.ravel(), minlength=k * n_units).reshape(k, n_units).astype(float)
        boot[start : start + k] = alpha_of(w)
    return point, boot


def _ratio_delta(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Krippendorff's ratio metric ((v - v') / (v + v'))^2, 0 where v + v' = 0."""
    a, b = np.broadcast_arrays(np.asarray(a, dtype=float), np.asarray(b, dtype=float))
    total = a + b
    out: np.ndarray = np.divide(a - b, total, out=np.zeros(total.shape), where=total != 0) ** 2
    return out


def _pair_sums(
    unit: np.ndarray, values: np.ndarray, n_units: int, delta: Callable[[np.ndarray, np.ndarray], np.ndarray]
) -> np.ndarray:
    """Per unit: the sum over ordered pairs of its ratings of ``delta(v, v')``."""
    order = np.argsort(unit, kind="stable")
    u, v = unit[order], values[order]
    out = np.zeros(n_units)
    for k in range(1, int(np.bincount(u).max())):
        same = u[k:] == u[:-k]
        out += 2.0 * np.bincount(u[k:][same], weights=delta(v[k:][same], v[:-k][same]), minlength=n_units)
    return out


def dimension_values(dim: Dimension, mode: Mode) -> tuple[Level, list[Any] | None]:
    """The level and ordered value domain used for agreement on ``dim`` (None: the values seen, for a
    continuous scale)."""
    if mode == Mode.PAIRWISE:
        return "nominal", list(PAIRWISE_OUTCOMES)
    return spec_of(dim.scale).agreement_domain(dim)


def agreement_rows(
    main: pd.DataFrame,
    rubric: Rubric,
    *,
    scenario: str | None,
    rounds: int,
    seed: int,
    overall: pd.DataFrame | None = None,
) -> list[AgreementRow]:
    """Agreement per dimension for one scenario (or all scenarios when ``scenario`` is None).

    ``main`` is the non-gold, first-showing ratings frame. In pairwise mode answers are mapped back to
    the canonical model order first and compared at nominal level. In rating mode ``overall`` (one row per
    rating with its mean 0-1 score, see ``prepare.overall_rows``) adds an interval-level "overall" row.
    """
    # Only the columns used here: filtering the whole wide frame per scenario costs more than the statistics.
    cols = [c for c in ("dimension", "item_id", "reviewer", "value", "swapped") if c in main]
    frame = main[cols] if scenario is None else main.loc[main["scenario"].to_numpy() == scenario, cols]
    dims = rubric.dimensions if scenario is None else rubric.dimensions_for(scenario)
    scope = scenario or "(all)"
    rows: list[AgreementRow] = []
    for dim in dims:
        part = frame[frame["dimension"] == dim.name]
        level, domain = dimension_values(dim, rubric.mode)
        if rubric.mode == Mode.PAIRWISE:
            values = canonical_outcome(part)
        elif dim.numeric():
            values = numeric_values(part["value"])
        else:
            values = part["value"].astype(str)
        data = _units_frame(part["item_id"], part["reviewer"], values)
        rows.append(
            alpha_with_ci(
                data,
                level=level,
                domain=domain,
                rounds=rounds,
                rng=sub_rng(seed, "agreement", scope, dim.name),
                dimension=dim.name,
            )
        )
    if overall is not None and rubric.mode == Mode.RATING and not any(d.name == OVERALL for d in dims):
        part = overall if scenario is None else overall[overall["scenario"] == scenario]
        domain = sorted(part["norm"].unique().tolist())
        data = _units_frame(part["item_id"], part["reviewer"], part["norm"])
        rows.append(
            alpha_with_ci(
                data,
                level="interval",
                domain=domain or [0.0],
                rounds=rounds,
                rng=sub_rng(seed, "agreement", scope, OVERALL),
                dimension=OVERALL,
            )
        )
    return rows


def _units_frame(unit: pd.Series, reviewer: pd.Series, value: pd.Series) -> pd.DataFrame:
    """The ``unit, reviewer, value`` frame for :func:`alpha_with_ci`, keeping each column's dtype (no
    round trip of Python strings through Arrow)."""
    cols = {"unit": unit, "reviewer": reviewer, "value": value}
    return pd.DataFrame({k: pd.Series(v.to_numpy(), dtype=v.dtype, copy=False) for k, v in cols.items()})
