"""A comparison's rating-mode rows coded once (``compare_frames.rating_coded``, issue 10's benchmark) are the
long frames' rows coded (``_rating_long`` then ``encode``): the same shared lists and, array for array, the
same codes and values in the same order, so every per-sample total adds the same numbers in the same order.
With one numeric dimension the scored rows are coded once and the "overall" rows are those codes again; with
two, the long frames themselves are coded. Checked with anchors, a gold item, a repeat showing, a value
that is not a number and a lower-is-better dimension."""

from __future__ import annotations

from dataclasses import fields, replace

import numpy as np
import pandas as pd
import pytest

from reviewer_app.domain.rubric import Dimension, Rubric
from reviewer_app.versions.compare_frames import (
    Coded,
    Names,
    _rating_long,
    _rating_rows,
    _scored,
    by_scenario,
    encode,
    names_of,
    rating_coded,
)
from tests.support.simulated_panels import likert
from tests.support.version_chains import chain


def _long_coded(baseline: pd.DataFrame, candidate: pd.DataFrame, rubric: Rubric) -> tuple[Names, Coded, Coded]:
    """The general path: the long frames, then their codes."""
    longs = [
        _rating_long(*_scored(baseline, rubric, drop_anchors=True)),
        _rating_long(*_scored(candidate, rubric, drop_anchors=False)),
    ]
    names, samples = names_of(longs[0], longs[1], rubric, False)
    n = len(longs[0])
    return names, encode(longs[0], samples[:n], names, False), encode(longs[1], samples[n:], names, False)


def _frames(dims: tuple[Dimension, ...], seed: int) -> tuple[pd.DataFrame, pd.DataFrame, Rubric]:
    quality = {s: {m: 3.0 + 0.2 * k for k, m in enumerate(("m0", "m1", "m2"))} for s in ("qa", "summaries")}
    data = chain(np.random.default_rng(seed), quality, quality, n_samples=40, panel_shift=-0.3, dims=dims)
    base, cand = data.baseline.copy(), data.candidate.copy()
    base.loc[0, "is_gold"] = True
    base.loc[1, "occurrence"] = 1
    cand.loc[2, "value"] = "n/a"  # not a number: no score, no overall row
    return base, cand, data.rubric


@pytest.mark.parametrize(
    ("dims", "one_row"),
    [
        ((likert("correctness"),), True),
        ((replace(likert("tone", hi=7), higher_is_better=False),), True),  # norms like 1/6: not exact in binary
        ((likert("correctness"), likert("tone")), False),
    ],
)
def test_coded_rows_equal_the_long_frames_codes(dims: tuple[Dimension, ...], one_row: bool) -> None:
    base, cand, rubric = _frames(dims, seed=len(dims) + 3)
    assert (_rating_rows(*_scored(cand, rubric, drop_anchors=False)) is not None) is one_row
    names, coded_base, coded_cand = rating_coded(base, cand, rubric)
    want_names, want_base, want_cand = _long_coded(base, cand, rubric)
    assert names.scenarios == want_names.scenarios and names.repeats == want_names.repeats
    assert list(names.models) == list(want_names.models)
    assert list(names.dimensions) == list(want_names.dimensions)
    np.testing.assert_array_equal(names.starts, want_names.starts)
    assert coded_cand.anchor.any() and not coded_base.anchor.any()
    for got, want in ((coded_base, want_base), (coded_cand, want_cand)):
        for field in fields(Coded):
            np.testing.assert_array_equal(getattr(got, field.name), getattr(want, field.name), err_msg=field.name)


def test_rows_sorted_by_dimension_keep_their_order_within_each_dimension() -> None:
    base, cand, rubric = _frames((likert("correctness"), likert("tone")), seed=9)
    names, coded, _ = rating_coded(base, cand, rubric)
    by_dimension, at = by_scenario(coded, len(names.scenarios), len(names.dimensions))
    for k in range(len(names.scenarios)):
        rows = by_dimension.rows(int(at[k]), int(at[k + 1]))
        assert (np.diff(rows.dimension) >= 0).all()
        for code in range(len(names.dimensions)):
            want = coded.where((coded.scenario == k) & (coded.dimension == code))
            got = rows.where(rows.dimension == code)
            for field in fields(Coded):
                np.testing.assert_array_equal(getattr(got, field.name), getattr(want, field.name))
