"""A baseline's and its follow-up's ratings frames coded into integers, for ``contrasts`` to sum.

The rules of what is compared are in ``compare``'s docstring; here both frames become arrays: coded once into
integers over lists they share (scenarios, samples, dimensions, models, outputs), so that each contrast
``contrasts`` builds is a few boolean masks and ``bincount`` calls, not a pandas groupby. In rating mode the
"overall" rows are the report's (``prepare.overall_rows``), made without a group-by where they can be.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from typing import Any

import numpy as np
import pandas as pd

from reviewer_app.analysis.prepare import (
    OVERALL,
    add_scores,
    anchor_mask,
    canonical_outcome,
    overall_rows,
    split_ratings,
)
from reviewer_app.domain.rubric import Rubric


@dataclass(frozen=True)
class Coded:
    """A long frame as arrays, one entry per rating (per answer in pairwise mode): codes into the
    comparison's shared lists of scenarios, dimensions and models; ``sample`` a code over (scenario,
    sample_id), each scenario's samples contiguous and sorted; ``output`` the rated output (pairwise: the two
    outputs in either order) on its sample as one integer; ``value`` the score (pairwise: 1 when model_a
    won, 0 when model_b won, 0.5 for a tie or both bad)."""

    scenario: np.ndarray
    dimension: np.ndarray
    sample: np.ndarray
    model_a: np.ndarray
    model_b: np.ndarray  # -1 in rating mode
    output: np.ndarray
    value: np.ndarray
    anchor: np.ndarray
    reviewer: np.ndarray  # a code into the reviewers of both rounds (-1 when unknown)

    def where(self, mask: np.ndarray) -> Coded:
        return Coded(*(getattr(self, f.name)[mask] for f in fields(self)))

    def rows(self, start: int, stop: int) -> Coded:
        """Rows ``start`` to ``stop`` (views, not copies)."""
        return Coded(*(getattr(self, f.name)[start:stop] for f in fields(self)))


def by_scenario(coded: Coded, scenarios: int, dimensions: int | None = None) -> tuple[Coded, np.ndarray]:
    """The rows ordered by scenario (and, given the number of ``dimensions``, by dimension within each
    scenario), each group's in the order they came (a stable sort, so every sum later adds the same numbers
    in the same order as a mask per scenario and dimension did), and where each scenario's rows start (then
    the number of rows): one sort instead of a pass over every row per scenario and dimension."""
    keys = coded.scenario if dimensions is None else coded.scenario * (dimensions + 1) + (coded.dimension + 1)
    if len(keys) and int(keys.max()) < 2**15:
        keys = keys.astype(np.int16)  # numpy sorts 16-bit keys stably by radix: the same order, 4x faster
    order = np.argsort(keys, kind="stable")
    ordered = coded.where(order)
    return ordered, np.searchsorted(ordered.scenario, np.arange(scenarios + 1))


@dataclass(frozen=True)
class Names:
    """The lists the codes of both frames point into."""

    scenarios: list[str]
    starts: np.ndarray  # first sample code of each scenario, then the number of samples
    dimensions: pd.Index
    models: pd.Index
    repeats: int  # 1 + the highest repeat index
    reviewers: pd.Index  # of both rounds: one code for a reviewer who rated in both

    @property
    def dimension_codes(self) -> dict[str, int]:
        return _positions(self.dimensions)

    @property
    def model_codes(self) -> dict[str, int]:
        return _positions(self.models)


def _positions(index: pd.Index) -> dict[str, int]:
    """Name -> position in ``index`` (its names are distinct): a dict lookup instead of ``get_indexer``, which
    turns its argument into an index of pandas' text dtype first (about 2 ms a call, 90 calls a comparison)."""
    return {str(name): k for k, name in enumerate(index)}


_LONG = [
    "scenario",
    "sample_id",
    "dimension",
    "model_a",
    "model_b",
    "repeat_a",
    "repeat_b",
    "value",
    "anchor",
    "reviewer",
]


def rating_coded(baseline: pd.DataFrame, candidate: pd.DataFrame, rubric: Rubric) -> tuple[Names, Coded, Coded]:
    """Rating mode: the shared lists and both frames' long rows (:func:`_rating_long`'s rows, in its order) as
    codes. When each rating has one numeric dimension (a one-dimension rubric), a rating's "overall" row is
    its own row again (see :func:`_overall`): then each frame's scored ratings are coded once and the overall
    rows are those codes again, with the "overall" dimension and the 0-1 ``norm`` as value, instead of a
    frame of twice the rows whose every text column is hashed and looked up again (issue 10's benchmark: 2 x
    300,000 ratings). Otherwise the long frames themselves are coded."""
    scored = [_scored(baseline, rubric, drop_anchors=True), _scored(candidate, rubric, drop_anchors=False)]
    rows = [_rating_rows(frame, anchor_items) for frame, anchor_items in scored]
    if rows[0] is None or rows[1] is None:
        base_long, cand_long = (_rating_long(frame, anchor_items) for frame, anchor_items in scored)
        names, samples = names_of(base_long, cand_long, rubric, False)
        base = encode(base_long, samples[: len(base_long)], names, False)
        return names, base, encode(cand_long, samples[len(base_long) :], names, False)
    b, c = rows[0], rows[1]
    names, samples = names_of(b.frame, c.frame, rubric, False)
    overall = code_of(names.dimension_codes, OVERALL)
    base = _with_overall(encode(b.frame, samples[: len(b.frame)], names, False), b, overall)
    cand = _with_overall(encode(c.frame, samples[len(b.frame) :], names, False), c, overall)
    return names, base, cand


def _scored(frame: pd.DataFrame, rubric: Rubric, *, drop_anchors: bool) -> tuple[pd.DataFrame, set[Any]]:
    """The ratings that count (``prepare.split_ratings``) with their ``score`` and ``norm``
    (``prepare.add_scores``), anchors left out when ``drop_anchors``, and the anchor items among them."""
    main = split_ratings(frame).main
    anchor = anchor_mask(main)
    if drop_anchors and anchor.any():
        main, anchor = main[~anchor].reset_index(drop=True), anchor[~anchor]
    anchor_items = set(main["item_id"].to_numpy()[anchor].tolist())
    return add_scores(main, rubric), anchor_items


def _named_rows(scored: pd.DataFrame) -> np.ndarray:
    """Which scored rows count under their own dimension (numeric, and not a rubric's own "overall")."""
    out: np.ndarray = (scored["dimension"] != OVERALL).to_numpy() & scored["score"].notna().to_numpy()
    return out


def _rating_long(scored: pd.DataFrame, anchor_items: set[Any]) -> pd.DataFrame:
    """One row per rating and numeric dimension with its score as ``value``, plus the "overall" rows (the
    report's: dimensions rescaled to 0-1 and averaged per rating), and an ``anchor`` flag."""
    named = scored[_named_rows(scored)]
    overall = _overall(scored)
    parts = [
        part.assign(value=part["score"], anchor=part["item_id"].isin(anchor_items), model_b=None, repeat_b=None)
        for part in (named, overall)
    ]
    return pd.concat([p[_LONG] for p in parts], ignore_index=True)


@dataclass(frozen=True)
class _Rows:
    """The scored rows :func:`_rating_long` makes its rows of, when each is a rating's only numeric row."""

    frame: pd.DataFrame  # with ``value`` (the score) and ``anchor``
    named: np.ndarray  # the rows counted under their own dimension
    overall: np.ndarray  # the rows counted again under "overall"
    norm: np.ndarray  # each row's 0-1 score: its value under "overall"


def _rating_rows(scored: pd.DataFrame, anchor_items: set[Any]) -> _Rows | None:
    """:class:`_Rows` of ``scored``; None when an overall row is a mean over several rows (then
    ``prepare.overall_rows`` makes the rows)."""
    numeric = scored["norm"].notna().to_numpy()
    if not _one_row_per_rating(scored if numeric.all() else scored[numeric]):
        return None
    named = _named_rows(scored)
    keep = named | numeric
    rows = scored if keep.all() else scored[keep]
    rows = rows.assign(value=rows["score"], anchor=rows["item_id"].isin(anchor_items))
    return _Rows(rows, named[keep], numeric[keep], rows["norm"].to_numpy(dtype=float))


def _with_overall(coded: Coded, rows: _Rows, code: int) -> Coded:
    """:func:`_rating_long`'s rows from ``rows`` coded: the named rows, then the overall rows (the same codes
    with the dimension ``code`` and the row's 0-1 ``norm`` as value)."""
    first = coded if rows.named.all() else coded.where(rows.named)
    again = coded.where(rows.overall)
    again = replace(again, dimension=np.full(len(again.value), code, dtype=np.int64), value=rows.norm[rows.overall])
    return Coded(*(np.concatenate([getattr(first, f.name), getattr(again, f.name)]) for f in fields(coded)))


def _overall(scored: pd.DataFrame) -> pd.DataFrame:
    """``prepare.overall_rows(scored)``'s rows, its columns :data:`_LONG` needs. When each rating (item,
    reviewer, showing) has one numeric dimension, as a one-dimension rubric gives, its overall row is that
    row (the mean of one ``norm`` is that ``norm``, in the order the groups first appear), so the group-by
    over 300,000 ratings (0.15 s of each batch's preparation) is skipped. Otherwise ``overall_rows`` itself."""
    numeric = scored[scored["norm"].notna().to_numpy()]
    if not _one_row_per_rating(numeric):
        return overall_rows(scored)
    return numeric.assign(dimension=OVERALL, score=numeric["norm"], value=numeric["norm"])


def _one_row_per_rating(numeric: pd.DataFrame) -> bool:
    """Whether every rating (item, reviewer, showing) has one row in ``numeric`` (the rows with a ``norm``),
    none of them with a missing group key: then ``overall_rows`` gives these rows as they are."""
    reviewer = pd.factorize(numeric["reviewer"].to_numpy())[0].astype(np.int64)
    occurrence = pd.factorize(numeric["occurrence"].to_numpy())[0].astype(np.int64)
    key = numeric["item_id"].to_numpy(dtype=np.int64) * (int(reviewer.max(initial=0)) + 1) + reviewer
    key = key * (int(occurrence.max(initial=0)) + 1) + occurrence
    named = not (_missing(numeric["scenario"]).any() or _missing(numeric["sample_id"]).any())  # keys a group-by drops
    return (
        bool(len(numeric)) and named and not (reviewer < 0).any() and not pd.Series(key, copy=False).duplicated().any()
    )


def _missing(values: pd.Series) -> np.ndarray:
    """``values.isna()`` as an array, in one C pass over the column's values (no frame of two columns copied)."""
    return np.asarray(pd.isna(values.to_numpy()), dtype=bool)


def pairwise_long(frame: pd.DataFrame, rubric: Rubric, *, drop_anchors: bool) -> pd.DataFrame:
    """One row per pairwise answer, ``value`` 1 when model_a won, 0 when model_b won, 0.5 for a tie or both
    bad, and an ``anchor`` flag."""
    main = split_ratings(frame).main
    anchor = anchor_mask(main)
    if drop_anchors and anchor.any():
        main, anchor = main[~anchor].reset_index(drop=True), anchor[~anchor]
    outcome = canonical_outcome(main).to_numpy()
    value = np.select([outcome == "a", outcome == "b"], [1.0, 0.0], default=0.5)
    return main.assign(value=value, anchor=anchor)[_LONG]


def names_of(base: pd.DataFrame, cand: pd.DataFrame, rubric: Rubric, pairwise: bool) -> tuple[Names, np.ndarray]:
    """The shared lists, and each row's sample code (base rows first, then the follow-up's): samples are
    (scenario, sample_id), numbered by scenario then sample id, both sorted."""
    scenario_codes, scenarios = pd.factorize(pd.concat([base["scenario"], cand["scenario"]]), sort=True)
    id_codes, ids = pd.factorize(pd.concat([base["sample_id"], cand["sample_id"]]), sort=True)
    keys, samples = _unique(scenario_codes.astype(np.int64) * max(len(ids), 1) + id_codes, len(scenarios) * len(ids))
    starts = np.searchsorted(keys // max(len(ids), 1), np.arange(len(scenarios) + 1))
    sides = ("a", "b") if pairwise else ("a",)
    seen = pd.unique(
        np.concatenate([f[f"model_{side}"].to_numpy(dtype=object) for f in (base, cand) for side in sides])
    )
    models = sorted({str(m) for m in seen[~np.asarray(pd.isna(seen), dtype=bool)]})
    highest = [_repeats(f, side).max(initial=0) for f in (base, cand) for side in sides]
    people = pd.unique(np.concatenate([f["reviewer"].to_numpy(dtype=object) for f in (base, cand)]))
    reviewers = sorted({str(r) for r in people[~np.asarray(pd.isna(people), dtype=bool)]})
    names = Names(
        scenarios=[str(s) for s in scenarios],
        starts=starts,
        dimensions=pd.Index(list(dict.fromkeys([d.name for d in rubric.dimensions] + [OVERALL]))),
        models=pd.Index(models),
        repeats=int(max(highest, default=0)) + 1,
        reviewers=pd.Index(reviewers),
    )
    return names, samples.astype(np.int64)


def _unique(keys: np.ndarray, bound: int) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(keys, return_inverse=True)`` for keys in [0, ``bound``): the keys present, sorted, and each
    key's place among them, from a table of the range instead of a sort of every key (a tenth of the time at
    600,000 ratings); ``np.unique`` itself when the range is much larger than the keys or a key is outside it
    (a missing scenario or sample id codes as -1)."""
    if bound > 4 * len(keys) + 1024 or (len(keys) and (keys.min() < 0 or keys.max() >= bound)):
        found, inverse = np.unique(keys, return_inverse=True)
        return found, inverse.reshape(-1)
    present = np.zeros(bound, dtype=bool)
    present[keys] = True
    rank = np.cumsum(present) - 1
    return np.flatnonzero(present), rank[keys]


def _repeats(frame: pd.DataFrame, side: str) -> np.ndarray:
    out: np.ndarray = pd.to_numeric(frame[f"repeat_{side}"], errors="coerce").fillna(0).to_numpy(dtype=np.int64)
    return out


def encode(frame: pd.DataFrame, sample: np.ndarray, names: Names, pairwise: bool) -> Coded:
    scenario = np.searchsorted(names.starts, sample, side="right") - 1
    outputs = len(names.models) * names.repeats
    model_codes = names.model_codes
    model_a = _codes_of(frame["model_a"], model_codes)
    out_a = model_a.astype(np.int64) * names.repeats + _repeats(frame, "a")
    if pairwise:
        model_b = _codes_of(frame["model_b"], model_codes)
        out_b = model_b.astype(np.int64) * names.repeats + _repeats(frame, "b")
        output = (sample * outputs + np.minimum(out_a, out_b)) * outputs + np.maximum(out_a, out_b)
    else:
        model_b = np.full(len(frame), -1)
        output = sample * outputs + out_a
    return Coded(
        scenario=scenario,
        dimension=_codes_of(frame["dimension"], names.dimension_codes),
        sample=sample,
        model_a=model_a,
        model_b=model_b,
        output=output,
        value=frame["value"].to_numpy(dtype=float),
        anchor=frame["anchor"].to_numpy(dtype=bool),
        reviewer=_reviewer_codes(frame["reviewer"], names.reviewers),
    )


def _reviewer_codes(values: pd.Series, reviewers: pd.Index) -> np.ndarray:
    """Each rating's reviewer as a code into ``reviewers`` (names as text), -1 where missing."""
    found, distinct = pd.factorize(values, use_na_sentinel=True)
    codes = _positions(reviewers)
    table = np.fromiter((codes.get(str(v), -1) for v in distinct), np.int64, len(distinct))
    out: np.ndarray = np.append(table, -1)[found]
    return out


def _codes_of(values: pd.Series, codes: Mapping[str, int]) -> np.ndarray:
    """Each value's code in ``codes`` (-1 for a name not there or a missing value), as ``get_indexer`` gives
    them: each distinct value looked up once."""
    found, distinct = pd.factorize(values, use_na_sentinel=True)
    table = np.fromiter((codes.get(v, -1) for v in distinct), np.int64, len(distinct))
    out: np.ndarray = np.append(table, -1)[found]  # a missing value (-1) takes the last entry
    return out


def code_of(codes: Mapping[str, int], name: str) -> int:
    """The code of ``name`` (:meth:`Names.model_codes` or :meth:`Names.dimension_codes`), -1 if absent."""
    return codes.get(name, -1)
