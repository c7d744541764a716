"""Shape the storage frames for the statistics: split off gold and repeats, make values numeric, undo blinding.

Everything here is a pure function of the long ``ratings_frame`` / ``outputs_frame`` (see
``storage.repositories.frames``) and the :class:`~reviewer_app.domain.rubric.Rubric`.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd

from reviewer_app.domain.rubric import Dimension, Rubric
from reviewer_app.domain.scales import spec_of

OVERALL = "overall"
ANCHOR = "is_anchor"  # ratings frame: the rating is of an anchor item (a baseline output shown again)
OVERALL_AGREED = "overall_agreed"  # "overall" without the dimensions reviewers do not agree on
# Canonical pairwise outcomes: "a" = the canonical first model (model_a) won, "b" = model_b won.
PAIRWISE_OUTCOMES = ("a", "b", "tie", "both_bad")


@dataclass(frozen=True)
class RatingParts:
    """The three uses of a ratings frame: the main data, the silent gold checks and the silent repeats."""

    main: pd.DataFrame  # first showings of ordinary items: rankings and agreement
    gold: pd.DataFrame  # gold items (first showing): gold accuracy only
    repeats: pd.DataFrame  # second showings to the same reviewer: self-consistency only


def as_python_strings(frame: pd.DataFrame) -> pd.DataFrame:
    """Text columns as plain Python objects: Arrow-backed strings make the many dict lookups here slow."""
    out = frame.copy(deep=False)  # copy-on-write: replaced columns never reach the caller's frame
    for col in out.columns:
        if pd.api.types.is_string_dtype(out[col].dtype) and out[col].dtype != object:
            out[col] = out[col].astype(object)
    return out


def anchor_mask(ratings: pd.DataFrame) -> np.ndarray:
    """Which ratings are of anchor items (a baseline's outputs shown again in a follow-up batch); none where
    the frame has no ``is_anchor`` column."""
    if ANCHOR not in ratings:
        return np.zeros(len(ratings), dtype=bool)
    out: np.ndarray = ratings[ANCHOR].fillna(False).astype(bool).to_numpy()
    return out


def counts_for_score(ratings: pd.DataFrame, *, anchors: bool) -> np.ndarray:
    """The one rule of which ratings count for a model's score, wherever a score is computed or a "no
    ratings yet" is decided: not gold items (they measure the reviewer), first showings only (a repeat
    measures the reviewer's consistency), and anchors only where ``anchors`` (an anchor rates the baseline's
    output, not a model of this batch: the report and a comparison set them apart themselves)."""
    out: np.ndarray = ~ratings["is_gold"].astype(bool).to_numpy() & (ratings["occurrence"].astype(int) == 0).to_numpy()
    if not anchors:
        out &= ~anchor_mask(ratings)
    return out


def split_ratings(ratings: pd.DataFrame) -> RatingParts:
    """Separate gold items and repeats from the ratings that count (anchors stay: see ``counts_for_score``)."""
    ratings = as_python_strings(ratings)
    is_gold = ratings["is_gold"].astype(bool)
    repeat = ratings["occurrence"].astype(int) > 0
    counted = counts_for_score(ratings, anchors=True)
    # Usually every rating counts: then the main part shares the frame's columns (copy-on-write) instead of
    # being a copy of millions of rows.
    main = ratings.reset_index(drop=True) if counted.all() else ratings[counted].reset_index(drop=True)
    return RatingParts(
        main=main,
        gold=ratings[is_gold & ~repeat].reset_index(drop=True),
        repeats=ratings[repeat].reset_index(drop=True),
    )


def numeric_values(values: pd.Series, errors: Literal["raise", "coerce"] = "coerce") -> pd.Series:
    """``pd.to_numeric`` of a text column, parsing each distinct text once (ratings repeat a handful of values)."""
    codes, uniques = pd.factorize(values, use_na_sentinel=True)
    parsed = pd.to_numeric(pd.Series(np.asarray(uniques, dtype=object)), errors=errors).to_numpy(dtype=float)
    out = np.full(len(codes), np.nan)
    found = codes >= 0
    out[found] = parsed[codes[found]]
    return pd.Series(out, index=values.index, name=values.name)


def canonical_outcome(frame: pd.DataFrame) -> pd.Series:
    """Undo the blind left/right swap: the displayed side picked becomes "a" (model_a won) or "b".

    If an item was shown swapped, model_b was on the left, so "left" means model_b won. "tie" and
    "both_bad" are kept as they are.
    """
    value = frame["value"].astype(str)
    swapped = frame["swapped"].astype(bool)
    left_is_a = ~swapped
    out = value.copy()
    out[(value == "left") & left_is_a] = "a"
    out[(value == "left") & ~left_is_a] = "b"
    out[(value == "right") & left_is_a] = "b"
    out[(value == "right") & ~left_is_a] = "a"
    return out


def recorded(frame: pd.DataFrame) -> pd.Series:
    """Which answers were given in the app, with their side and queue position recorded when shown.

    Imported answers were never shown here: their left/right side and position are made up by the import.
    A ``shown`` column (the showing was recorded) decides when the frame has it; otherwise an answer with a
    measured ``seconds_spent`` counts as shown (the app measures every answer it shows, an import none)."""
    if "shown" in frame:
        return frame["shown"].fillna(False).astype(bool)
    if "seconds_spent" in frame:
        return frame["seconds_spent"].notna()
    return pd.Series(True, index=frame.index)


def numeric_dimensions(rubric: Rubric, scenario: str | None = None) -> list[Dimension]:
    """The dimensions that carry a score (Likert, binary, continuous); categorical ones only get agreement."""
    dims = rubric.dimensions if scenario is None else rubric.dimensions_for(scenario)
    return [d for d in dims if d.numeric()]


def scale_bounds(dim: Dimension) -> tuple[float, float]:
    """Lowest and highest possible score of a numeric dimension."""
    bounds = spec_of(dim.scale).bounds(dim)
    assert bounds is not None, f"{dim.name} is not a score"
    return bounds


def ordinal_levels(dim: Dimension) -> list[float] | None:
    """The ordered values of an ordinal numeric dimension (for the rank-based comparison), else None."""
    return spec_of(dim.scale).ordinal_scores(dim) if dim.level == "ordinal" else None


FIXED_ENDS = "fixed_ends"  # scored frame: the dimension's ends are its answers' (Likert, binary), not a chosen max


def add_scores(main: pd.DataFrame, rubric: Rubric) -> pd.DataFrame:
    """Rating mode: add ``score`` (the value as a number) and ``norm`` (the score as a share of its scale, 0-1,
    turned round for a lower-is-better dimension so that 1 is always the best possible), and ``fixed_ends``:
    whether the scale's ends are its answers (Likert, binary) rather than a ``max`` the rubric chose (a
    continuous scale; see :func:`overall_rows` for why that matters).

    Categorical dimensions get NaN in both: they are not scores.
    """
    frame = main.copy(deep=False)  # copy-on-write: new columns never reach the caller's frame
    frame["score"] = np.nan
    frame["norm"] = np.nan
    frame[FIXED_ENDS] = False
    for dim in rubric.dimensions:
        if not dim.numeric():
            continue
        rows = frame["dimension"] == dim.name
        if not rows.any():
            continue
        lo, hi = scale_bounds(dim)
        score = numeric_values(frame.loc[rows, "value"])
        frame.loc[rows, "score"] = score
        share = (score - lo) / (hi - lo)
        frame.loc[rows, "norm"] = share if dim.higher_is_better else 1.0 - share
        frame.loc[rows, FIXED_ENDS] = spec_of(dim.scale).fixed_ends
    return frame


def overall_rows(scored: pd.DataFrame, without: frozenset[str] = frozenset()) -> pd.DataFrame:
    """Rating mode "overall": one row per rating (item, reviewer, occurrence) with the mean ``norm`` of its
    numeric dimensions (except those named in ``without``), so a binary and a 1-5 dimension weigh the same.
    ``score`` equals ``norm`` (0-1, 1 best).

    A continuous dimension counts only in a scenario with no Likert or binary dimension (``fixed_ends``). Its
    share of the scale, (value - min) / (max - min), depends on a ``max`` the rubric chose (an MQM score capped
    at 25 or at 200): averaged with a Likert dimension, that arbitrary number would set how much it weighs,
    and so could reorder the models. Alone (or with other continuous ones only) it is the overall: with one,
    the overall's order is that dimension's, whatever its max."""
    numeric = scored.dropna(subset=["norm"])
    if without:
        numeric = numeric[~numeric["dimension"].isin(list(without))]
    if FIXED_ENDS in numeric and not numeric[FIXED_ENDS].all():
        fixed = numeric[FIXED_ENDS].astype(bool)
        numeric = numeric[fixed | ~fixed.groupby(numeric["scenario"]).transform("any")]
    if numeric.empty:
        return numeric.assign(dimension=OVERALL)
    keys = ["scenario", "sample_id", "item_id", "reviewer", "occurrence"]
    first = numeric.groupby(keys, sort=False, as_index=False).agg(
        model_a=("model_a", "first"),
        repeat_a=("repeat_a", "first"),
        position=("position", "first"),
        swapped=("swapped", "first"),
        norm=("norm", "mean"),
        is_gold=("is_gold", "first"),
        **{c: (c, "first") for c in ("seconds_spent", "shown") if c in numeric},  # see recorded()
    )
    first["dimension"] = OVERALL
    first["score"] = first["norm"]
    first["value"] = _as_text(first["norm"])
    return first


def _as_text(values: pd.Series) -> pd.Series:
    """``values.astype(str)``, converting each distinct value once."""
    codes, uniques = pd.factorize(values, use_na_sentinel=False)
    return pd.Series(pd.Series(uniques).astype(str).to_numpy()[codes], index=values.index, dtype="str")


def finite_or_none(x: float | None) -> float | None:
    """``x`` as a float, or None when it is missing, NaN or infinite (the report has no NaN)."""
    return None if x is None or not np.isfinite(x) else float(x)


def sub_rng(seed: int, *names: str) -> np.random.Generator:
    """A generator for one named computation: stable across runs and independent of the order of work."""
    keys = [seed] + [zlib.crc32(n.encode("utf-8")) for n in names]
    return np.random.default_rng(np.random.SeedSequence(keys))


def bootstrap_weights(n: int, rounds: int, rng: np.random.Generator) -> np.ndarray:
    """(rounds x n) resampling counts: row r says how often each of the n clusters is drawn in round r.

    Each round draws n cluster indices with replacement and counts them (a multinomial(n, 1/n) draw);
    counting with one ``bincount`` per block of rounds is several times faster than ``rng.multinomial``.
    Blocks of 64 rounds draw the same numbers as one (rounds x n) draw but keep the index arrays small.
    """
    if n == 0:
        return np.zeros((rounds, 0))
    out = np.empty((rounds, n))
    offsets = np.arange(_BLOCK)[:, None] * n
    for start in range(0, rounds, _BLOCK):
        k = min(_BLOCK, rounds - start)
        idx = rng.integers(0, n, size=(k, n))
        idx += offsets[:k]
        out[start : start + k] = np.bincount(idx.ravel(), minlength=k * n).reshape(k, n)
    return out


_BLOCK = 64  # bootstrap rounds drawn per block in bootstrap_weights


def compact_counts(weights: np.ndarray) -> np.ndarray:
    """``bootstrap_weights`` in the smallest unsigned integer type that holds any count (at most n): a
    report keeps every scenario's weights to the end, 1.3 GB as float64 at a million outputs. Exact: turn
    it back with ``astype(np.float64)`` before any arithmetic, so every product and sum stays as it was."""
    n = weights.shape[1]
    dtype = np.uint8 if n <= 0xFF else np.uint16 if n <= 0xFFFF else np.uint32
    return weights.astype(dtype)
