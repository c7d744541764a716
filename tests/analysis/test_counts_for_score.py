"""The one rule of which ratings count for a score: not gold, first showing, anchors only when asked."""

from __future__ import annotations

import pandas as pd

from reviewer_app.analysis.prepare import anchor_mask, counts_for_score, split_ratings


def _ratings(with_anchor_column: bool = True) -> pd.DataFrame:
    frame = pd.DataFrame(
        {
            "item_id": [1, 2, 3, 4, 5],
            "is_gold": [False, True, False, False, True],
            "occurrence": [0, 0, 1, 0, 1],
            "is_anchor": [False, False, False, True, False],
        }
    )
    return frame if with_anchor_column else frame.drop(columns="is_anchor")


def test_gold_and_repeats_never_count_and_anchors_only_when_asked():
    assert counts_for_score(_ratings(), anchors=True).tolist() == [True, False, False, True, False]
    assert counts_for_score(_ratings(), anchors=False).tolist() == [True, False, False, False, False]


def test_a_frame_without_the_anchor_column_has_no_anchors():
    assert anchor_mask(_ratings(False)).tolist() == [False] * 5
    assert counts_for_score(_ratings(False), anchors=False).tolist() == [True, False, False, True, False]


def test_split_ratings_keeps_the_counted_rows_as_its_main_part():
    parts = split_ratings(_ratings())
    assert parts.main["item_id"].tolist() == [1, 4]
    assert parts.gold["item_id"].tolist() == [2]
    assert parts.repeats["item_id"].tolist() == [3, 5]
