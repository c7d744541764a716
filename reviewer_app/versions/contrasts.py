"""A comparison's rows as per-sample totals: one :class:`Contrast` per row that ``compare`` reports (scenario,
dimension, model pair), summed from both frames as ``compare_frames`` codes them.

Rating mode: each numeric dimension (in points) and "overall" (a share of the 0-1 overall score); pairwise:
each dimension and "overall" as the win rate against the opponents both models met. Per sample, the totals
and counts of the follow-up, the baseline and the anchors (``paired_change.anchor_totals``), which
``paired_change`` turns into the changes and their uncertainty.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from reviewer_app.analysis.prepare import OVERALL
from reviewer_app.domain.enums import Mode
from reviewer_app.domain.rubric import Rubric
from reviewer_app.domain.versions import ModelPair
from reviewer_app.versions.anchor_shift import INTERACTION_ALPHA, common_shift_p
from reviewer_app.versions.compare_frames import (
    Coded,
    Names,
    by_scenario,
    code_of,
    encode,
    names_of,
    pairwise_long,
    rating_coded,
)
from reviewer_app.versions.paired_change import anchor_totals
from reviewer_app.versions.panel import panel_weight, reviewer_variance

UNIT_POINTS = "points"
UNIT_SHARE = "share of the 0-1 overall score"
UNIT_WIN_RATE = "win rate against the common opponents"


@dataclass(frozen=True)
class Contrast:
    """One row to compute: its labels and per-sample totals and counts (S x 4, see ``paired_change``)."""

    scenario: str
    dimension: str
    pair: ModelPair
    unit: str
    higher_is_better: bool
    tolerance: float
    sums: np.ndarray
    counts: np.ndarray
    n_anchors: int
    reviewer_var: float = float("nan")  # between-reviewer variance of leniency (``panel``), NaN if unknown
    reviewer_df: float = 0.0
    panel_weight: float = float("nan")  # Sum_r (w_c,r - w_b,r)^2 over the paired samples' ratings
    shift_common_p: float = float("nan")  # the test that the anchors' shift is common to all models
    own_shift: bool = False  # corrected by the baseline model's own anchors (the shift differs by model)


def scenario_contrasts(
    baseline: pd.DataFrame,
    candidate: pd.DataFrame,
    rubric: Rubric,
    pairs: Sequence[ModelPair],
    *,
    tolerance: float,
    tolerance_share: float,
) -> Iterator[tuple[str, list[Contrast]]]:
    """Per scenario (sorted), its contrasts: the rubric's numeric dimensions then "overall" (pairwise: its
    dimensions then "overall"), each with every pair in order. All contrasts of a scenario share its samples
    (the union of both frames' samples there, sorted), the rows of their totals."""
    pairwise = rubric.mode == Mode.PAIRWISE
    if pairwise:
        base_long = pairwise_long(baseline, rubric, drop_anchors=True)
        cand_long = pairwise_long(candidate, rubric, drop_anchors=False)
        names, samples = names_of(base_long, cand_long, rubric, pairwise)
        base = encode(base_long, samples[: len(base_long)], names, pairwise)
        cand = encode(cand_long, samples[len(base_long) :], names, pairwise)
    else:
        names, base, cand = rating_coded(baseline, candidate, rubric)
    contrasts_of = _pairwise_contrasts if pairwise else _rating_contrasts
    # Pairwise "overall" pools the dimensions' rows in the order they came, so those stay unsorted by dimension.
    dims = None if pairwise else len(names.dimensions)
    (base, b_at), (cand, c_at) = (
        by_scenario(base, len(names.scenarios), dims),
        by_scenario(cand, len(names.scenarios), dims),
    )
    for k, scen in enumerate(names.scenarios):
        start, n = int(names.starts[k]), int(names.starts[k + 1] - names.starts[k])
        b, c = base.rows(b_at[k], b_at[k + 1]), cand.rows(c_at[k], c_at[k + 1])
        b, c = (replace(x, sample=x.sample - start) for x in (b, c))
        yield scen, contrasts_of(b, c, scen, rubric, pairs, names, n, tolerance, tolerance_share)


def _totals(s: np.ndarray, values: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Per sample (index ``s``), the sum and the count of ``values``."""
    return np.bincount(s, weights=values, minlength=n), np.bincount(s, minlength=n).astype(float)


def _contrast_totals(
    cand: tuple[np.ndarray, np.ndarray],
    base: tuple[np.ndarray, np.ndarray],
    anchors: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, int],
    n: int,
) -> tuple[np.ndarray, np.ndarray]:
    """The S x 4 totals and counts of a contrast: candidate and baseline ((sample index, values) each) on
    the samples both have, then the anchors' (from ``anchor_totals``)."""
    sc, cc = _totals(cand[0], cand[1], n)
    sb, cb = _totals(base[0], base[1], n)
    both = (cc > 0) & (cb > 0)
    sums = np.column_stack([np.where(both, sc, 0.0), np.where(both, sb, 0.0), anchors[0], anchors[2]])
    counts = np.column_stack([np.where(both, cc, 0.0), np.where(both, cb, 0.0), anchors[1], anchors[3]])
    return sums, counts


def _rating_contrasts(
    b: Coded,
    c: Coded,
    scen: str,
    rubric: Rubric,
    pairs: Sequence[ModelPair],
    names: Names,
    n: int,
    tolerance: float,
    tolerance_share: float,
) -> list[Contrast]:
    dims = [
        (d.name, d.higher_is_better, tolerance, UNIT_POINTS)
        for d in rubric.dimensions_for(scen)
        if d.numeric() and d.name != OVERALL  # a rubric's own "overall" is shadowed, as in the report
    ]
    dimension_codes, model_codes = names.dimension_codes, names.model_codes
    out = []
    for name, higher, tol, unit in [*dims, (OVERALL, True, tolerance_share, UNIT_SHARE)]:
        code = code_of(dimension_codes, name)
        bd, cd = _dimension_rows(b, code), _dimension_rows(c, code)
        if not len(bd.value) and not len(cd.value):
            continue
        again, cd = cd.where(cd.anchor), cd.where(~cd.anchor)
        anchors = anchor_totals((bd.output, bd.value), (again.output, again.value, again.sample), n)
        var, df = reviewer_variance([_leniency(x) for x in (bd, cd, again)])
        common = common_shift_p((bd.output, bd.model_a, bd.value), (again.output, again.model_a, again.value))
        own = bool(common < INTERACTION_ALPHA)  # NaN (nothing to compare): one shift
        for pair in pairs:
            mb, mc = (
                bd.model_a == code_of(model_codes, pair.baseline),
                cd.model_a == code_of(model_codes, pair.candidate),
            )
            used = anchors
            if own:  # the shift differs by model: this model's own anchors (they name the baseline's model)
                ma = again.model_a == code_of(model_codes, pair.baseline)
                used = anchor_totals(
                    (bd.output[mb], bd.value[mb]), (again.output[ma], again.value[ma], again.sample[ma]), n
                )
            sums, counts = _contrast_totals((cd.sample[mc], cd.value[mc]), (bd.sample[mb], bd.value[mb]), used, n)
            weight = _weight(counts, (cd.sample[mc], cd.reviewer[mc]), (bd.sample[mb], bd.reviewer[mb]))
            out.append(
                Contrast(scen, name, pair, unit, higher, tol, sums, counts, used[4], var, df, weight, common, own)
            )
    return out


def _leniency(c: Coded) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """A round's ratings as ``panel.reviewer_variance`` reads them: rating mode, one group; pairwise, the pair
    of models compared, each answer turned to the lower-coded model's side (a reviewer's preference within a
    pair of models is their "leniency" there)."""
    if not len(c.value) or (c.model_b < 0).all():
        return np.zeros(len(c.value), dtype=np.int64), c.output, c.reviewer, c.value
    low, high = np.minimum(c.model_a, c.model_b), np.maximum(c.model_a, c.model_b)
    value = np.where(c.model_a <= c.model_b, c.value, 1.0 - c.value)
    return low * (int(high.max(initial=0)) + 1) + high, c.output, c.reviewer, value


def _weight(counts: np.ndarray, cand: tuple[np.ndarray, np.ndarray], base: tuple[np.ndarray, np.ndarray]) -> float:
    """``panel.panel_weight`` of the candidate's and the baseline's (sample, reviewer) rows on the samples
    both were rated on (the contrast's ``counts``: columns 0 and 1 are non-zero there)."""
    both = counts[:, 0] > 0
    return panel_weight(cand[1][both[cand[0]]], base[1][both[base[0]]])


def _dimension_rows(coded: Coded, code: int) -> Coded:
    """The rows of dimension ``code`` of a scenario's rows sorted by dimension (:func:`by_scenario`): a slice."""
    low, high = np.searchsorted(coded.dimension, [code, code + 1])
    return coded.rows(int(low), int(high))


def _pairwise_dims(rubric: Rubric, scen: str) -> list[str]:
    """The pairwise dimensions of a scenario, then "overall" (as the report ranks them)."""
    names = [d.name for d in rubric.dimensions_for(scen)]
    return names + ([OVERALL] if OVERALL not in names else [])


def _opponent_codes(pairs: Sequence[ModelPair], models: Mapping[str, int]) -> np.ndarray:
    """Per model code of the follow-up, the code of the baseline model it stands for as an opponent: a
    paired model its pair's baseline; a model that is not paired itself, unless a baseline model of that
    name was matched to another model (then it is not the same model: -1 keeps it out)."""
    out = np.arange(len(models))
    for p in pairs:
        if p.baseline != p.candidate and p.baseline in models:
            out[code_of(models, p.baseline)] = -1
    for p in pairs:
        if p.candidate in models:
            out[code_of(models, p.candidate)] = code_of(models, p.baseline) if p.baseline in models else -1
    return out


def _wins(c: Coded, model: int, rename: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The answers ``model`` took part in: the opponent (as renamed), the model's win (1, 0 or 0.5) and
    which rows those are. A model that is not there (code -1) took part in none."""
    if model < 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0), np.zeros(len(c.value), dtype=bool)
    first, second = c.model_a == model, c.model_b == model
    rows = first | second
    other = np.where(first, c.model_b, c.model_a)[rows]
    value = np.where(first, c.value, 1.0 - c.value)[rows]
    return np.where(other >= 0, rename[np.maximum(other, 0)], -1), value, rows


def _pairwise_contrasts(
    b: Coded,
    c: Coded,
    scen: str,
    rubric: Rubric,
    pairs: Sequence[ModelPair],
    names: Names,
    n: int,
    tolerance: float,
    tolerance_share: float,
) -> list[Contrast]:
    del tolerance  # win rates are shares: tolerance_share applies
    same = np.arange(len(names.models))
    model_codes = names.model_codes
    rename = _opponent_codes(pairs, model_codes)
    named = {d.name for d in rubric.dimensions_for(scen)}
    out = []
    for dim in _pairwise_dims(rubric, scen):
        if dim == OVERALL and OVERALL not in named:
            bd, cd = b, c  # "overall" pools every dimension's answers, as the report's overall ranking does
        else:
            code = code_of(names.dimension_codes, dim)
            bd, cd = b.where(b.dimension == code), c.where(c.dimension == code)
        if not len(bd.value) and not len(cd.value):
            continue
        again, cd = cd.where(cd.anchor), cd.where(~cd.anchor)
        var, df = reviewer_variance([_leniency(x) for x in (bd, cd, again)])
        for pair in pairs:
            model_b, model_c = code_of(model_codes, pair.baseline), code_of(model_codes, pair.candidate)
            opp_b, win_b, rows_b = _wins(bd, model_b, same)
            opp_c, win_c, rows_c = _wins(cd, model_c, rename)
            common = np.setdiff1d(np.intersect1d(opp_b, opp_c), [-1, model_b])
            keep_b, keep_c = np.isin(opp_b, common), np.isin(opp_c, common)
            opp_a, win_a, rows_a = _wins(again, model_b, same)
            keep_a = np.isin(opp_a, common)
            anchors = anchor_totals(
                (bd.output[rows_b][keep_b], win_b[keep_b]),
                (again.output[rows_a][keep_a], win_a[keep_a], again.sample[rows_a][keep_a]),
                n,
            )
            sums, counts = _contrast_totals(
                (cd.sample[rows_c][keep_c], win_c[keep_c]), (bd.sample[rows_b][keep_b], win_b[keep_b]), anchors, n
            )
            weight = _weight(
                counts,
                (cd.sample[rows_c][keep_c], cd.reviewer[rows_c][keep_c]),
                (bd.sample[rows_b][keep_b], bd.reviewer[rows_b][keep_b]),
            )
            out.append(
                Contrast(
                    scen, dim, pair, UNIT_WIN_RATE, True, tolerance_share, sums, counts, anchors[4], var, df, weight
                )
            )
    return out
