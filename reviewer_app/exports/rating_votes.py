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

from itertools import combinations

import numpy as np
import pandas as pd

from reviewer_app.analysis import add_scores, counts_for_score, overall_rows
from reviewer_app.domain.rubric import Rubric
from reviewer_app.exports.columns import VOTE_COLUMNS, empty_votes

SAME_SCORE = 1e-9  # two means this close are equal: the same ratings averaged in another order differ by less
_OUTPUT = ["scenario", "sample_id", "model_a", "repeat_a"]


def rating_votes(ratings: pd.DataFrame, rubric: Rubric) -> pd.DataFrame:
    """One row per pair of outputs of a sample by two models (:data:`~.columns.VOTE_COLUMNS`), in the samples'
    order: ``chosen`` has the higher mean overall score; ``agreement`` is the share of the reviewers who rated
    both whose own scores order them the same way (None when no reviewer rated both). Equal means (to
    :data:`SAME_SCORE`) are a tie (``tie`` True, the pair in model-name order), whose agreement is the share of
    those reviewers who scored the two the same too.

    ``ratings`` is the storage ratings frame (``ratings_frame``); ``rubric`` the batch's, for the scales."""
    counted = ratings[counts_for_score(ratings, anchors=False)]
    overall = overall_rows(add_scores(counted, rubric)) if len(counted) else counted
    if overall.empty:
        return empty_votes()
    overall = overall.assign(repeat_a=overall["repeat_a"].astype(int))
    rows: list[dict[str, object]] = []
    for (scenario, sample), part in overall.groupby(["scenario", "sample_id"], sort=False):
        means = part.groupby(_OUTPUT[2:], sort=True)["score"].mean()
        own = part.groupby([*_OUTPUT[2:], "reviewer"])["score"].mean().unstack("reviewer")
        for first, second in combinations(means.index, 2):
            if first[0] != second[0]:
                rows.append(_pair(str(scenario), str(sample), first, second, means, own))
    return pd.DataFrame(rows, columns=list(VOTE_COLUMNS)) if rows else empty_votes()


def _pair(
    scenario: str,
    sample: str,
    first: tuple[str, int],
    second: tuple[str, int],
    means: pd.Series,
    own: pd.DataFrame,
) -> dict[str, object]:
    """The preference between two outputs (model, repeat) of one sample, ``first`` before ``second`` in name
    order: the chosen one has the higher mean; each reviewer who rated both votes by their own scores."""
    gap = float(means[first]) - float(means[second])
    tie = abs(gap) <= SAME_SCORE
    chosen, rejected = (second, first) if gap < -SAME_SCORE else (first, second)
    mine = own.loc[[chosen, rejected]].dropna(axis=1).to_numpy(dtype=float)
    diff = mine[0] - mine[1] if mine.size else np.zeros(0)
    for_chosen, for_rejected = int((diff > SAME_SCORE).sum()), int((diff < -SAME_SCORE).sum())
    n_even = int((np.abs(diff) <= SAME_SCORE).sum())
    both = for_chosen + for_rejected + n_even
    agreeing = n_even if tie else for_chosen
    return {
        "scenario": scenario,
        "sample_id": sample,
        "chosen_model": chosen[0],
        "rejected_model": rejected[0],
        "chosen_repeat": int(chosen[1]),
        "rejected_repeat": int(rejected[1]),
        "chosen_votes": for_chosen,
        "rejected_votes": for_rejected,
        "tie_votes": n_even,
        "agreement": agreeing / both if both else None,
        "tie": tie,
        "chosen_score": float(means[chosen]),
        "rejected_score": float(means[rejected]),
    }
