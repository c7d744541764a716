"""Krippendorff's alpha against published values, its bootstrap, and the degenerate cases."""

from __future__ import annotations

import krippendorff
import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reviewer_app.analysis.agreement import (
    agreement_rows,
    alpha_from_coincidences,
    alpha_with_ci,
    package_alpha,
    unit_coincidences,
    value_counts,
)
from reviewer_app.domain.rubric import PAIRWISE_DIMENSION, Rubric

NAN = np.nan
# krippendorff package docstring: 3 coders x 15 units (Krippendorff's own example with missing data).
K15 = [
    [NAN, NAN, NAN, NAN, NAN, 3, 4, 1, 2, 1, 1, 3, 3, NAN, 3],
    [1, NAN, 2, 1, 3, 3, 4, 3, NAN, NAN, NAN, NAN, NAN, NAN, NAN],
    [NAN, NAN, 2, 1, 3, 4, 4, NAN, 2, 1, 1, 3, 3, NAN, 4],
]
# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", 4 observers x 12 units.
K12 = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, NAN, NAN, NAN],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, NAN, 3],
    [NAN, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, NAN],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, NAN],
]


def long(matrix: list[list[float]]) -> pd.DataFrame:
    rows = [(u, f"coder{r}", float(v)) for r, row in enumerate(matrix) for u, v in enumerate(row) if not np.isnan(v)]
    return pd.DataFrame(rows, columns=["unit", "reviewer", "value"])


@pytest.mark.parametrize(
    ("matrix", "domain", "level", "expected", "places"),
    [
        (K15, [1, 2, 3, 4], "nominal", 0.691, 3),
        (K15, [1, 2, 3, 4], "interval", 0.811, 3),
        (K12, [1, 2, 3, 4, 5], "nominal", 0.743, 3),
        (K12, [1, 2, 3, 4, 5], "ordinal", 0.815, 3),
        (K12, [1, 2, 3, 4, 5], "interval", 0.849, 3),
        (K12, [1, 2, 3, 4, 5], "ratio", 0.797, 3),
    ],
)
def test_alpha_matches_published_values(matrix, domain, level, expected, places):
    res = alpha_with_ci(
        long(matrix), level=level, domain=[float(d) for d in domain], rounds=500, rng=np.random.default_rng(0)
    )
    assert round(res.alpha, places) == expected
    assert res.ci_low <= res.alpha <= res.ci_high
    assert res.n_reviewers == len(matrix)


def test_counts_behind_alpha_on_published_example():
    res = alpha_with_ci(
        long(K15), level="nominal", domain=[1.0, 2.0, 3.0, 4.0], rounds=100, rng=np.random.default_rng(0)
    )
    # Units 1 and 14 have no rating; unit 0 has one; the other 12 units hold 26 pairable ratings.
    assert (res.n_units, res.n_ratings) == (12, 26)
    assert "1 item(s) rated once" in res.note


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval", "ratio"])
def test_vectorised_alpha_equals_package(level):
    rng = np.random.default_rng(3)
    data = rng.integers(1, 6, size=(4, 40)).astype(float)
    data[rng.random(data.shape) < 0.3] = np.nan
    frame = long(data.tolist())
    domain = np.arange(1.0, 6.0)
    counts = value_counts(frame["unit"].to_numpy(), (frame["value"] - 1).astype(int).to_numpy(), 5)
    dom = domain if level in ("interval", "ratio") else np.arange(5.0)
    mine = alpha_from_coincidences(unit_coincidences(counts).sum(axis=0)[None], level, dom)[0]
    ref = krippendorff.alpha(reliability_data=data, value_domain=domain, level_of_measurement=level)
    assert mine == pytest.approx(ref, abs=1e-12)


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_alpha_invariant_to_renaming_reviewers_and_reordering_units(data):
    n_rev = data.draw(st.integers(2, 5))
    n_units = data.draw(st.integers(3, 15))
    values = data.draw(
        st.lists(
            st.lists(st.one_of(st.none(), st.integers(1, 5)), min_size=n_units, max_size=n_units),
            min_size=n_rev,
            max_size=n_rev,
        )
    )
    matrix = [[NAN if v is None else float(v) for v in row] for row in values]
    frame = long(matrix)
    level = data.draw(st.sampled_from(["nominal", "ordinal", "interval", "ratio"]))
    domain = [1.0, 2.0, 3.0, 4.0, 5.0]
    base = alpha_with_ci(frame, level=level, domain=domain, rounds=0, rng=np.random.default_rng(0))
    perm_units = data.draw(st.permutations(range(n_units)))
    names = data.draw(st.permutations([f"coder{i}" for i in range(n_rev)]))
    renamed = frame.assign(
        unit=frame["unit"].map(lambda u: f"u{perm_units[u]}"),
        reviewer=frame["reviewer"].map(dict(zip(sorted(set(frame["reviewer"])), names, strict=False))),
    )
    renamed = renamed.sample(frac=1.0, random_state=data.draw(st.integers(0, 1000)))
    again = alpha_with_ci(renamed, level=level, domain=domain, rounds=0, rng=np.random.default_rng(0))
    if base.alpha is None:
        assert again.alpha is None and again.note == base.note
    else:
        assert again.alpha == pytest.approx(base.alpha, abs=1e-12)
    assert (again.n_units, again.n_ratings) == (base.n_units, base.n_ratings)


def test_no_variation_is_null_with_reason():
    frame = pd.DataFrame({"unit": [1, 1, 2, 2], "reviewer": ["a", "b", "a", "b"], "value": [4.0] * 4})
    res = alpha_with_ci(
        frame, level="ordinal", domain=[1.0, 2.0, 3.0, 4.0, 5.0], rounds=100, rng=np.random.default_rng(0)
    )
    assert res.alpha is None and res.ci_low is None
    assert "no variation" in res.note
    assert (res.n_units, res.n_ratings, res.n_reviewers) == (2, 4, 2)


def test_units_rated_once_are_null_with_reason():
    frame = pd.DataFrame({"unit": [1, 2, 3], "reviewer": ["a", "b", "a"], "value": [1.0, 2.0, 3.0]})
    res = alpha_with_ci(frame, level="interval", domain=[1.0, 2.0, 3.0], rounds=100, rng=np.random.default_rng(0))
    assert res.alpha is None and "rated by two or more" in res.note


def test_single_reviewer_is_null_with_reason():
    frame = pd.DataFrame({"unit": [1, 1, 2], "reviewer": ["a", "a", "a"], "value": [1.0, 2.0, 3.0]})
    res = alpha_with_ci(frame, level="interval", domain=[1.0, 2.0, 3.0], rounds=100, rng=np.random.default_rng(0))
    assert res.alpha is None and "only one reviewer" in res.note


def test_no_ratings_is_null():
    frame = pd.DataFrame({"unit": [], "reviewer": [], "value": []})
    assert (
        alpha_with_ci(frame, level="nominal", domain=["x", "y"], rounds=10, rng=np.random.default_rng(0)).note
        == "no ratings"
    )


def test_pairwise_answers_are_compared_after_undoing_the_swap():
    # Both reviewers prefer model "m1" on every item, but one saw the pair swapped: raw "left"/"right"
    # disagree completely, canonical answers agree completely.
    rows = []
    for item in range(6):
        winner_is_a = item % 2 == 0
        for reviewer, swapped in (("r1", False), ("r2", True)):
            left_wins = winner_is_a != swapped
            rows.append(
                {
                    "scenario": "s",
                    "sample_id": f"x{item}",
                    "item_id": item,
                    "is_gold": False,
                    "reviewer": reviewer,
                    "occurrence": 0,
                    "position": item,
                    "swapped": swapped,
                    "dimension": "overall",
                    "value": "left" if left_wins else "right",
                    "model_a": "m1" if winner_is_a else "m2",
                    "model_b": "m2" if winner_is_a else "m1",
                }
            )
    rubric = Rubric(mode="pairwise", overlap=2, dimensions=(PAIRWISE_DIMENSION,))
    row = agreement_rows(pd.DataFrame(rows), rubric, scenario="s", rounds=200, seed=1)[0]
    assert row.level == "nominal"
    assert row.alpha == pytest.approx(1.0)


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval", "ratio"])
@pytest.mark.parametrize("block", [1, 7, 1000, 65_536])
def test_package_alpha_is_the_package_bit_for_bit(level, block):
    # Units rated 2-6 times (so 1/3 and 1/5 make inexact sums) on scales of 2-7 values: the block-wise sum
    # must give the very float the package gives, or a report's alpha could change with the block size.
    rng = np.random.default_rng(block)
    for _ in range(5):
        n_units, n_values = int(rng.integers(50, 3000)), int(rng.integers(2, 8))
        counts = np.zeros((n_units, n_values))
        for unit, m in enumerate(rng.integers(2, 7, size=n_units)):
            np.add.at(counts[unit], rng.integers(0, n_values, size=m), 1)
        domain = np.sort(rng.choice(np.arange(1.0, 20.0), size=n_values, replace=False))
        ref = krippendorff.alpha(value_counts=counts, value_domain=domain, level_of_measurement=level)
        assert package_alpha(counts, domain, level, block=block) == float(ref)
