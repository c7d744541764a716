"""The report's "Judge vs panel" section: an LLM judge measured against the panel like one more reviewer
(its report card: :mod:`.judge_card`) and, in rating batches, the rankings that use its ratings without
trusting them (:mod:`.judge_assisted`). The panel's own sections never read the judge's ratings.
"""

from __future__ import annotations

import pandas as pd

from reviewer_app.analysis.judge_assisted import assisted_rankings
from reviewer_app.analysis.judge_measures import judge_cards
from reviewer_app.analysis.prepare import anchor_mask
from reviewer_app.analysis.report_inputs import Inputs
from reviewer_app.domain.report_assisted import JudgeRun, JudgeSection
from reviewer_app.domain.rubric import Rubric

__all__ = ["judge_section"]


def judge_section(
    panel: Inputs, ratings: pd.DataFrame, judge: pd.DataFrame, outputs: pd.DataFrame, run: JudgeRun, *, seed: int
) -> JudgeSection:
    """The section for the judge of ``run`` from the panel's prepared ratings (``panel``; ``ratings`` the frame
    they came from, anchors out), the judge's ratings frame (``results.frames.judge_frame``, anchors out here
    too) and the outputs frame (their lengths, for the length bias). Deterministic for ``seed``."""
    rubric: Rubric = panel.rubric
    judge = judge[~anchor_mask(judge)].reset_index(drop=True) if len(judge) else judge
    lengths = outputs.rename(columns={"output_words": "n_words"})[["sample_id", "model", "n_words"]]
    cards = judge_cards(ratings, judge, rubric, lengths, seed=seed, rounds=panel.rounds) if len(judge) else []
    assisted, notes = assisted_rankings(panel, judge, rubric, seed=seed, rounds=panel.rounds)
    return JudgeSection(run=run, cards=tuple(cards), assisted=tuple(assisted), notes=tuple(notes))
