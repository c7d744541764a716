"""A comparison's "overall" rows (``compare_frames._overall``) are the report's (``prepare.overall_rows``): a
rating's mean 0-1 score over its numeric dimensions. With one numeric dimension per rating they are taken as
they are, without the group-by (issue 10's benchmark); as soon as one rating has two, the group-by decides."""

from __future__ import annotations

import pandas as pd

from reviewer_app.analysis.prepare import OVERALL, overall_rows
from reviewer_app.versions.compare_frames import _overall

COLUMNS = ["scenario", "sample_id", "item_id", "reviewer", "occurrence", "model_a", "repeat_a", "dimension", "score"]


def _scored(rows: list[tuple[str, int, str, str, float]]) -> pd.DataFrame:
    """(sample, item, reviewer, dimension, norm) per rating row; the rest fixed or derived."""
    frame = pd.DataFrame(rows, columns=["sample_id", "item_id", "reviewer", "dimension", "norm"])
    return frame.assign(
        scenario="qa",
        occurrence=0,
        model_a=[f"m{i % 2}" for i in frame["item_id"]],
        repeat_a=0,
        position=range(len(frame)),
        swapped=False,
        is_gold=False,
        score=frame["norm"] * 4 + 1,
        value="x",
    ).astype({"sample_id": object, "reviewer": object, "dimension": object})


def _rows(frame: pd.DataFrame) -> list[tuple[object, ...]]:
    return sorted(map(tuple, frame[COLUMNS].itertuples(index=False)))


def test_one_dimension_per_rating_gives_the_reports_rows_in_its_order() -> None:
    scored = _scored([("s1", 1, "ana", "c", 0.25), ("s1", 1, "ben", "c", 0.5), ("s2", 2, "ana", "c", 1.0)])
    got, want = _overall(scored), overall_rows(scored)
    assert (got["dimension"] == OVERALL).all() and got["score"].tolist() == [0.25, 0.5, 1.0]
    assert list(map(tuple, got[COLUMNS].itertuples(index=False))) == list(
        map(tuple, want[COLUMNS].itertuples(index=False))
    )


def test_a_rating_with_two_dimensions_is_averaged_as_the_report_does() -> None:
    # ana rated item 1 on two dimensions, ben on one: ana's overall is the mean of her two.
    scored = _scored(
        [
            ("s1", 1, "ana", "c", 0.25),
            ("s1", 1, "ana", "d", 0.75),
            ("s1", 1, "ben", "c", 0.5),
            ("s2", 2, "ana", "c", 1.0),
        ]
    )
    got = _overall(scored)
    assert _rows(got) == _rows(overall_rows(scored))
    assert sorted(got["score"]) == [0.5, 0.5, 1.0]


def test_a_rating_without_a_numeric_score_is_left_out() -> None:
    scored = _scored([("s1", 1, "ana", "c", 0.25), ("s1", 1, "ben", "c", float("nan"))])
    assert _rows(_overall(scored)) == _rows(overall_rows(scored)) and len(_overall(scored)) == 1
