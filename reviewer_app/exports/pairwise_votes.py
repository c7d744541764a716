"""Preferences from a pairwise batch: each pair item's reviewers, one verdict each, and the panel's majority.

A reviewer's verdict on an item is their answer on the scenario's ``overall`` dimension when it has one (as the
report ranks on it), otherwise the side that won more of their dimensions (``pairwise_granularity =
"per_dimension"``: a reviewer who gave A correctness and B clarity is even); "tie" and "both bad" answers favour
neither side. The panel's verdict is the side with more votes than both the other side and the even verdicts;
anything else (an even split, or as many even verdicts as votes for the leader) is a tie. Only the ratings that
count for a score count here (:func:`~reviewer_app.analysis.counts_for_score`: no gold items, no repeats, no
anchors), and only the panel's: an LLM judge's answers are stored apart and never read.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from reviewer_app.analysis import OVERALL, canonical_outcome, counts_for_score
from reviewer_app.domain.rubric import Rubric
from reviewer_app.exports.columns import VOTE_COLUMNS, empty_votes, ruled_flags

_ITEM_FIELDS = ("scenario", "sample_id", "model_a", "model_b", "repeat_a", "repeat_b")


def pairwise_votes(ratings: pd.DataFrame, rubric: Rubric) -> pd.DataFrame:
    """One row per pair item the panel answered (:data:`~.columns.VOTE_COLUMNS`), in item order: ``chosen`` is
    the majority's side, ``agreement`` the share of the item's reviewers who gave it; a tie (``tie`` True)
    names the pair in model-name order and has the largest share of one verdict as its agreement. Scores are
    None (a pairwise batch has none).

    ``ratings`` is the storage ratings frame (``ratings_frame``, with its ``is_gold``, ``occurrence``,
    ``is_anchor``, ``swapped`` and ``value`` columns); where it has a ``ruled`` column (the answers a ruling
    replaced), an item with a ruled deciding answer is ``adjudicated``."""
    counted = ratings[counts_for_score(ratings, anchors=False)]
    if counted.empty:
        return empty_votes()
    outcome = canonical_outcome(counted).to_numpy()
    deciding = _deciding(counted, rubric)
    counted = counted.assign(side=np.where(outcome == "a", 1, np.where(outcome == "b", -1, 0)))[deciding]
    if counted.empty:
        return empty_votes()
    per_reviewer = counted.groupby(["item_id", "reviewer"], sort=False)["side"].sum()
    verdict = np.sign(per_reviewer.to_numpy())
    items = per_reviewer.index.get_level_values("item_id")
    votes = pd.DataFrame({"item_id": items, "a": verdict > 0, "b": verdict < 0, "even": verdict == 0})
    totals = votes.groupby("item_id", sort=False)[["a", "b", "even"]].sum().astype(int)
    fields = counted.groupby("item_id", sort=False)[list(_ITEM_FIELDS)].first().loc[totals.index]
    ruled = ruled_flags(counted).groupby(counted["item_id"].to_numpy(), sort=False).any().loc[totals.index]
    return _decided(fields, totals, ruled.to_numpy(dtype=bool))


def _deciding(counted: pd.DataFrame, rubric: Rubric) -> np.ndarray:
    """Which answers make a reviewer's verdict: the ``overall`` dimension's in a scenario that has one, every
    dimension's elsewhere."""
    has_overall = {s: any(d.name == OVERALL for d in rubric.dimensions_for(s)) for s in set(counted["scenario"])}
    scenario_has = counted["scenario"].map(has_overall).to_numpy(dtype=bool)
    out: np.ndarray = ~scenario_has | (counted["dimension"] == OVERALL).to_numpy()
    return out


def _decided(fields: pd.DataFrame, totals: pd.DataFrame, ruled: np.ndarray) -> pd.DataFrame:
    """The panel's verdict per item from its vote counts (``a``, ``b``, ``even``); ``ruled``: the items whose
    deciding answers a ruling replaced."""
    a, b, even = (totals[c].to_numpy() for c in ("a", "b", "even"))
    a_wins = (a > b) & (a > even)
    b_wins = (b > a) & (b > even)
    tie = ~(a_wins | b_wins)
    panel = a + b + even
    chosen_votes = np.where(b_wins, b, a)
    rejected_votes = np.where(b_wins, a, b)
    leader = np.where(tie, np.maximum(np.maximum(a, b), even), chosen_votes)
    model_a, model_b = fields["model_a"].to_numpy(), fields["model_b"].to_numpy()
    repeat_a, repeat_b = fields["repeat_a"].to_numpy(), fields["repeat_b"].to_numpy()
    frame = pd.DataFrame(
        {
            "scenario": fields["scenario"].to_numpy(),
            "sample_id": fields["sample_id"].to_numpy(),
            "chosen_model": np.where(b_wins, model_b, model_a),
            "rejected_model": np.where(b_wins, model_a, model_b),
            "chosen_repeat": np.where(b_wins, repeat_b, repeat_a).astype(int),
            "rejected_repeat": np.where(b_wins, repeat_a, repeat_b).astype(int),
            "chosen_votes": chosen_votes.astype(int),
            "rejected_votes": rejected_votes.astype(int),
            "tie_votes": even.astype(int),
            "agreement": leader / panel,
            "tie": tie,
            "adjudicated": ruled,
            "chosen_score": None,
            "rejected_score": None,
        },
        columns=list(VOTE_COLUMNS),
    )
    return frame.reset_index(drop=True)
