"""Preferences from a rating batch: two outputs of one sample, by different models, whose mean overall scores
differ.

An output's score is the report's overall score (:func:`~reviewer_app.analysis.overall_rows`: each rating's mean
share of its numeric dimensions' scales, 0-1, 1 best), averaged over the ratings that count for a score
(:func:`~reviewer_app.analysis.counts_for_score`: no gold items, no repeats, no anchors), so an export orders two
outputs as the report's per-sample means do. The panel's votes are its reviewers' own orders: a reviewer who
rated both outputs votes for the one they scored higher, or is even. Outputs of one model shown several times
(repeats) are candidates each; two outputs of the same model are never a preference. Only the panel's ratings
are read: an LLM judge's answers are stored apart.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from reviewer_app.analysis import add_scores, counts_for_score, overall_rows
from reviewer_app.domain.rubric import Rubric
from reviewer_app.exports.columns import VOTE_COLUMNS, empty_votes, ruled_flags

SAME_SCORE = 1e-9  # two means this close are equal: the same ratings averaged in another order differ by less
_SAMPLE = ["scenario", "sample_id"]
_OUTPUT = ["model_a", "repeat_a"]


def rating_votes(ratings: pd.DataFrame, rubric: Rubric) -> pd.DataFrame:
    """One row per pair of outputs of a sample by two models (:data:`~.columns.VOTE_COLUMNS`), in the samples'
    order: ``chosen`` has the higher mean overall score; ``agreement`` is the share of the reviewers who rated
    both whose own scores order them the same way (None when no reviewer rated both). Equal means (to
    :data:`SAME_SCORE`) are a tie (``tie`` True, the pair in model-name order), whose agreement is the share of
    those reviewers who scored the two the same too.

    ``ratings`` is the storage ratings frame (``ratings_frame``; where it has a ``ruled`` column, the answers a
    ruling replaced, a pair with a ruled score of either output is ``adjudicated``); ``rubric`` the batch's, for
    the scales. Worked
    on whole columns (pairs by a self-join per sample), not sample by sample: 3,000 samples of four models took
    22 s in a loop."""
    counted = ratings[counts_for_score(ratings, anchors=False)]
    scored = add_scores(counted, rubric) if len(counted) else counted
    overall = overall_rows(scored) if len(counted) else counted
    if overall.empty:
        return empty_votes()
    ruled_items = scored["item_id"][ruled_flags(scored).to_numpy() & scored["norm"].notna().to_numpy()]
    overall = overall.assign(repeat_a=overall["repeat_a"].astype(int), ruled=overall["item_id"].isin(ruled_items))
    order = {key: i for i, key in enumerate(dict.fromkeys(zip(overall["scenario"], overall["sample_id"], strict=True)))}
    means = (
        overall.groupby([*_SAMPLE, *_OUTPUT], sort=False)
        .agg(score=("score", "mean"), ruled=("ruled", "max"))
        .reset_index()
    )
    pairs = _pairs(means, [*_SAMPLE])
    if pairs.empty:
        return empty_votes()
    own = overall.groupby([*_SAMPLE, *_OUTPUT, "reviewer"], sort=False)["score"].mean().reset_index()
    reviewed = _pairs(own, [*_SAMPLE, "reviewer"])
    diff = reviewed["score_1"].to_numpy() - reviewed["score_2"].to_numpy()
    reviewed = reviewed.assign(first=diff > SAME_SCORE, second=diff < -SAME_SCORE, even=np.abs(diff) <= SAME_SCORE)
    keys = [*_SAMPLE, "model_a_1", "repeat_a_1", "model_a_2", "repeat_a_2"]
    counts = reviewed.groupby(keys, sort=False)[["first", "second", "even"]].sum().reset_index()
    pairs = pairs.merge(counts, on=keys, how="left").fillna({"first": 0, "second": 0, "even": 0})
    pairs["place"] = [order[k] for k in zip(pairs["scenario"], pairs["sample_id"], strict=True)]
    pairs = pairs.sort_values(["place", "model_a_1", "repeat_a_1", "model_a_2", "repeat_a_2"], kind="stable")
    return _oriented(pairs.reset_index(drop=True))


def _pairs(frame: pd.DataFrame, within: list[str]) -> pd.DataFrame:
    """Every two rows of ``frame`` that share ``within``, by different models, once each: the first (suffix
    ``_1``) before the second (``_2``) in (model, repeat) order."""
    both = frame.merge(frame, on=within, suffixes=("_1", "_2"))
    first = both["model_a_1"].to_numpy(dtype=object)
    second = both["model_a_2"].to_numpy(dtype=object)
    out: pd.DataFrame = both[first < second]
    return out


def _oriented(pairs: pd.DataFrame) -> pd.DataFrame:
    """The vote columns: the side with the higher mean chosen (the first on a tie), its reviewers' votes."""
    gap = pairs["score_1"].to_numpy(dtype=float) - pairs["score_2"].to_numpy(dtype=float)
    swap = gap < -SAME_SCORE
    tie = np.abs(gap) <= SAME_SCORE

    def pick(first: str, second: str, flip: np.ndarray) -> np.ndarray:
        out: np.ndarray = np.where(flip, pairs[second].to_numpy(), pairs[first].to_numpy())
        return out

    for_chosen = pick("first", "second", swap).astype(int)
    for_rejected = pick("second", "first", swap).astype(int)
    even = pairs["even"].to_numpy().astype(int)
    both = for_chosen + for_rejected + even
    agreeing = np.where(tie, even, for_chosen)
    with np.errstate(invalid="ignore", divide="ignore"):
        agreement = np.where(both > 0, agreeing / np.maximum(both, 1), np.nan)
    return pd.DataFrame(
        {
            "scenario": pairs["scenario"].to_numpy(),
            "sample_id": pairs["sample_id"].to_numpy(),
            "chosen_model": pick("model_a_1", "model_a_2", swap),
            "rejected_model": pick("model_a_2", "model_a_1", swap),
            "chosen_repeat": pick("repeat_a_1", "repeat_a_2", swap).astype(int),
            "rejected_repeat": pick("repeat_a_2", "repeat_a_1", swap).astype(int),
            "chosen_votes": for_chosen,
            "rejected_votes": for_rejected,
            "tie_votes": even,
            "agreement": pd.Series(agreement).astype(object).where(both > 0, None).to_numpy(),
            "tie": tie,
            "adjudicated": pairs["ruled_1"].to_numpy(dtype=bool) | pairs["ruled_2"].to_numpy(dtype=bool),
            "chosen_score": pick("score_1", "score_2", swap).astype(float),
            "rejected_score": pick("score_2", "score_1", swap).astype(float),
        },
        columns=list(VOTE_COLUMNS),
    )
